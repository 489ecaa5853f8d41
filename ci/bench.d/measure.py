#!/usr/bin/env python3
"""Measures faultline against the reference tools, interleaved, in one run on one machine.

  measure.py host --faultline BIN --mpi-allreduce BIN --ofi-sum BIN [--gloo-allreduce BIN]
                  --out FILE
                  [--repetitions N] [--quick] [--only allreduce|sut]
      ofi tcp and shm against fi_pingpong; the idle fault decorator; the control plane;
      allreduce against Open MPI's (mtl ofi on tcp, btl vader for shm: mpi_allreduce.c) and
      on tcp against Gloo's (gloo_allreduce.cpp, each of its algorithms), and what checking
      every completion's status costs it; `sut exec` around a program
      against the program bare, and a sweep's time a point beyond its programs' own
  measure.py rxe --faultline BIN --out FILE [--gloo-allreduce BIN] [--repetitions N] [--quick]
      verbs on rxe0 against perftest's ib_send_lat and ib_write_bw (inside the Soft-RoCE
      guest), and allreduce against Gloo's over its ibverbs transport

Every sample of every repetition goes to FILE (JSON); compare.py turns them into ratios.
Each comparison alternates which tool runs first from one repetition to the next.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time

PORTS = iter(range(19300, 19900))


def run(command, timeout=300):
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        sys.exit(f"measure.py: {' '.join(command)} exited {done.returncode}:\n"
                 f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def run_pair(server, client, timeout=300):
    """A reference tool's server and client: the client's output."""
    serving = subprocess.Popen(server, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(0.3)  # the server listens before the client dials
        for attempt in range(10):
            done = subprocess.run(client, capture_output=True, text=True, timeout=timeout)
            if done.returncode == 0:
                break
            if "refused" not in done.stdout + done.stderr or attempt == 9:
                sys.exit(f"measure.py: {' '.join(client)} exited {done.returncode}:\n"
                         f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
            time.sleep(0.3)
        serving.wait(timeout=30)
        return done.stdout
    finally:
        if serving.poll() is None:
            serving.kill()
            serving.wait()


def faultline(binary, *args):
    return json.loads(run([binary, "bench", *args, "--json"]))


def interleaved(repetitions, *named):
    """named: (name, run) pairs. Each repetition runs them all, in the given order and in the
    reverse order by turns: [{name: what run returned, ...}, ...]."""
    def once(r):
        order = named if r % 2 == 0 else tuple(reversed(named))
        return {name: measure() for name, measure in order}
    return [once(r) for r in range(repetitions)]


# --- fi_pingpong ---------------------------------------------------------------------------

def under_interposers(binary, side):
    """A command prefix that runs a program under faultline's interposers with no fault (the
    libfabric hook provider and the verbs preload library, as `faultline sut exec` puts them
    in), and where its output ends up: (prefix, sut.json)."""
    folder = tempfile.mkdtemp(prefix=f"faultline-bench-{side}-")
    return ([binary, "sut", "exec", "--deadline", "600", "--report-dir", folder, "--"],
            pathlib.Path(folder) / "sut.json")


def run_wrapped_pair(binary, server, client, timeout=300):
    """run_pair with both sides under the interposers: the client's own output."""
    server_prefix, _ = under_interposers(binary, "server")
    client_prefix, client_report = under_interposers(binary, "client")
    run_pair(server_prefix + server, client_prefix + client, timeout)
    return "\n".join(json.loads(client_report.read_text())["output"])


def fi_pingpong(provider, size, iterations, interposed_by=None):
    """One-way mean (usec/xfer) and ping-pong throughput (MB/sec, 10^6 B/s); both processes
    under the interposers of faultline binary `interposed_by` when given."""
    port = str(next(PORTS))
    common = ["fi_pingpong", "-p", provider, "-e", "rdm", "-S", str(size), "-I", str(iterations)]
    server, client = common + ["-B", port], common + ["-P", port, "127.0.0.1"]
    out = (run_wrapped_pair(interposed_by, server, client) if interposed_by
           else run_pair(server, client))
    fields = out.strip().splitlines()[-1].split()
    return {"mean_us": float(fields[6]), "mb_per_second": float(fields[5])}


