#!/usr/bin/env python3
"""A client/server sweep as the lane ran it: the client swept, its server another role.

`sut.rping.client-sweep` sweeps rping's client against a persistent rping server (rping -s -P)
started once as its own role. This checks, in the `sut run` report, that the scenario passed
(every point detected or masked), that the client detected at least one fault (not merely
masked every one), that the server was running until the sweep ended and was then stopped,
and that no rping server is left.

Usage: rping_client_sweep_check.py REPORT_DIR   (the `sut run` report folder)
"""
import json
import os
import re
import subprocess
import sys

SCENARIO = "sut.rping.client-sweep"


def main():
    with open(os.path.join(sys.argv[1], "report.json"), encoding="utf-8") as report:
        scenarios = json.load(report)["scenarios"]
    found = [s for s in scenarios if s["id"] == SCENARIO]
    if not found:
        print(f"{SCENARIO}: not in the report")
        return 1
    scenario = found[0]
    roles = scenario["sut"]["roles"]
    client, server = roles["client"], roles["server"]
    problems = []
    if scenario["verdict"] != "pass":
        problems.append(f"verdict {scenario['verdict']}: {scenario.get('observed', '')}")
    detected = re.search(r"detected (\d+)", client.get("evidence", ""))
    if not detected or int(detected.group(1)) == 0:
        problems.append(f"the client detected no fault: {client.get('evidence', '')}")
    # A peer still running when the judged role ended is stopped after the grace: a hang
    # with its stacks, "still running when it was stopped".
    if "when it was stopped" not in server.get("evidence", ""):
        problems.append(f"the server was not stopped after the sweep: {server.get('evidence', '')}")
    left = subprocess.run(["pgrep", "-af", "rping -s -P"], capture_output=True, text=True).stdout
    left = [line for line in left.splitlines() if "pgrep" not in line]
    if left:
        problems.append(f"rping servers left running: {left}")
    print(f"{SCENARIO}: client {client.get('evidence', '')}; server {server['verdict']}")
    for problem in problems:
        print(f"{SCENARIO}: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
