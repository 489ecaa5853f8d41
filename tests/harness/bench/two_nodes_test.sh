#!/usr/bin/env bash
# bench pingpong across two nodes: two network namespaces joined by a veth pair (made here,
# removed on exit) with link-local addresses. `--server` in one, `--client ADDRESS -s 64 -n
# 1000` in the other, neither told its device: each takes the one toward the other, and the
# client prints the row. A client pointed at a port nobody serves is told what to start.
# Usage: two_nodes_test.sh BUILD_DIR  (needs root and iproute2; else exits 77)
set -euo pipefail
faultline=$(cd "$1" && pwd)/faultline
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 (ip netns) to make two nodes"
  exit 77
fi
tag=flbn$$
work=$(mktemp -d)
cleanup() {
  for side in a b; do
    ip netns pids "$tag-$side" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$tag-$side" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
ip netns add "$tag-a"
ip netns add "$tag-b"
ip link add "v$tag" type veth peer name eth0 netns "$tag-b"
ip link set "v$tag" netns "$tag-a"
ip -n "$tag-a" link set "v$tag" name eth0
for side in a b; do
  number=$([[ $side == a ]] && echo 1 || echo 2)
  ip -n "$tag-$side" addr add "169.254.80.$number/24" dev eth0
  ip -n "$tag-$side" link set eth0 up
  ip -n "$tag-$side" link set lo up
done

ip netns exec "$tag-a" "$faultline" bench pingpong --server -p 18515 --server-wait 60 \
  >"$work/server.out" 2>"$work/server.err" &
server=$!
for _ in $(seq 1 50); do
  grep -q "waiting for one client" "$work/server.out" 2>/dev/null && break
  sleep 0.1
done
status=0
ip netns exec "$tag-b" "$faultline" bench pingpong --client 169.254.80.1 -p 18515 -s 64 -n 1000 \
  >"$work/client.out" 2>"$work/client.err" || status=$?
server_status=0
wait "$server" || server_status=$?
cat "$work/client.out" "$work/client.err" "$work/server.out" "$work/server.err"
[[ $status -eq 0 && $server_status -eq 0 ]] || { echo "FAIL: client exit $status, server exit $server_status"; exit 1; }
grep -q "responder on 169.254.80.1" "$work/client.out" || { echo "FAIL: no server named"; exit 1; }
row=$(awk '$1 == 64 && $2 == 1000' "$work/client.out")
[[ -n $row ]] || { echo "FAIL: no row for 64 B x 1000"; exit 1; }
grep -q "served 1 size(s) x 1100 round trips on ofi/tcp eth0" "$work/server.out" ||
  { echo "FAIL: the server did not use eth0, the device toward its client"; exit 1; }

# Nobody serving: the client says what to start, and exits 3.
status=0
ip netns exec "$tag-b" "$faultline" bench pingpong --client 169.254.80.1 -p 18516 -s 64 \
  >"$work/lonely.out" 2>&1 || status=$?
cat "$work/lonely.out"
[[ $status -eq 3 ]] || { echo "FAIL: a client without a server exited $status, not 3"; exit 1; }
grep -q "bench pingpong --server -p 18516" "$work/lonely.out" || { echo "FAIL: no hint"; exit 1; }
echo "PASS"