def faultline_pingpong(binary, target, size, iterations, idle=False):
    """Its two sides in two processes, as fi_pingpong's are."""
    args = ["pingpong", *target, "--sizes", str(size), "--iterations", str(iterations),
            "--warmup", "0", "--two-processes"] + (["--idle-decorator"] if idle else [])
    row = faultline(binary, *args)["rows"][0]
    row["mb_per_second"] = size / row["mean_us"]
    return row


def ofi_latency(binary, provider, sizes, repetitions, iterations_of):
    target = ["--transport", "ofi", "--provider", provider]
    samples = []
    for size in sizes:
        iterations = iterations_of(size)

        samples.append({"size": size, "iterations": iterations, "repetitions": interleaved(
            repetitions, ("reference", lambda: fi_pingpong(provider, size, iterations)),
            ("faultline", lambda: faultline_pingpong(binary, target, size, iterations)))})
    return samples


def decorator_cost(binary, provider, sizes, repetitions, iterations):
    target = ["--transport", "ofi", "--provider", provider]
    samples = []
    for size in sizes:
        samples.append({"size": size, "iterations": iterations, "repetitions": interleaved(
            repetitions, ("plain", lambda: faultline_pingpong(binary, target, size, iterations)),
            ("decorated",
             lambda: faultline_pingpong(binary, target, size, iterations, idle=True)))})
    return samples


# --- allreduce against Open MPI -------------------------------------------------------------

ALLREDUCE_SIZES = [65536, 1 << 20, 16 << 20]

# Open MPI on the same libfabric provider (tcp), or on its own shared-memory path (vader)
# where faultline runs libfabric's shm.
MPI_TRANSPORT = {
    "tcp": ["--mca", "pml", "cm", "--mca", "mtl", "ofi", "--mca", "mtl_ofi_provider_include",
            "tcp"],
    "shm": ["--mca", "pml", "ob1", "--mca", "btl", "self,vader"],
}


def mpi_allreduce(program, provider, ranks, iterations, warmup):
    out = run(["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-n",
               str(ranks), *MPI_TRANSPORT[provider], program, str(iterations), str(warmup),
               *map(str, ALLREDUCE_SIZES)], timeout=600)
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {str(row["bytes"]): row["median_us"] for row in rows}


def faultline_allreduce(binary, target, ranks, iterations, warmup, extra=()):
    """`target`: the transport's options (--provider tcp, or --transport verbs --device rxe0)."""
    rows = faultline(binary, "allreduce", *target, "--ranks", str(ranks),
                     "--sizes", ",".join(map(str, ALLREDUCE_SIZES)), "--iterations",
                     str(iterations), "--warmup", str(warmup), *extra)["rows"]
    return {str(row["bytes"]): row["median_us"] for row in rows}


# Gloo's allreduce classes. BCube is left out at 3 ranks: it sums wrong there (64 KiB over
# tcp: element 8192 of 16384 was 4 or 5 where 9 was due), which gloo_allreduce.cpp checks.
GLOO_ALGORITHMS = ["ring", "ring_chunked", "halving_doubling", "bcube"]


def gloo_algorithms(ranks):
    return [a for a in GLOO_ALGORITHMS if a != "bcube" or ranks & (ranks - 1) == 0]


