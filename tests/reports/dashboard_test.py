#!/usr/bin/env python3
"""The Grafana dashboard over real pushed runs: a real Pushgateway and a real Prometheus
(Debian's) on 127.0.0.1, and four real `faultline run --pushgateway` runs of one group: one
that passes, then three that fail (the third loses an agent, killed mid-scenario). Every
expression of every dashboard panel is asked of Prometheus over the runs' time (a range
query, as Grafana asks it, the dashboard's variables at "All") and must answer a non-zero
value; some must answer exactly what the runs did. What was pushed passes promtool's lint.
The hardware-counter panels need an RDMA device: the Soft-RoCE lane evaluates them
(dashboard_promtool.py); the fabric panels need a monitor (harness/monitor/monitor_test.py). Grafana itself is not in Debian: tests/reports/grafana_dashboard_test.py checks the
structure its import requires.

Usage: dashboard_test.py FAULTLINE TEST_SCENARIO_DIR DASHBOARD"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

faultline, scenario_dir, dashboard_path = sys.argv[1:4]
for tool in ("prometheus", "prometheus-pushgateway", "promtool"):
    if shutil.which(tool) is None:
        sys.exit(f"{tool} is missing (ci/setup installs prometheus and prometheus-pushgateway)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.3)
    sys.exit(f"{what} did not come up within {seconds} s")


def get(url):
    with urllib.request.urlopen(url, timeout=5) as answer:
        return answer.read().decode()


work = tempfile.mkdtemp()
children = []
try:
    gateway = f"127.0.0.1:{free_port()}"
    # In memory only: Debian's gateway persists to /var/lib/prometheus/pushgateway.data by
    # default, and started with the counters the last gateway (any test's) held.
    children.append(subprocess.Popen(["prometheus-pushgateway", "--persistence.file=",
                                      f"--web.listen-address={gateway}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    wait_for("the Pushgateway", lambda: get(f"http://{gateway}/-/ready") is not None)
    server = f"127.0.0.1:{free_port()}"
    with open(os.path.join(work, "prometheus.yml"), "w") as config:
        config.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                     "scrape_configs:\n  - job_name: pushgateway\n    honor_labels: true\n"
                     f"    static_configs:\n      - targets: ['{gateway}']\n")
    children.append(subprocess.Popen(
        ["prometheus", f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={work}/data",
         f"--web.listen-address={server}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    wait_for("Prometheus", lambda: get(f"http://{server}/-/ready") is not None)
    started = time.time()

    def run(arguments, expect, environment=None, kill_agent=False):
        report_dir = os.path.join(work, f"report-{len(arguments)}-{time.time()}")
        command = [faultline, "run", "--pushgateway", f"http://{gateway}", "--report-dir",
                   report_dir] + arguments
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=dict(os.environ, **(environment or {})))
        if kill_agent:
            # The coordinator names each agent's pid as it joins; one dies mid-scenario.
            seen = ""
            while "agent-2 joined" not in seen:
                line = process.stderr.readline()
                if not line:
                    break
                seen += line
            pid = re.search(r"agent-2 joined from .* pid (\d+)", seen)
            assert pid, seen
            # In the first scenario (a 10 s sleep) once the run has begun (its report is
            # written as it begins), not a fixed time after the join.
            wait_for("the run", lambda: os.path.exists(os.path.join(report_dir, "report.json")))
            os.kill(int(pid.group(1)), signal.SIGKILL)
        out, err = process.communicate(timeout=120)
        assert process.returncode == expect, (command, process.returncode, out, err)
        time.sleep(2)  # two scrapes of what it pushed last

    scenarios = os.path.join(scenario_dir, "wrong-expectation.json")
    run(["inline.workload-inline-on"], 0)
    run([scenarios, "completion-error.write-every-status"], 1)
    run([scenarios, "completion-error.write-every-status"], 1)
    run(["test.sleep", scenarios], 3, {"FAULTLINE_ENABLE_TEST_SCENARIOS": "1"}, kill_agent=True)
    time.sleep(2)
    window = f"{int(time.time() - started) + 60}s"

    def query_range(expr):
        arguments = urllib.parse.urlencode({"query": expr, "start": started - 5,
                                            "end": time.time(), "step": "1"})
        answer = json.loads(get(f"http://{server}/api/v1/query_range?{arguments}"))
        assert answer["status"] == "success", answer
        return answer["data"]["result"]

    def instant(expr):
        arguments = urllib.parse.urlencode({"query": expr})
        answer = json.loads(get(f"http://{server}/api/v1/query?{arguments}"))
        assert answer["status"] == "success", answer
        return {json.dumps(r["metric"], sort_keys=True): float(r["value"][1])
                for r in answer["data"]["result"]}

    def as_grafana_asks(expr):
        # The variables at "All"; $__range the runs' time; $__rate_interval four scrapes.
        return (expr.replace("$suite", ".*").replace("$instance", ".*")
                .replace("$__rate_interval", "4s").replace("$__range", window))

    dashboard = json.load(open(dashboard_path))
    hardware = "faultline_infiniband_"  # port counters: only where an RDMA device is
    problems, checked = [], 0
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            expr = as_grafana_asks(target["expr"])
            series = query_range(expr)
            values = [float(v) for s in series for _, v in s["values"] if v not in ("NaN",)]
            if hardware in expr:
                # No RDMA device on this host: the Soft-RoCE lane's port-counter test covers
                # these; here they must still be valid PromQL that Prometheus answers.
                continue
            if "faultline_monitor_" in expr or "faultline_suspect" in expr:
                continue  # the monitor's panels: tests/harness/monitor/monitor_test.py
            checked += 1
            if not any(v != 0 for v in values):
                problems.append(f"{panel['title']} {target['refId']}: {expr} answered "
                                f"{len(series)} series, none non-zero")
    assert not problems, "\n".join(problems)
    assert checked >= 15, checked

    # What the runs did, exactly: counters continued across four processes.
    group = 'job="faultline",suite="selection"'
    failed = instant(f'sum(faultline_scenarios_total{{{group},verdict="fail"}})')
    assert list(failed.values()) == [2.0], failed
    errors = instant(f'sum(faultline_scenarios_total{{{group},verdict="error"}})')
    assert list(errors.values()) == [2.0], errors  # the sleep, and the next without its agent
    passed = instant(f'sum(faultline_scenarios_total{{{group},verdict="pass"}})')
    assert list(passed.values()) == [3.0], passed  # 1 + write-every-status twice
    lost = instant(f'sum(faultline_agents_lost_total{{{group}}})')
    assert list(lost.values()) == [1.0], lost
    up = instant(f'sum(faultline_agent_up{{{group}}})')
    assert list(up.values()) == [0.0], up  # cleared at the end of the last run
    # increase() sees the first failure: its series was pushed at 0 before it counted.
    first = instant(f'sum(increase(faultline_scenarios_total{{{group},verdict="fail",'
                    f'scenario="test.wrong-expectation"}}[{window}]))')
    assert first and list(first.values())[0] >= 1.5, first
    # The one passing run's time survives the three failing ones.
    success = instant(f'faultline_last_success_timestamp_seconds{{{group}}}')
    assert len(success) == 1 and started <= list(success.values())[0] <= time.time(), success
    # What faultline pushed passes promtool's lint (names, units, _total), no label empty.
    exposition = "\n".join(line for line in get(f"http://{gateway}/metrics").splitlines()
                           if "faultline_" in line) + "\n"
    lint = subprocess.run(["promtool", "check", "metrics"], input=exposition, text=True,
                          capture_output=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    empty = [line for line in exposition.splitlines() if '=""' in line]
    assert not empty, empty[:5]
    print(f"ok: {checked} dashboard expressions answered non-zero over 4 pushed runs")
finally:
    for child in children:
        child.kill()
        child.wait()
    shutil.rmtree(work, ignore_errors=True)
