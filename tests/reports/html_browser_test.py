#!/usr/bin/env python3
"""The HTML report in a real browser: headless Chromium (Debian's `chromium`).

A 90-run report is made from a real run (`faultline run` of pingpong, a scenario that fails
and one that skips over tcp) the way a bad day looks: 1 failure, 49 agents lost, 2 skips, 1 xfail, 37 passes over 5
named agents. `faultline report --format html` renders it (reading it against the schema);
Chromium loads the file and dumps its DOM, which must show the failure as the table's first
row, the 49 errors as one row that opens to list them, skips and xfails before the passes,
a 5 x 5 pair grid, and a details section for every link. Chromium's screenshot of the first
screen (1280 x 900) must hold the failure's row (its background colour), and is kept.

Usage: html_browser_test.py FAULTLINE TEST_SCENARIO_DIR OUT_DIR  (exit 77 without chromium)
"""
import copy
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

faultline, scenario_dir, out_dir = sys.argv[1:4]
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if browser is None:
    print("SKIP: no chromium (ci/setup installs Debian's chromium)")
    sys.exit(77)
try:
    from PIL import Image
except ImportError:
    print("SKIP: no PIL (ci/setup installs python3-pil)")
    sys.exit(77)

work = tempfile.mkdtemp()
real_run = subprocess.run(
    [faultline, "run", "pingpong", os.path.join(scenario_dir, "wrong-expectation.json"),
     os.path.join(scenario_dir, "verbs-only.json"), "--seed", "1", "--report-dir",
     os.path.join(work, "real")], capture_output=True, text=True, timeout=120)
assert real_run.returncode == 1, real_run.stdout + real_run.stderr  # the one failure
baseline = json.load(open(os.path.join(work, "real", "report.json")))
by_verdict = {s["verdict"]: s for s in baseline["scenarios"]}
names = ["rack1-a", "rack1-b", "rack2-a", "rack2-b", "rack3-a"]
agent = baseline["run"]["agents"][0]
report = copy.deepcopy(baseline)
report["run"]["agents"] = []
for i, name in enumerate(names):
    record = copy.deepcopy(agent)
    record.update({"id": f"agent-{i + 1}", "name": name, "host": f"node{i + 1}", "pid": 100 + i})
    record["devices"] = []
    report["run"]["agents"].append(record)
pairs = [(a, b) for a in range(5) for b in range(a + 1, 5)]
plan = ["pass"] * 30 + ["error"] * 49 + ["skip", "skip", "xfail"] + ["pass"] * 7
plan.insert(80, "fail")  # the one real failure, row 81 in run order
runs = []
for run_id, verdict in enumerate(plan, start=1):
    source = by_verdict.get(verdict, by_verdict["pass"])
    run = copy.deepcopy(source)
    a, b = pairs[run_id % len(pairs)]
    ids = [f"agent-{a + 1}", f"agent-{b + 1}"]
    run["run_id"] = run_id
    run["agents"] = {"initiator": ids[0], "responder": ids[1], "ranks": ids,
                     "targets": ["ofi/tcp eth0", "ofi/tcp eth0"]}
    run["sides"] = {ids[i]: side for i, side in enumerate(source["sides"].values())}
    if verdict == "error":
        run.update({"verdict": "error", "expected": "every side passes",
                    "observed": f"agent lost: {ids[1]} was lost earlier",
                    "evidence": "no heartbeat for 5000 ms",
                    "hint": "the agent process died or its host stopped answering"})
    if verdict == "xfail":
        run.update({"verdict": "xfail", "evidence": "known failure (fail), excluded: known"})
    runs.append(run)
report["scenarios"] = runs
report["summary"] = {"total": len(runs), "finished": len(runs),
                     "verdicts": {v: plan.count(v) for v in set(plan)}}