def gloo_allreduce(program, transport, ranks, algorithm, iterations, warmup):
    """Gloo's ranks as processes that meet in a fresh FileStore folder; rank 0's medians."""
    store = tempfile.mkdtemp(prefix="faultline-bench-gloo-")
    command = lambda rank: [program, transport, str(rank), str(ranks), store, algorithm,
                            str(iterations), str(warmup), *map(str, ALLREDUCE_SIZES)]
    others = [subprocess.Popen(command(rank), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True) for rank in range(1, ranks)]
    try:
        out = run(command(0), timeout=600)
        for rank, process in enumerate(others, start=1):
            if process.wait(timeout=60) != 0:
                sys.exit(f"measure.py: Gloo {algorithm} rank {rank} of {ranks} exited "
                         f"{process.returncode}: {process.stderr.read()[-2000:]}")
    finally:
        for process in others:
            if process.poll() is None:
                process.kill()
                process.wait()
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {str(row["bytes"]): row["median_us"] for row in rows}


def allreduce(binary, program, provider, repetitions, iterations, gloo=None):
    """faultline against Open MPI, and on tcp against each of Gloo's algorithms over Gloo's
    own tcp transport when `gloo` (ci/bench.d/gloo_allreduce.cpp) is given."""
    samples = []
    for ranks in (2, 3, 4):
        named = [("reference", lambda: mpi_allreduce(program, provider, ranks, iterations, 2)),
                 ("faultline", lambda: faultline_allreduce(binary, ["--provider", provider],
                                                           ranks, iterations, 2))]
        if gloo and provider == "tcp":
            named += [(f"gloo_{algorithm}",
                       lambda algorithm=algorithm: gloo_allreduce(gloo, "tcp", ranks, algorithm,
                                                                  iterations, 2))
                      for algorithm in gloo_algorithms(ranks)]
        samples.append({"ranks": ranks, "iterations": iterations,
                        "repetitions": interleaved(repetitions, *named)})
    return samples


def status_check_cost(binary, provider, repetitions, iterations):
    """16 KiB over 2 ranks with and without reading completion statuses."""
    def one(extra):
        rows = faultline(binary, "allreduce", "--provider", provider, "--ranks", "2", "--sizes",
                         "16384", "--iterations", str(iterations), "--warmup", "100",
                         *extra)["rows"]
        return {"median_us": rows[0]["median_us"]}

    return {"size": 16384, "iterations": iterations, "repetitions": interleaved(
        repetitions, ("checked", lambda: one([])),
        ("unchecked", lambda: one(["--no-status-check"])))}


def interposer_cost(binary, provider, sizes, repetitions, iterations):
    """fi_pingpong unwrapped against fi_pingpong under the interposers with no fault."""
    samples = []
    for size in sizes:
        samples.append({"size": size, "iterations": iterations, "repetitions": interleaved(
            repetitions, ("plain", lambda: fi_pingpong(provider, size, iterations)),
            ("interposed", lambda: fi_pingpong(provider, size, iterations, binary)))})
    return samples


# --- faultline around a program: `sut exec` and a sweep's points ----------------------------

def timed(command):
    """Wall seconds of a command whose exit code is a verdict (not checked here)."""
    start = time.monotonic()
    subprocess.run(command, capture_output=True, timeout=600)
    return time.monotonic() - start


def sut_exec_cost(binary, repetitions):
    """`fi_info -p tcp` bare against the same under `faultline sut exec` with no fault."""
    program = ["fi_info", "-p", "tcp"]

    def wrapped():
        folder = tempfile.mkdtemp(prefix="faultline-bench-exec-")
        return {"seconds": timed([binary, "sut", "exec", "--report-dir", folder, "--", *program])}

    return interleaved(repetitions, ("bare", lambda: {"seconds": timed(program)}),
                       ("exec", wrapped))


