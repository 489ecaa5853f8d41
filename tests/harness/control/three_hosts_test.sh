#!/usr/bin/env bash
# Three simulated hosts: network namespaces on a bridge (made here, removed on exit), each with
# a link-local 169.254.77.x address and the name `head` for the first one. The README's "Plain
# SSH" commands run there literally: a coordinator and an agent on head, an agent on each other
# host, no --device anywhere. Passes when every pair passes and the report names each agent's
# own interface; then an agent forced onto `lo` must fail with both addresses and the hint.
# Usage: three_hosts_test.sh BUILD_DIR README  (needs root and iproute2; else exits 77)
set -euo pipefail
build=$(cd "$1" && pwd)
readme=$2
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 (ip netns) to make three hosts"
  exit 77
fi

tag=fl3h$$
hosts=(head node2 node3)
work=$(mktemp -d)
cleanup() {
  for h in "${hosts[@]}"; do
    ip netns pids "$tag-$h" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$tag-$h" 2>/dev/null || true
    rm -rf "/etc/netns/$tag-$h"
  done
  ip netns del "$tag-br" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The bridge lives in a namespace of its own: nothing is added to this machine's network.
ip netns add "$tag-br"
ip -n "$tag-br" link add br0 type bridge
ip -n "$tag-br" link set br0 up
for i in 0 1 2; do
  h=${hosts[$i]}
  ns=$tag-$h
  ip netns add "$ns"
  ip link add "v$tag$i" type veth peer name eth0 netns "$ns"
  ip link set "v$tag$i" netns "$tag-br"
  ip -n "$tag-br" link set "v$tag$i" master br0 up
  ip -n "$ns" addr add "169.254.77.$((i + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  # `ip netns exec` puts /etc/netns/NS/hosts over /etc/hosts: each host knows `head`.
  mkdir -p "/etc/netns/$ns"
  printf '127.0.0.1 localhost\n169.254.77.1 head\n169.254.77.%d %s\n' $((i + 1)) "$h" \
    >"/etc/netns/$ns/hosts"
done

# The README's commands, as written under "Plain SSH".
section=$(awk '/^### Plain SSH/{on=1; next} /^#/{if (on) exit} on' "$readme")
token_line=$(grep -m1 -- '> ~/.faultline-token' <<<"$section")
coordinator_line=$(grep -m1 '^faultline coordinator' <<<"$section")
agent_line=$(grep -m1 '^faultline agent' <<<"$section")
for line in "$token_line" "$coordinator_line" "$agent_line"; do
  [[ -n $line ]] || { echo "FAIL: README.md has no 'Plain SSH' commands to follow"; exit 1; }
done
echo "README: $token_line"
echo "README: $coordinator_line"
echo "README: $agent_line"

# Every host sees the same home (a shared file system), with faultline on the PATH.
export HOME=$work PATH=$build:$PATH
on() {  # on HOST COMMAND: run in that host's namespaces (network, and UTS for its host name)
  local h=$1
  mkdir -p "$work/$h"
  (cd "$work/$h" && ip netns exec "$tag-$h" unshare --uts bash -c "hostname $h; $2")
}
bash -c "$token_line"

started=$SECONDS
on head "$coordinator_line" >"$work/coordinator.log" 2>&1 &
coordinator=$!
sleep 0.5
pids=()
for h in "${hosts[@]}"; do
  on "$h" "$agent_line" >"$work/agent-$h.log" 2>&1 &
  pids+=($!)
done
status=0
wait "$coordinator" || status=$?
for pid in "${pids[@]}"; do wait "$pid" || true; done
echo "coordinator exited $status after $((SECONDS - started)) s"
cat "$work/coordinator.log"
report=$work/head/faultline-report/report.json
if [[ $status -ne 0 ]]; then
  for h in "${hosts[@]}"; do echo "--- agent on $h"; cat "$work/agent-$h.log"; done
  echo "FAIL: the README's commands did not pass on three hosts"
  exit 1
fi
python3 - "$report" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
run = report["run"]
names = sorted(agent["name"] for agent in run["agents"])
devices = sorted(agent["target"]["device"] for agent in run["agents"])
print("agents:", names, "devices:", devices, "target:", run["transport"], run["provider"], run["device"])
assert names == ["head", "node2", "node3"], names
assert devices == ["eth0", "eth0", "eth0"], devices  # the interface toward head, not lo
assert (run["transport"], run["provider"], run["device"]) == ("ofi", "tcp", "eth0")
passed = [s for s in report["scenarios"] if s["verdict"] == "pass"]
assert len(passed) == 3 == len(report["scenarios"]), [s["verdict"] for s in report["scenarios"]]
assert all(s["agents"]["targets"] == ["ofi/tcp eth0", "ofi/tcp eth0"] for s in passed)
PY
grep -q "Pairs" "$work/head/faultline-report/summary.md" || { echo "FAIL: no pair matrix"; exit 1; }
grep -q "| head | node2 | node3 |" "$work/head/faultline-report/summary.md" ||
  { echo "FAIL: the pair matrix does not name the hosts"; cat "$work/head/faultline-report/summary.md"; exit 1; }

# What a user who forces lo gets: the addresses tried and the hint, not just a timeout.
rm -rf "$work/head/faultline-report"
on head "${coordinator_line/--agents 3/--agents 2}" >"$work/coordinator-lo.log" 2>&1 &
coordinator=$!
sleep 0.5
on head "$agent_line --device lo" >"$work/agent-lo-head.log" 2>&1 &
on node2 "$agent_line --device lo" >"$work/agent-lo-node2.log" 2>&1 &
status=0
wait "$coordinator" || status=$?
wait || true
if [[ $status -eq 0 ]]; then
  echo "FAIL: a pair on lo across two hosts passed"
  exit 1
fi
python3 - "$report" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
scenario = report["scenarios"][0]
print("verdict:", scenario["verdict"], "| observed:", scenario["observed"], "| hint:", scenario["hint"])
assert scenario["verdict"] != "pass"
text = scenario["observed"] + scenario["evidence"]
assert "127.0.0.1:" in text and "on head (device lo)" in text and "on node2 (device lo)" in text, text
assert "--device" in scenario["hint"] and "loopback" in scenario["hint"], scenario["hint"]
PY
echo "PASS"
