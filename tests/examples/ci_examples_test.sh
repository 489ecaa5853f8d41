#!/usr/bin/env bash
# The CI examples' own commands, run on a real report with failures: the jq program of
# examples/github-actions/faultline.yml must print one ::error annotation per run that did not
# pass (fail, error, timeout, crashed; not pass, xfail or skip), and the GitLab one the same as
# ERROR lines. Both files must be valid YAML with the job the README names.
# Usage: ci_examples_test.sh SOURCE_DIR REPORT_JSON
set -euo pipefail
source_dir=$1
report=$2
command -v jq >/dev/null || { echo "SKIP: no jq (ci/setup installs it)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

python3 - "$source_dir" <<'PY'
import sys, yaml
root = sys.argv[1]
github = yaml.safe_load(open(root + "/examples/github-actions/faultline.yml"))
steps = github["jobs"]["faultline"]["steps"]
assert any("GITHUB_STEP_SUMMARY" in step.get("run", "") for step in steps)
assert any(step.get("uses", "").startswith("actions/upload-artifact") for step in steps)
gitlab = yaml.safe_load(open(root + "/examples/gitlab-ci/.gitlab-ci.yml"))
assert gitlab["faultline"]["artifacts"]["reports"]["junit"] == "faultline-report/junit.xml"
print("YAML: both examples parse")
PY

# The jq program between the quotes after `jq -r` in each file.
extract() { python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
print(re.search(r"jq -r '(.*?)'", text, re.S).group(1))
PY
}
expected=$(jq '[.scenarios[] | select(.verdict as $v | ["fail","error","timeout","crashed"] | index($v))] | length' "$report")
[[ $expected -gt 0 ]] || fail "the report $report has no failing run to annotate"
github=$(jq -r "$(extract "$source_dir/examples/github-actions/faultline.yml")" "$report")
gitlab=$(jq -r "$(extract "$source_dir/examples/gitlab-ci/.gitlab-ci.yml")" "$report")
echo "$github"
[[ $(grep -c '^::error title=' <<<"$github") -eq $expected ]] || fail "expected $expected ::error lines"
[[ $(grep -c '^ERROR ' <<<"$gitlab") -eq $expected ]] || fail "expected $expected ERROR lines"
if jq -e '.scenarios[] | select(.verdict == "xfail" or .verdict == "skip")' "$report" >/dev/null; then
  ! grep -qE 'title=\S+ (xfail|skip)' <<<"$github" || fail "an xfail or skip was annotated as an error"
fi
echo "PASS: $expected annotations from each example"
