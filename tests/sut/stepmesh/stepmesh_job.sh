#!/usr/bin/env bash
# A StepMesh job in one command: its scheduler, server and worker (the push/pull program of
# this folder) over the RDMA van, as `faultline port-check` and `faultline sut sweep` run a
# program. When one rank ends the others are stopped (they would otherwise wait in StepMesh's
# barrier forever): the job exits with the first failing rank's status, or 0.
# Usage: stepmesh_job.sh PROGRAM ADDRESS NETDEV PORT [WORKER OPTIONS...]
#   PROGRAM  build/tests/sut/stepmesh/sut_stepmesh_default (or _gdr)
#   ADDRESS  the RDMA device's IPv4 address (rdma_cm binds to it); NETDEV its interface
#   PORT     the scheduler's TCP port; 0: a free one (jobs side by side, `sut sweep --jobs 2`)
set -u
if [[ $# -lt 4 ]]; then
  echo "usage: $0 PROGRAM ADDRESS NETDEV PORT [WORKER OPTIONS...]" >&2
  exit 2
fi
program=$1 address=$2 netdev=$3 port=$4
shift 4
if [[ $port == 0 ]]; then
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
fi
export DMLC_NUM_WORKER=1 DMLC_NUM_SERVER=1 DMLC_PS_ROOT_URI="$address" \
  DMLC_PS_ROOT_PORT="$port" DMLC_NODE_HOST="$address" DMLC_INTERFACE="$netdev" \
  DMLC_ENABLE_RDMA=ibverbs STEPMESH_GPU=0 STEPMESH_BAKCEND=CPU STEPAF_BUSY_POLL_ENABLE=0
declare -A role_of
DMLC_ROLE=scheduler "$program" &
role_of[$!]=scheduler
DMLC_ROLE=server "$program" &
role_of[$!]=server
DMLC_ROLE=worker "$program" "$@" &
worker=$!
role_of[$worker]=worker
# After `grace` seconds, SIGTERM, then SIGKILL to any rank still there 2 s later (StepMesh's
# threads keep a rank waiting in its barrier past SIGTERM).
stopping=0
stop_the_rest() {
  local grace=${1:-0} pids=("${!role_of[@]}")
  stopping=1
  (
    sleep "$grace"
    kill "${pids[@]}" 2>/dev/null
    sleep 2
    kill -KILL "${pids[@]}" 2>/dev/null
  ) &
}
trap 'stop_the_rest; wait; exit 143' TERM INT
status=0
while [[ ${#role_of[@]} -gt 0 ]]; do
  ended=""
  wait -n -p ended "${!role_of[@]}"  # the ranks only, not a stopper below
  code=$?
  [[ -n "$ended" ]] || break
  echo "stepmesh job: the ${role_of[$ended]} ended with status $code" >&2
  unset "role_of[$ended]"
  # A rank this job stopped (SIGTERM, SIGKILL) did not fail.
  if [[ $stopping -eq 1 && ($code -eq 143 || $code -eq 137) ]]; then
    continue
  elif [[ $code -ne 0 ]]; then
    [[ $status -ne 0 ]] || status=$code
    stop_the_rest
  elif [[ $ended == "$worker" ]]; then
    stop_the_rest 10  # the worker is done: the others' Finalize returns within seconds
  fi
done
exit "$status"
