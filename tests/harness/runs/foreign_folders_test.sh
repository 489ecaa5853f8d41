#!/usr/bin/env bash
# A second, unprivileged user (uid 65534) plants folders and links where a root faultline would
# write: a report folder of theirs holding .faultline.lock and SCEN/ROLE/sut-exec.log as links
# to a root-owned file. Every command refuses the folder, naming its owner, and the file keeps
# its content. Then an agent's program folder: made with mkdtemp, mode 0700, its name unknown
# in advance. Files named on the command line (--port-file, -o, --save-profile) that are their
# links or files, FIFOs or devices are refused. Last, that user holds the token and runs a coordinator whose SUT scenario runs a
# command of theirs: root agents run none of it.
# Usage: foreign_folders_test.sh BUILD_DIR SOURCE_DIR  (needs root and setpriv; else exits 77)
set -euo pipefail
build=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
B=$build/faultline
if [[ $(id -u) -ne 0 ]] || ! command -v setpriv >/dev/null; then
  echo "SKIP: needs root and setpriv to act as a second user"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -m 1777 "$work/tmp"  # as /tmp is: anyone may create, only the owner may remove
victim=$work/victim
echo precious >"$victim"
as_other() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
fail() { echo "FAIL: $*"; exit 1; }

# A folder of theirs, for each command that writes a report folder.
plant() {
  as_other mkdir -p "$1/sut.s/r"
  as_other ln -s "$victim" "$1/.faultline.lock"
  as_other ln -s "$victim" "$1/sut.s/r/sut-exec.log"
}
expect_refused() {  # NAME EXIT OUTPUT
  [[ $2 -eq 2 ]] || fail "$1: exit $2, expected 2: $3"
  grep -q "uid 65534" <<<"$3" || fail "$1 did not name the folder's owner: $3"
  [[ $(cat "$victim") == precious ]] || fail "$1 wrote through a planted link"
  echo "ok: $1 refused the other user's folder"
}
cat >"$work/s.json" <<'JSON'
{"name": "sut.s", "expect": "pass", "roles": [{"name": "r", "command": ["true"]}]}
JSON
plant "$work/tmp/exec"
set +e
out=$("$B" sut exec --report-dir "$work/tmp/exec" -- true 2>&1); code=$?
expect_refused "sut exec" $code "$out"
plant "$work/tmp/sutrun"
out=$("$B" sut run "$work/s.json" --report-dir "$work/tmp/sutrun" 2>&1); code=$?
expect_refused "sut run" $code "$out"
plant "$work/tmp/run"
out=$("$B" run pingpong --report-dir "$work/tmp/run" 2>&1); code=$?
expect_refused "run" $code "$out"

# Files a user names (--port-file, -o, --save-profile): a link of theirs in the sticky folder,
# a file of theirs there, a FIFO and a device are refused before anything runs, never
# followed or replaced by a regular file.
as_other ln -s "$victim" "$work/tmp/link"
as_other touch "$work/tmp/theirs"
mkfifo "$work/fifo"
expect_untouched() {  # NAME EXIT OUTPUT WHAT
  [[ $2 -eq 2 ]] || fail "$1: exit $2, expected 2: $3"
  grep -q "$4" <<<"$3" || fail "$1 did not say '$4': $3"
  [[ $(cat "$victim") == precious && -L $work/tmp/link && -p $work/fifo && -c /dev/null ]] ||
    fail "$1 wrote through or replaced what was there"
  [[ ! -s $work/tmp/theirs ]] || fail "$1 wrote the other user's file"
  echo "ok: $1 refused ($4)"
}
for target in link theirs; do
  what="symbolic link"; [[ $target == theirs ]] && what="belongs to uid 65534"
  out=$(FAULTLINE_TOKEN=t timeout 20 "$B" coordinator --listen 127.0.0.1:0 --agents 2 \
    --port-file "$work/tmp/$target" --report-dir "$work/c" pingpong 2>&1); code=$?
  expect_untouched "coordinator --port-file $target" $code "$out" "$what"
  out=$(FAULTLINE_TOKEN=t timeout 20 "$B" monitor --listen 127.0.0.1:0 \
    --port-file "$work/tmp/$target" --report-dir "$work/m" 2>&1); code=$?
  expect_untouched "monitor --port-file $target" $code "$out" "$what"