try:
    report_path = os.path.join(work, "report.json")
    json.dump(report, open(report_path, "w"))
    page = os.path.join(work, "report.html")
    subprocess.run([faultline, "report", "--format", "html", "-o", page, report_path], check=True)
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
              f"--user-data-dir={work}/profile", "--hide-scrollbars"]
    dom = subprocess.run(common + ["--dump-dom", "file://" + page], capture_output=True,
                         text=True, timeout=120, check=True).stdout

    class Reader(html.parser.HTMLParser):
        """The runs table's rows (class, first cell text, verdict), the grid, ids and links."""

        def __init__(self):
            super().__init__()
            self.rows, self.ids, self.links, self.grid_cells, self.grid_rows = [], set(), [], [], 0
            self.table, self.row, self.text = None, None, ""

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if "id" in attrs:
                self.ids.add(attrs["id"])
            if tag == "a" and attrs.get("href", "").startswith("#"):
                self.links.append(attrs["href"][1:])
            if tag == "table":
                self.table = attrs.get("class")
            if tag == "tr" and self.table == "runs":
                self.row = {"class": attrs.get("class", ""), "text": ""}
            if tag == "tr" and self.table == "grid":
                self.grid_rows += 1
            if tag == "td" and self.table == "grid" and "cell" in attrs.get("class", ""):
                self.grid_cells.append((attrs["class"], attrs.get("title", "")))

        def handle_endtag(self, tag):
            if tag == "tr" and self.row is not None:
                self.rows.append(self.row)
                self.row = None
            if tag == "table":
                self.table = None

        def handle_data(self, data):
            if self.row is not None:
                self.row["text"] += data

    reader = Reader()
    reader.feed(dom)
    rows = [r for r in reader.rows if "scenario" not in r["text"][:10]]  # not the header
    print("rows in the runs table:", len(rows))
    print("first rows:", [r["text"][:60] for r in rows[:4]])
    assert rows[0]["class"] == "failure" and "test.wrong-expectation" in rows[0]["text"], rows[0]
    assert "49 errors" in rows[1]["text"] and "agent lost: AGENT was lost earlier" in rows[1]["text"], rows[1]
    kinds = [("skip" if "skip" in r["text"] else "xfail" if "xfail" in r["text"] else "pass")
             for r in rows[2:]]
    first_pass = kinds.index("pass")
    assert set(kinds[:first_pass]) == {"skip", "xfail"} and first_pass == 3, kinds[:6]
    assert set(kinds[first_pass:]) == {"pass"}, kinds
    assert len(rows) == 2 + 3 + 37, len(rows)
    assert reader.grid_rows == 6 and len(reader.grid_cells) == 20, (reader.grid_rows, len(reader.grid_cells))
    assert any("fail" in cls for cls, _ in reader.grid_cells)
    assert all("run(s):" in title for _, title in reader.grid_cells)
    missing = [link for link in reader.links if link not in reader.ids]
    assert not missing, missing[:5]
    assert sum(1 for link in reader.links if link.startswith("run-")) == 90
    print("DOM: failure first, 49 errors in one row, skips and xfail before passes, 5 x 5 grid,"
          " every link has its target")

    os.makedirs(out_dir, exist_ok=True)
    shot = os.path.join(out_dir, "html-report.png")
    subprocess.run(common + ["--window-size=1280,900", f"--screenshot={shot}", "file://" + page],
                   capture_output=True, timeout=120, check=True)
    image = Image.open(shot).convert("RGB")
    width, height = image.size
    failure_pixels = sum(1 for x in range(0, width, 4) for y in range(0, height, 2)
                         if image.getpixel((x, y)) == (0xff, 0xeb, 0xe9))
    print(f"screenshot {shot}: {width} x {height}, {failure_pixels} sampled pixels of the failure row")
    assert (width, height) == (1280, 900), (width, height)
    assert failure_pixels > 200, "the failure's row is not on the first screen"
    shutil.copy(page, os.path.join(out_dir, "html-report.html"))
    print("PASS")
finally:
    shutil.rmtree(work, ignore_errors=True)