def sweep_cost(binary, program, points, repetitions):
    """Sweeps of `points` points of tests/sut/ofi_sum.c, one point at a time and two: each
    sweep's wall time beside its programs' own (the clean run's and every point's, as each
    `sut exec` timed its program)."""
    def one(jobs):
        folder = tempfile.mkdtemp(prefix="faultline-bench-sweep-")
        seconds = timed([binary, "sut", "sweep", "--max-points", str(points), "--jobs", str(jobs),
                         "--ok", "sum=4177920", "--report-dir", folder, "--", program])
        section = json.loads((pathlib.Path(folder) / "report.json").read_text())["sweep"]
        own = section["clean"]["seconds"] + sum(p["seconds"] for p in section["points"])
        return {"seconds": seconds, "programs_seconds": own, "points": len(section["points"])}

    return interleaved(repetitions, ("one", lambda: one(1)), ("two", lambda: one(2)))


def sut(args):
    print("== faultline around a program: sut exec, a sweep's points", flush=True)
    return {"exec": sut_exec_cost(args.faultline, args.repetitions),
            "sweep": sweep_cost(args.faultline, args.ofi_sum, 10 if args.quick else 20,
                                args.repetitions)}


def host(args):
    quick = args.quick
    if args.only == "sut":
        return {"machine": machine(), "ofi": {}, "sut": sut(args)}
    latency_sizes = [8, 64, 512, 4096, 65536]
    bandwidth_sizes = [65536, 1 << 20, 4 << 20]
    lat_iterations = (lambda size: 1000) if quick else (lambda size: 10000)
    bw_iterations = (lambda size: 50) if quick else (lambda size: {65536: 2000, 1 << 20: 400}.get(size, 100))
    result = {"machine": machine(), "ofi": {}}
    for provider in ("tcp", "shm"):
        if args.only == "allreduce":
            print(f"== ofi {provider}: ring allreduce against Open MPI", flush=True)
            result["ofi"][provider] = {
                "allreduce": allreduce(args.faultline, args.mpi_allreduce, provider,
                                       args.repetitions, 5 if quick else 20, args.gloo_allreduce),
                "status_check": status_check_cost(args.faultline, provider, args.repetitions,
                                                  500 if quick else 5000)}
            continue
        print(f"== ofi {provider}: latency and ping-pong throughput against fi_pingpong", flush=True)
        result["ofi"][provider] = {
            "latency": ofi_latency(args.faultline, provider, latency_sizes, args.repetitions,
                                   lat_iterations),
            "throughput": ofi_latency(args.faultline, provider, bandwidth_sizes,
                                      args.repetitions, bw_iterations),
        }
        print(f"== ofi {provider}: windowed bandwidth (no reference tool) and allreduce", flush=True)
        result["ofi"][provider]["bandwidth"] = [
            faultline(args.faultline, "bandwidth", "--provider", provider, "--sizes",
                      ",".join(map(str, [4096] + bandwidth_sizes)),
                      "--iterations", "100" if quick else "1000")
            for _ in range(args.repetitions)]
        print(f"== ofi {provider}: ring allreduce against Open MPI", flush=True)
        result["ofi"][provider]["allreduce"] = allreduce(
            args.faultline, args.mpi_allreduce, provider, args.repetitions, 5 if quick else 20,
            args.gloo_allreduce)
        result["ofi"][provider]["status_check"] = status_check_cost(
            args.faultline, provider, args.repetitions, 500 if quick else 5000)
        print(f"== ofi {provider}: fi_pingpong under the interposers, idle", flush=True)
        result["ofi"][provider]["interposer"] = interposer_cost(
            args.faultline, provider, [8, 4096], args.repetitions, 2000 if quick else 20000)
        print(f"== ofi {provider}: the idle fault decorator", flush=True)
        result["ofi"][provider]["decorator"] = decorator_cost(
            args.faultline, provider, [8, 4096], args.repetitions, 2000 if quick else 20000)
    if args.only == "allreduce":
        return result
    result["sut"] = sut(args)
    print("== control plane", flush=True)
    result["control"] = faultline(args.faultline, "control", "--agents", "4" if quick else "16",
                                  "--barriers", "200", "--repetitions", str(args.repetitions))
    return result


