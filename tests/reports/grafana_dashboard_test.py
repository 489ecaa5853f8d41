#!/usr/bin/env python3
"""The dashboard has the structure Grafana's import of a classic dashboard JSON requires
(Grafana is not in Debian, so none loads it here): uid, title, an integer schemaVersion,
an `__inputs` datasource the import asks for, templating with a Prometheus datasource
variable (defaulting to that input) that every panel and query variable uses,
panels with unique integer ids, a known type, a gridPos inside the 24 columns that overlaps
no other panel, targets with unique refIds and an expression, a unit on every panel, and no
$variable that is neither defined nor one of Grafana's own.

Usage: grafana_dashboard_test.py DASHBOARD"""
import json
import re
import sys

dashboard = json.load(open(sys.argv[1]))
problems = []


def need(condition, text):
    if not condition:
        problems.append(text)


need(isinstance(dashboard.get("uid"), str) and 0 < len(dashboard["uid"]) <= 40, "uid: 1-40 chars")
need(isinstance(dashboard.get("title"), str) and dashboard["title"], "title")
need(isinstance(dashboard.get("schemaVersion"), int) and dashboard["schemaVersion"] >= 36,
     "schemaVersion: an integer, 36 or later")
need(dashboard.get("id") is None, "id: null, so the import makes a new dashboard")
need(isinstance(dashboard.get("time"), dict) and {"from", "to"} <= dashboard["time"].keys(),
     "time: from and to")
variables = dashboard.get("templating", {}).get("list", [])
names = {v.get("name") for v in variables}
datasource = [v for v in variables if v.get("type") == "datasource"]
need(len(datasource) == 1 and datasource[0].get("query") == "prometheus",
     "templating: one datasource variable of type prometheus")
# The import asks for the data source (an __inputs entry) and the variable defaults to it.
inputs = [i for i in dashboard.get("__inputs", []) if i.get("type") == "datasource"]
need(len(inputs) == 1 and inputs[0].get("pluginId") == "prometheus",
     "__inputs: one prometheus datasource for the import to ask for")
need(bool(inputs) and bool(datasource) and datasource[0].get("current", {}).get("value") ==
     "${" + inputs[0].get("name", "") + "}", "the datasource variable defaults to the input")
source = "${" + datasource[0]["name"] + "}" if datasource else None
for variable in variables:
    if variable.get("type") != "query":
        continue
    need(variable.get("datasource", {}).get("uid") == source,
         f"variable {variable.get('name')}: datasource {source}")
    need(isinstance(variable.get("definition"), str) and variable["definition"],
         f"variable {variable.get('name')}: a definition")
builtins = {"__rate_interval", "__range", "__interval", "__range_s", "__interval_ms"}
known_types = {"timeseries", "bargauge", "stat", "table", "heatmap", "gauge", "text", "row",
               "state-timeline", "status-history"}
panels = dashboard.get("panels", [])
need(len(panels) >= 10, "at least 10 panels")
ids, cells = set(), {}
for panel in panels:
    title = panel.get("title", "?")
    need(isinstance(panel.get("id"), int) and panel["id"] not in ids, f"{title}: a unique id")
    ids.add(panel.get("id"))
    need(panel.get("type") in known_types, f"{title}: a panel type Grafana has")
    need(panel.get("datasource", {}).get("uid") == source, f"{title}: datasource {source}")
    need(panel.get("datasource", {}).get("type") == "prometheus", f"{title}: prometheus")
    need(bool(panel.get("fieldConfig", {}).get("defaults", {}).get("unit")), f"{title}: a unit")
    grid = panel.get("gridPos", {})
    need(all(isinstance(grid.get(k), int) for k in "xywh"), f"{title}: gridPos x y w h")
    if all(isinstance(grid.get(k), int) for k in "xywh"):
        need(grid["x"] >= 0 and grid["w"] > 0 and grid["x"] + grid["w"] <= 24,
             f"{title}: inside the 24 columns")
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                need((x, y) not in cells, f"{title}: overlaps {cells.get((x, y))}")
                cells[(x, y)] = title
    targets = panel.get("targets", [])
    need(targets, f"{title}: targets")
    refs = [t.get("refId") for t in targets]
    need(len(set(refs)) == len(refs) and all(refs), f"{title}: unique refIds")
    for target in targets:
        expr = target.get("expr", "")
        need(expr, f"{title} {target.get('refId')}: an expression")
        for used in re.findall(r"\$\{?(\w+)", expr):
            need(used in names or used in builtins, f"{title}: ${used} is not defined")
        need(expr.count("(") == expr.count(")"), f"{title}: balanced parentheses")
if problems:
    sys.exit("\n".join(sorted(set(problems))))
print(f"ok: {len(panels)} panels, {len(variables)} variables")
