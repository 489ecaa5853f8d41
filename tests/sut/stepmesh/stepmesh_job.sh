#!/usr/bin/env bash
# A StepMesh job in one command: its scheduler, server and worker (the push/pull program of
# this folder) over the RDMA van, as `faultline port-check` and `faultline sut sweep` run a
# program. When one rank ends the others are stopped (they would otherwise wait in StepMesh's
# barrier forever): the job exits with the first failing rank's status, or 0.
# Usage: stepmesh_job.sh PROGRAM ADDRESS NETDEV PORT [WORKER OPTIONS...]
#   PROGRAM  build/tests/sut/stepmesh/sut_stepmesh_default (or _gdr)
#   ADDRESS  the RDMA device's IPv4 address (rdma_cm binds to it); NETDEV its interface
set -u
if [[ $# -lt 4 ]]; then
  echo "usage: $0 PROGRAM ADDRESS NETDEV PORT [WORKER OPTIONS...]" >&2
  exit 2
fi
program=$1 address=$2 netdev=$3 port=$4
shift 4
export DMLC_NUM_WORKER=1 DMLC_NUM_SERVER=1 DMLC_PS_ROOT_URI="$address" \
  DMLC_PS_ROOT_PORT="$port" DMLC_NODE_HOST="$address" DMLC_INTERFACE="$netdev" \
  DMLC_ENABLE_RDMA=ibverbs STEPMESH_GPU=0 STEPMESH_BAKCEND=CPU STEPAF_BUSY_POLL_ENABLE=0
declare -A role_of
DMLC_ROLE=scheduler "$program" &
role_of[$!]=scheduler
DMLC_ROLE=server "$program" &
role_of[$!]=server
DMLC_ROLE=worker "$program" "$@" &
role_of[$!]=worker
stop_the_rest() {
  local pid
  for pid in "${!role_of[@]}"; do kill "$pid" 2>/dev/null; done
}
trap 'stop_the_rest; exit 143' TERM INT
status=0
while [[ ${#role_of[@]} -gt 0 ]]; do
  ended=""
  wait -n -p ended
  code=$?
  [[ -n "$ended" ]] || break
  echo "stepmesh job: the ${role_of[$ended]} ended with status $code" >&2
  unset "role_of[$ended]"
  if [[ $code -ne 0 ]]; then
    [[ $status -ne 0 ]] || status=$code
    stop_the_rest
  fi
done
exit "$status"
