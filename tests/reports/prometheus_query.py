"""Asks a Prometheus server's HTTP API (/api/v1/query) for an instant query and prints the
result as JSON: a list of {"metric": {labels}, "value": float}."""
import json
import sys
import urllib.parse
import urllib.request

base, query = sys.argv[1], sys.argv[2]
url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": query})
with urllib.request.urlopen(url, timeout=5) as response:
    answer = json.load(response)
if answer.get("status") != "success":
    sys.exit("query failed: " + json.dumps(answer))
print(json.dumps([{"metric": r["metric"], "value": float(r["value"][1])}
                  for r in answer["data"]["result"]]))
