#!/usr/bin/env python3
"""The dashboard's hardware-counter panels over real port counters: each faultline_infiniband_*
sample of a /metrics exposition (scraped from a run on an RDMA device) becomes a series that
reads 0, then its value a minute later, and `promtool test rules` evaluates every panel
expression that names such a metric at that minute: it must answer exactly when every metric
it names grew. Prints how many expressions answered.

Usage: dashboard_promtool.py EXPOSITION DASHBOARD"""
import json
import os
import re
import subprocess
import sys
import tempfile

exposition_path, dashboard_path = sys.argv[1:3]
sample = re.compile(r'^(faultline_infiniband_[a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$')
series, grown = [], set()
for line in open(exposition_path):
    match = sample.match(line.strip())
    if not match:
        continue
    name, labels, value = match.group(1), match.group(2) or "{}", float(match.group(3))
    series.append({"series": name + labels, "values": f"0 {value:g}"})
    if value > 0:
        grown.add(name)
if not grown:
    sys.exit("no faultline_infiniband_ counter grew in " + exposition_path)

tests, expected_answers = [], 0
for panel in json.load(open(dashboard_path))["panels"]:
    for target in panel["targets"]:
        expr = target["expr"]
        names = set(re.findall(r"faultline_infiniband_[a-z_]+", expr))
        if not names:
            continue
        expr = (expr.replace("$instance", ".*").replace("$__rate_interval", "2m")
                .replace("$__range", "2m"))
        answers = names <= grown
        expected_answers += answers
        tests.append({"expr": f"clamp_max(count({expr}), 1)", "eval_time": "1m",
                      "exp_samples": [{"labels": "{}", "value": 1}] if answers else []})
if expected_answers < 2:
    sys.exit(f"only {expected_answers} hardware panel expressions can answer: grown {grown}")
with tempfile.TemporaryDirectory() as work:
    path = os.path.join(work, "panels_test.yml")
    with open(path, "w") as out:  # JSON is YAML
        json.dump({"evaluation_interval": "1m", "tests": [
            {"interval": "1m", "input_series": series, "promql_expr_test": tests}]}, out)
    result = subprocess.run(["promtool", "test", "rules", path], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(result.stdout + result.stderr)
print(f"ok: {expected_answers} of {len(tests)} hardware panel expressions answered")
