#!/usr/bin/env python3
"""The live progress line on a real terminal (a tmux pane): a coordinator log line written to
stderr while a run's live line is shown starts a line of its own, and the live line comes back
below it, never run together with it.

Usage: live_line_test.py FAULTLINE. Exit 77 (skip) without tmux.
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

FAULTLINE = sys.argv[1]
if shutil.which("tmux") is None:
    print("SKIP: tmux is not installed")
    sys.exit(77)

work = tempfile.mkdtemp(prefix="faultline-live-")
server = f"faultline-live-{os.getpid()}"  # a tmux server of this test's own
port_file = os.path.join(work, "port")
env = dict(os.environ, FAULTLINE_ENABLE_TEST_SCENARIOS="1", FAULTLINE_TOKEN="right-token")


def tmux(*args):
    return subprocess.run(["tmux", "-L", server, *args], check=True, capture_output=True,
                          text=True).stdout


def pane():
    return tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "live")


agents = []
try:
    # The coordinator on the pane's terminal; its two agents and the intruder outside it.
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "live", "-x", "200", "-y", "50",
         "-e", "FAULTLINE_ENABLE_TEST_SCENARIOS=1", "-e", "FAULTLINE_TOKEN=right-token",
         f"{FAULTLINE} coordinator --listen 127.0.0.1:0 --port-file {port_file} --agents 2 "
         f"--report-dir {work}/report test.sleep; echo coordinator-exited-$?; sleep 60")
    deadline = time.time() + 20
    while not (os.path.exists(port_file) and open(port_file).read().strip()):
        assert time.time() < deadline, "the coordinator wrote no port file:\n" + pane()
        time.sleep(0.1)
    port = open(port_file).read().strip()
    for _ in range(2):
        agents.append(subprocess.Popen([FAULTLINE, "agent", "--coordinator", f"127.0.0.1:{port}"],
                                       env=env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL))
    # test.sleep sleeps 10 s: wait for its live line, then make the coordinator log.
    deadline = time.time() + 20
    while "test.sleep" not in pane() or "sleep 10000 ms" not in pane():
        assert time.time() < deadline, "no live line:\n" + pane()
        time.sleep(0.1)
    intruder = subprocess.run(
        [FAULTLINE, "agent", "--coordinator", f"127.0.0.1:{port}", "--connect-timeout", "5"],
        env=dict(env, FAULTLINE_TOKEN="an-intruder"), capture_output=True, text=True, timeout=30)
    assert intruder.returncode != 0, intruder.stderr
    time.sleep(0.5)
    during = pane()
    deadline = time.time() + 40
    while "coordinator-exited-" not in pane():
        assert time.time() < deadline, "the coordinator did not finish:\n" + pane()
        time.sleep(0.2)
    after = pane()
finally:
    subprocess.run(["tmux", "-L", server, "kill-server"], capture_output=True)
    for agent in agents:
        agent.kill()
        agent.wait()

print("--- the pane while the run went on\n" + during + "\n--- after\n" + after)
lines = during.splitlines()
logged = [i for i, line in enumerate(lines) if "authentication failed: wrong token" in line]
assert logged, "the intruder was not logged"
line = lines[logged[0]]
# The log line starts its own line: nothing of the live line before it.
assert line.startswith("faultline coordinator: closing connection from 127.0.0.1:"), line
# The live line is back below it, whole.
assert any("test.sleep" in below and "sleep 10000 ms" in below
           for below in lines[logged[0] + 1:]), "the live line did not come back:\n" + during
for text in (during, after):
    for line in text.splitlines():
        assert not ("[  1/1]" in line and "faultline coordinator" in line), line
assert "coordinator-exited-0" in after, after
print("PASS")