done
for target in "$work/tmp/link" "$work/fifo" /dev/null; do
  out=$("$B" report --format md -o "$target" "$work/none.json" 2>&1); code=$?
  expect_untouched "report -o $target" $code "$out" "faultline writes only regular files"
  out=$("$B" devices --transport ofi --provider shm --save-profile "$target" 2>&1); code=$?
  expect_untouched "devices --save-profile $target" $code "$out" "faultline writes only regular files"
done
set -e

# An agent's folder for its programs: private, under a name no one could take ahead of it.
port_file=$work/port
mkdir -p "$work/sut" && cp "$work/s.json" "$work/sut/"
TMPDIR=$work/tmp FAULTLINE_TOKEN=t "$B" coordinator --listen 127.0.0.1:0 --agents 2 --suite sut \
  --scenario-dir "$work" --port-file "$port_file" --report-dir "$work/report" \
  >"$work/coordinator.log" 2>&1 &
coordinator=$!
for _ in $(seq 100); do [[ -s $port_file ]] && break; sleep 0.1; done
for _ in 1 2; do
  TMPDIR=$work/tmp FAULTLINE_TOKEN=t "$B" agent --coordinator "127.0.0.1:$(cat "$port_file")" \
    --sut-scenarios "$work/sut" >/dev/null 2>&1 &
done
wait $coordinator || fail "the coordinator failed: $(cat "$work/coordinator.log")"
folders=$(find "$work/tmp" -maxdepth 1 -name 'faultline-agent-*')
[[ -n $folders ]] || fail "the agent made no folder for its program"
for folder in $folders; do
  [[ $(stat -c '%a %u' "$folder") == "700 0" ]] || fail "$folder is $(stat -c '%a %u' "$folder")"
  [[ ! $folder =~ faultline-agent-[0-9]+$ ]] || fail "$folder is named by a pid"
done
echo "ok: the agent's program folder is private ($folders)"

# A token holder of the other user runs a coordinator whose SUT scenario's command is theirs:
# a root agent runs only roles of its own scenarios, so the command never runs.
hostile=$work/hostile
mkdir -p "$hostile/sut" && chown -R 65534:65534 "$hostile"
cat >"$hostile/sut/s.json" <<JSON
{"name": "sut.s", "expect": "pass", "roles": [{"name": "r", "command": ["sh", "-c", "id > $work/owned"]}]}
JSON
chown 65534:65534 "$hostile/sut/s.json"
as_other env FAULTLINE_TOKEN=t "$B" coordinator --listen 127.0.0.1:0 --agents 2 --suite sut \
  --scenario-dir "$hostile" --port-file "$hostile/port" --report-dir "$hostile/report" \
  >"$work/hostile.log" 2>&1 &
coordinator=$!
for _ in $(seq 100); do [[ -s $hostile/port ]] && break; sleep 0.1; done
for _ in 1 2; do
  TMPDIR=$work/tmp FAULTLINE_TOKEN=t "$B" agent --coordinator "127.0.0.1:$(cat "$hostile/port")" \
    --sut-scenarios "$work/sut" >>"$work/hostile.log" 2>&1 &
done
wait $coordinator || true
[[ ! -e $work/owned ]] || fail "a root agent ran the other user's command: $(cat "$work/owned")"
grep -q "differs from the coordinator's" "$hostile/report/report.json" ||
  fail "the role did not fail naming the differing copy: $(cat "$work/hostile.log")"
echo "ok: a root agent did not run the command of another user's coordinator"
