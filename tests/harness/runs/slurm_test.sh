#!/usr/bin/env bash
# A real single-node Slurm (Debian's munged, slurmctld and slurmd, configured here in a
# temporary directory) inside a network namespace of its own, where the node `flnode` is
# 169.254.78.1; examples/slurm/faultline.sbatch submitted with sbatch for four tasks must end
# with a passing report of four agents. Everything is stopped and removed on exit.
# Usage: slurm_test.sh BUILD_DIR SOURCE_DIR  (root, Slurm and munge installed; else exits 77)
set -euo pipefail
build=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
if [[ $(id -u) -ne 0 ]]; then echo "SKIP: needs root to run slurmd"; exit 77; fi
for tool in ip nsenter unshare munged mungekey slurmctld slurmd sbatch sinfo scontrol; do
  command -v "$tool" >/dev/null || { echo "SKIP: no $tool (ci/setup installs Slurm and munge)"; exit 77; }
done

ns=flslurm$$
work=$(mktemp -d)
chmod 755 "$work"
cleanup() {
  ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
ip netns add "$ns"
ip -n "$ns" link set lo up
# A link-local address besides lo: Slurm's getaddrinfo(AI_ADDRCONFIG) finds nothing to bind
# on a host that has only loopback.
ip -n "$ns" link add eth0 type veth peer name eth1
ip -n "$ns" addr add 169.254.78.1/24 dev eth0
ip -n "$ns" link set eth0 up
ip -n "$ns" link set eth1 up
printf '127.0.0.1 localhost\n169.254.78.1 flnode\n' >"$work/hosts"

mkdir -p "$work/state" "$work/spool" "$work/munge" "$work/job" "$work/home"
chmod 711 "$work/munge"
mungekey --create --keyfile="$work/munge/munge.key" --force 2>/dev/null ||
  dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$work/munge/munge.key"
cat >"$work/slurm.conf" <<CONF
ClusterName=faultline-test
SlurmctldHost=flnode(169.254.78.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MpiParams=ports=12000-12099
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=flnode NodeAddr=169.254.78.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=flnode Default=YES MaxTime=60 State=UP OverSubscribe=YES
CONF
# slurmd sets up its cgroup plugin whatever the task and proctrack plugins: on a cgroup v2
# machine without a systemd to ask (or one that refuses), it makes its own directories.
printf 'IgnoreSystemdOnFailure=yes\n' >"$work/cgroup.conf"
export SLURM_CONF=$work/slurm.conf

# Everything below runs as host `flnode` in the network namespace, with its own /etc/hosts
# (a mount namespace of its own; `ip netns exec` would remount /sys and hide the cgroups).
cat >"$work/inside.sh" <<'INSIDE'
set -euo pipefail
hostname flnode
mount --bind "$WORK/hosts" /etc/hosts
munged --force --socket="$WORK/munge/munge.socket" --key-file="$WORK/munge/munge.key" \
  --pid-file="$WORK/munge/munged.pid" --log-file="$WORK/munge/munged.log" \
  --seed-file="$WORK/munge/munged.seed"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
  state=$(sinfo -h -N -o '%T' 2>/dev/null || true)
  [[ $state == idle* ]] && break
  sleep 1
done
echo "node state: ${state:-none}"
[[ $state == idle* ]] || { echo "FAIL: the Slurm node never became idle"; tail -n 20 "$WORK"/*.log; exit 1; }
cd "$WORK/job"
status=0
HOME=$WORK/home FAULTLINE_REPORT_DIR=$WORK/job/report \
  sbatch --wait --nodes=1 --ntasks=4 --ntasks-per-node=4 "$SOURCE/examples/slurm/faultline.sbatch" || status=$?
echo "sbatch --wait exited $status"
cat "$WORK"/job/faultline-*.out || true
[[ $status -eq 0 ]] || exit "$status"
# Every line labelled with its task; the coordinator on the step's first reserved port.
grep -Eq '^0: faultline coordinator: listening on 0.0.0.0:120[0-9][0-9] for 4 agents' "$WORK"/job/faultline-*.out ||
  { echo "FAIL: no labelled coordinator on a port of MpiParams=ports=12000-12099"; exit 1; }
# A sweep sharded three ways as a job array, each shard a task.
HOME=$WORK/home FAULTLINE_REPORT_DIR=$WORK/job/sweep FAULTLINE_SWEEP_PROGRAM=$SWEEP_PROGRAM \
  FAULTLINE_SWEEP_ARGS="--max-points 9 --ok sum=" \
  sbatch --wait --array=1-3 "$SOURCE/examples/slurm/sweep.sbatch" || status=$?
echo "sbatch --wait --array=1-3 exited $status"
cat "$WORK"/job/faultline-sweep-*.out || true
exit "$status"
INSIDE
status=0
WORK=$work SOURCE=$source_dir PATH=$build:$PATH SWEEP_PROGRAM=$build/tests/sut/sut_ofi_sum_checked \
  nsenter --net="/run/netns/$ns" unshare --mount --uts bash "$work/inside.sh" || status=$?
if [[ $status -ne 0 ]]; then
  echo "--- slurmctld.log"; tail -n 30 "$work/slurmctld.log" 2>/dev/null || true
  echo "--- slurmd.log"; tail -n 30 "$work/slurmd.log" 2>/dev/null || true
  echo "FAIL: the example batch script did not pass under Slurm"
  exit 1
fi
python3 - "$work/job/report/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
agents = report["run"]["agents"]
names = sorted(agent["name"] for agent in agents)
print("agents:", names)
assert len(agents) == 4, names
assert names == ["flnode.0", "flnode.1", "flnode.2", "flnode.3"], names
verdicts = [s["verdict"] for s in report["scenarios"]]
print("runs:", verdicts)
assert verdicts == ["pass"] * 6, verdicts  # the links suite over all 6 pairs of 4 agents
PY
[[ -z $(ls "$work/home/.faultline") ]] || { echo "FAIL: the job left its token behind"; exit 1; }
# The shards collected are the one sweep's matrix: the same points, names and verdicts.
"$build/faultline" sut sweep --collect "$work"/job/sweep/shard1 "$work"/job/sweep/shard2 \
  "$work"/job/sweep/shard3 --report-dir "$work/job/sweep/all" || [[ $? -eq 1 ]]
# The one run as the array's tasks see themselves: rank 0 of their step (SLURM_PROCID).
SLURM_PROCID=0 "$build/faultline" sut sweep --max-points 9 --ok sum= --report-dir "$work/job/sweep/one" -- \
  "$build/tests/sut/sut_ofi_sum_checked" >/dev/null || [[ $? -eq 1 ]]
python3 - "$work/job/sweep/all/report.json" "$work/job/sweep/one/report.json" <<'PY'
import json, sys
merged, one = (json.load(open(path)) for path in sys.argv[1:])
def matrix(report):
    return [(p["id"], p["name"], p["verdict"]) for p in report["sweep"]["points"]]
print("points:", len(matrix(merged)))
assert len(matrix(merged)) == 9, matrix(merged)
assert matrix(merged) == matrix(one), (matrix(merged), matrix(one))
assert [s["id"] for s in merged["scenarios"]] == [s["id"] for s in one["scenarios"]]
PY
echo "PASS"