# --- perftest on rxe -----------------------------------------------------------------------

def roce_v2_ipv4_gid_index(device):
    """perftest's -x: the GID table entry of the IPv4 address (::ffff:a.b.c.d)."""
    gids = pathlib.Path(f"/sys/class/infiniband/{device}/ports/1/gids")
    for entry in sorted(gids.iterdir(), key=lambda p: int(p.name)):
        if entry.read_text().strip().startswith("0000:0000:0000:0000:0000:ffff:"):
            return entry.name
    sys.exit(f"measure.py: {device} has no IPv4 GID in {gids}")


def perftest(tool, device, gid, size, iterations, extra=(), interposed_by=None):
    port = str(next(PORTS))
    common = [tool, "-d", device, "-x", gid, "-s", str(size), "-n", str(iterations), "-F",
              "-p", port, *extra]
    server, client = common, common + ["127.0.0.1"]
    out = (run_wrapped_pair(interposed_by, server, client, timeout=600) if interposed_by
           else run_pair(server, client, timeout=600))
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0] == str(size) and re.match(r"^\d+$", fields[1]):
            return [float(f) for f in fields[2:]]
    sys.exit(f"measure.py: no result line for {size} bytes in {tool}'s output:\n{out}")


def rxe(args):
    device = args.device
    gid = roce_v2_ipv4_gid_index(device)
    target = ["--transport", "verbs", "--device", device]
    result = {"machine": machine(), "device": device, "gid_index": gid}
    iterations = 300 if args.quick else 1000
    latency = []
    print(f"== verbs {device}: ib_send_lat against faultline bench pingpong --op send", flush=True)
    for size in [8, 64, 512, 4096, 65536]:
        def reference():
            t_min, t_max, typical, avg, stdev, p99 = perftest(
                "ib_send_lat", device, gid, size, iterations)[:6]
            return {"min_us": t_min, "median_us": typical, "mean_us": avg, "p99_us": p99}
        # Two processes, as ib_send_lat's client and server are.
        ours = lambda: faultline(args.faultline, "pingpong", *target, "--sizes", str(size),
                                 "--iterations", str(iterations), "--warmup", "0",
                                 "--two-processes")["rows"][0]
        latency.append({"size": size, "iterations": iterations, "repetitions": interleaved(
            args.repetitions, ("reference", reference), ("faultline", ours))})
    result["latency"] = latency
    bandwidth = []
    print(f"== verbs {device}: ib_write_bw against faultline bench bandwidth --op write",
          flush=True)
    for size in [4096, 65536, 1 << 20, 4 << 20]:
        count = {4096: 2000, 65536: 1000, 1 << 20: 200}.get(size, 50)
        if args.quick:
            count = max(20, count // 5)

        def reference():
            peak, average, rate = perftest("ib_write_bw", device, gid, size, count,
                                           ["-t", "128"])[:3]
            return {"mib_per_second": average}
        ours = lambda: faultline(
            args.faultline, "bandwidth", *target, "--op", "write", "--window", "128",
            "--sizes", str(size), "--iterations", str(count), "--warmup", "16")["rows"][0]
        bandwidth.append({"size": size, "iterations": count, "repetitions": interleaved(
            args.repetitions, ("reference", reference), ("faultline", ours))})
    result["bandwidth"] = bandwidth
    print(f"== verbs {device}: perftest under the interposers, idle", flush=True)
    result["interposer"] = []
    for tool, size, extra, field in (("ib_send_lat", 8, (), 2), ("ib_write_bw", 65536,
                                                                 ("-t", "128"), 1)):
        # 10000 round trips of ib_send_lat (0.3 s): with 1000 the spread of the unwrapped
        # repetitions alone was ±4%, twice the target.
        count = (iterations if args.quick else 10000) if tool == "ib_send_lat" else (
            200 if args.quick else 1000)

        # ib_send_lat: t_typical (us); ib_write_bw: BW average (MiB/s).
        measure = lambda wrap: {
            "value": perftest(tool, device, gid, size, count, extra, wrap)[field]}
        result["interposer"].append({
            "tool": tool, "size": size, "iterations": count, "repetitions": interleaved(
                args.repetitions, ("plain", lambda: measure(None)),
                ("interposed", lambda: measure(args.faultline)))})
    if args.gloo_allreduce:
        print(f"== verbs {device}: allreduce against Gloo's over its ibverbs transport",
              flush=True)
        result["allreduce"] = gloo_ibverbs_allreduce(args, target, gid)
    print(f"== verbs {device}: the idle fault decorator", flush=True)
    result["decorator"] = []
    for size in [8, 4096]:
        pingpong = lambda *extra: faultline(args.faultline, "pingpong", *target, "--sizes",
                                            str(size), "--iterations", str(iterations),
                                            *extra)["rows"][0]
        result["decorator"].append({"size": size, "iterations": iterations, "repetitions": interleaved(
            args.repetitions, ("plain", lambda: pingpong()),
            ("decorated", lambda: pingpong("--idle-decorator")))})
    return result


def gloo_ibverbs_allreduce(args, target, gid):
    """faultline's allreduce on the device (`--algorithm auto`, and halving-doubling) against
    each of Gloo's algorithms over Gloo's ibverbs transport on the same device. In the TCG
    guest a 4-rank 16 MiB operation takes about 3.5 s, so 5 measured operations and 1 warm-up
    per size (2 and 1 with --quick), and at most 3 repetitions."""
    iterations, warmup = (2, 1) if args.quick else (5, 1)
    transport = f"ibverbs:{args.device}:{gid}"
    samples = []
    for ranks in (2, 3, 4):
        named = [("faultline", lambda: faultline_allreduce(args.faultline, target, ranks,
                                                           iterations, warmup)),
                 ("faultline_halving_doubling", lambda: faultline_allreduce(
                     args.faultline, target, ranks, iterations, warmup,
                     ["--algorithm", "halving_doubling"]))]
        named += [(f"gloo_{algorithm}",
                   lambda algorithm=algorithm: gloo_allreduce(
                       args.gloo_allreduce, transport, ranks, algorithm, iterations, warmup))
                  for algorithm in gloo_algorithms(ranks)]
        samples.append({"ranks": ranks, "iterations": iterations,
                        "repetitions": interleaved(min(args.repetitions, 3), *named)})
    return samples


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown")
    cores = sum(1 for line in open("/proc/cpuinfo") if line.startswith("processor"))
    return {"cpu": cpu, "cores": cores, "kernel": run(["uname", "-r"]).strip(),
            "libfabric": run(["fi_info", "--version"]).splitlines()[0].split(":")[-1].strip()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("where", choices=["host", "rxe"])
    parser.add_argument("--faultline", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--mpi-allreduce", help="mpi_allreduce.c built with mpicc (host)")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--device", default="rxe0")
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    parser.add_argument("--ofi-sum", help="tests/sut/ofi_sum.c built with status checks (host)")
    parser.add_argument("--gloo-allreduce",
                        help="ci/bench.d/gloo_allreduce.cpp built against libgloo-dev (host: "
                        "over tcp; rxe: over ibverbs)")
    parser.add_argument("--only", choices=["allreduce", "sut"], help="host: only that part")
    args = parser.parse_args()
    if args.where == "host" and not (args.mpi_allreduce and args.ofi_sum):
        parser.error("host needs --mpi-allreduce and --ofi-sum")
    result = host(args) if args.where == "host" else rxe(args)
    result["repetitions"] = args.repetitions
    result["quick"] = args.quick
    pathlib.Path(args.out).write_text(json.dumps(result, indent=1))
    print(f"measure.py: samples in {args.out}")


if __name__ == "__main__":
    main()
