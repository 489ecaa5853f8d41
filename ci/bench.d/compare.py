#!/usr/bin/env python3
"""Turns measure.py's samples into ratios against their targets.

  compare.py HOST.json [RXE.json] [--markdown FILE]

For each comparison: the median over the repetitions of each side, their ratio, the target,
and whether it is met. Prints a table; with --markdown also writes it for BENCHMARKS.md.
"""
import argparse
import json
import statistics


def median_of(repetitions, side, field):
    """The median of the repetitions that measured something: perftest now and then prints
    0.00 for a run it could not time (its own limitation); such a sample is left out and
    counted in DROPPED."""
    values = [r[side][field] for r in repetitions if r[side][field] > 0]
    DROPPED[side] = DROPPED.get(side, 0) + len(repetitions) - len(values)
    return statistics.median(values)


DROPPED = {}


def noise(repetitions, side, field):
    """How far apart the repetitions of one side are: (max - min) / median, as a percentage."""
    values = [r[side][field] for r in repetitions if r[side][field] > 0]
    return f"±{50 * (max(values) - min(values)) / statistics.median(values):.1f}%"


def size_label(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


class Table:
    def __init__(self):
        self.rows = []
        self.notes = []

    def ratio(self, group, what, ours, theirs, bound, at_most, unit):
        ratio = ours / theirs
        met = ratio <= bound if at_most else ratio >= bound
        target = f"{'<=' if at_most else '>='} {bound:.2f}"
        self.rows.append([group, what, f"{theirs:.2f} {unit}", f"{ours:.2f} {unit}",
                          f"{ratio:.3f}", target, "met" if met else "MISSED"])

    def value(self, group, what, ours, bound, unit):
        met = ours < bound
        self.rows.append([group, what, "-", f"{ours:.3f} {unit}", "-", f"< {bound} {unit}",
                          "met" if met else "MISSED"])

    def render(self, markdown):
        header = ["comparison", "size", "reference", "faultline", "ratio", "target", "result"]
        if markdown:
            lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        else:
            widths = [max(len(str(x)) for x in col) for col in zip(header, *self.rows)]
            lines = ["  ".join(str(x).ljust(w) for x, w in zip(row, widths))
                     for row in [header] + self.rows]
        met = sum(1 for row in self.rows if row[-1] == "met")
        lines.append("")
        lines.append(f"{met} of {len(self.rows)} targets met")
        lines.append("")
        lines += [("- " if markdown else "") + note for note in self.notes]
        return "\n".join(lines)


def host_rows(table, host):
    for provider, measured in host["ofi"].items():
        group = f"ofi {provider} vs fi_pingpong"
        for sample in measured.get("latency", []):
            reps = sample["repetitions"]
            table.ratio(f"{group}: latency (mean one-way)", size_label(sample["size"]),
                        median_of(reps, "faultline", "mean_us"),
                        median_of(reps, "reference", "mean_us"), 1.05, True, "us")
        for sample in measured.get("throughput", []):
            reps = sample["repetitions"]
            table.ratio(f"{group}: ping-pong bandwidth", size_label(sample["size"]),
                        median_of(reps, "faultline", "mb_per_second"),
                        median_of(reps, "reference", "mb_per_second"), 0.95, False, "MB/s")
        for sample in measured.get("decorator", []):
            reps = sample["repetitions"]
            table.ratio(f"ofi {provider}: idle fault decorator vs none (median one-way)",
                        size_label(sample["size"]), median_of(reps, "decorated", "median_us"),
                        median_of(reps, "plain", "median_us"), 1.02, True, "us")
        for sample in measured.get("interposer", []):
            reps = sample["repetitions"]
            table.ratio(f"ofi {provider}: fi_pingpong under the interposers vs unwrapped "
                        f"(mean one-way; noise {noise(reps, 'plain', 'mean_us')})",
                        size_label(sample["size"]), median_of(reps, "interposed", "mean_us"),
                        median_of(reps, "plain", "mean_us"), 1.02, True, "us")
        windowed = measured.get("bandwidth", [])
        for i, row in enumerate(windowed[0]["rows"] if windowed else []):
            value = statistics.median(run["rows"][i]["mib_per_second"] for run in windowed)
            table.notes.append(f"ofi {provider} windowed RDMA write bandwidth, "
                               f"{size_label(row['bytes'])}, window 64: {value:.0f} MiB/s "
                               "(no libfabric bandwidth tool in Debian: not compared)")
        allreduce_rows(table, provider, measured["allreduce"])
        reps = measured["status_check"]["repetitions"]
        table.ratio(f"ofi {provider}: allreduce, 2 ranks, status checked vs not (median)",
                    size_label(measured["status_check"]["size"]),
                    median_of(reps, "checked", "median_us"),
                    median_of(reps, "unchecked", "median_us"), 1.01, True, "us")
    sut_rows(table, host.get("sut"))
    control = host.get("control")
    if control is None:
        return
    table.value("control plane", "step round trip (median)", control["step_round_trip_ms"], 1,
                "ms")
    table.notes.append(f"control plane: {control['agents']} agents joined in "
                       f"{control['join_seconds']:.2f} s; {control['pair_runs']} no-traffic pair "
                       f"runs over all pairs in {control['all_pairs_seconds']:.2f} s; one run "
                       f"start to verdict {control['run_without_steps_ms']:.0f} ms")


def sut_rows(table, sut):
    """faultline around a program: what `sut exec` adds to one run, what a sweep adds a point
    beyond its programs' own run times, and a sweep two points at a time against one."""
    if sut is None:
        return
    reps = sut["exec"]
    added = 1000 * (median_of(reps, "exec", "seconds") - median_of(reps, "bare", "seconds"))
    table.value("sut exec around fi_info -p tcp vs bare", "start-up and teardown (median)",
                added, 50, "ms")
    reps = sut["sweep"]
    per_point = statistics.median(
        1000 * (r["one"]["seconds"] - r["one"]["programs_seconds"]) / r["one"]["points"]
        for r in reps)
    table.value(f"sut sweep of tests/sut/ofi_sum.c, {reps[0]['one']['points']} points",
                "faultline's time a point beyond the programs' (median)", per_point, 150, "ms")
    table.ratio("sut sweep --jobs 2 vs --jobs 1", f"{reps[0]['one']['points']} points",
                median_of(reps, "two", "seconds"), median_of(reps, "one", "seconds"), 1.0, True,
                "s")


def allreduce_rows(table, provider, samples):
    """tcp: faultline within 1.2x of Open MPI's mtl ofi at every point. shm: within 2x of Open
    MPI's vader at 2 ranks, and no worse a slow-down from 2 to 4 ranks than Open MPI's."""
    medians = {}
    for sample in samples:
        reps = sample["repetitions"]
        for size in reps[0]["faultline"]:
            medians[sample["ranks"], size] = (
                statistics.median(r["faultline"][size] for r in reps),
                statistics.median(r["reference"][size] for r in reps))
    reference = "Open MPI mtl ofi" if provider == "tcp" else "Open MPI btl vader"
    for (ranks, size), (ours, theirs) in sorted(medians.items(), key=lambda kv: (kv[0][0], int(kv[0][1]))):
        what = f"{ranks} ranks, {size_label(int(size))}"
        if provider == "tcp":
            table.ratio(f"ofi tcp vs {reference}: allreduce (median)", what, ours, theirs, 1.2,
                        True, "us")
        elif ranks == 2:
            table.ratio(f"ofi shm vs {reference}: allreduce (median)", what, ours, theirs, 2.0,
                        True, "us")
        else:
            table.notes.append(f"ofi shm allreduce {what}: faultline {ours:.0f} us, "
                               f"{reference} {theirs:.0f} us, ratio {ours / theirs:.2f}")
    if provider == "tcp":
        gloo_rows(table, samples)
    if provider != "shm":
        return
    for size in sorted({size for _, size in medians}, key=int):
        ours = medians[4, size][0] / medians[2, size][0]
        theirs = medians[4, size][1] / medians[2, size][1]
        table.ratio(f"ofi shm vs {reference}: allreduce slow-down from 2 to 4 ranks",
                    size_label(int(size)), ours, theirs, 1.0, True, "x")


def gloo_rows(table, samples, label="ofi tcp", transport="tcp"):
    """faultline against Gloo over Gloo's own transport: against its ring, and against the
    fastest of its algorithms at that point; where measured, faultline's halving-doubling
    against Gloo's; at 64 KiB and 4 ranks also against the better of Open MPI and Gloo (the
    latency-bound point recursive doubling is for). Target <= 1.0."""
    for sample in samples:
        reps = sample["repetitions"]
        algorithms = sorted(name for name in reps[0] if name.startswith("gloo_"))
        if not algorithms:
            continue
        ranks = sample["ranks"]
        for size in sorted(reps[0]["faultline"], key=int):
            what = f"{ranks} ranks, {size_label(int(size))}"
            ours = statistics.median(r["faultline"][size] for r in reps)
            gloo = {a[5:]: statistics.median(r[a][size] for r in reps) for a in algorithms}
            best = min(gloo, key=gloo.get)
            table.ratio(f"{label} vs Gloo ring ({transport}): allreduce (median)", what,
                        ours, gloo["ring"], 1.0, True, "us")
            table.ratio(f"{label} vs Gloo's fastest of {', '.join(sorted(gloo))} "
                        f"({transport}): allreduce (median; fastest here: {best})", what, ours,
                        gloo[best], 1.0, True, "us")
            if "faultline_halving_doubling" in reps[0]:
                halving = statistics.median(r["faultline_halving_doubling"][size] for r in reps)
                table.ratio(f"{label} halving_doubling vs Gloo halving_doubling ({transport}): "
                            "allreduce (median)", what, halving, gloo["halving_doubling"], 1.0,
                            True, "us")
            if ranks == 4 and int(size) == 65536 and "reference" in reps[0]:
                mpi = statistics.median(r["reference"][size] for r in reps)
                better = "Open MPI" if mpi < gloo[best] else f"Gloo {best}"
                table.ratio(f"{label} vs the better of Open MPI and Gloo: allreduce "
                            f"(median; better here: {better})", what, ours,
                            min(mpi, gloo[best]), 1.0, True, "us")


def rxe_rows(table, rxe):
    device = rxe["device"]
    for sample in rxe["latency"]:
        reps = sample["repetitions"]
        table.ratio(f"verbs {device} vs ib_send_lat: latency (median one-way)",
                    size_label(sample["size"]), median_of(reps, "faultline", "median_us"),
                    median_of(reps, "reference", "median_us"), 1.05, True, "us")
    for sample in rxe["bandwidth"]:
        reps = sample["repetitions"]
        ours = median_of(reps, "faultline", "mib_per_second")
        theirs = median_of(reps, "reference", "mib_per_second")
        if sample["size"] >= 65536:
            table.ratio(f"verbs {device} vs ib_write_bw: bandwidth, window 128",
                        size_label(sample["size"]), ours, theirs, 0.95, False, "MiB/s")
        else:
            table.notes.append(f"verbs {device} write bandwidth {size_label(sample['size'])}: "
                               f"faultline {ours:.1f} MiB/s, ib_write_bw {theirs:.1f} MiB/s, "
                               f"ratio {ours / theirs:.3f} (no target below 64 KiB)")
    for sample in rxe.get("interposer", []):
        reps = sample["repetitions"]
        latency = sample["tool"] == "ib_send_lat"
        what = "median one-way" if latency else "bandwidth, window 128"
        table.ratio(f"verbs {device}: {sample['tool']} under the interposers vs unwrapped "
                    f"({what}; noise {noise(reps, 'plain', 'value')})",
                    size_label(sample["size"]), median_of(reps, "interposed", "value"),
                    median_of(reps, "plain", "value"), 1.02 if latency else 0.98, latency,
                    "us" if latency else "MiB/s")
    for sample in rxe["decorator"]:
        reps = sample["repetitions"]
        table.ratio(f"verbs {device}: idle fault decorator vs none (median one-way)",
                    size_label(sample["size"]), median_of(reps, "decorated", "median_us"),
                    median_of(reps, "plain", "median_us"), 1.02, True, "us")
    gloo_rows(table, rxe.get("allreduce", []), f"verbs {device}", "ibverbs")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("host")
    parser.add_argument("rxe", nargs="?")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    table = Table()
    host = json.load(open(args.host))
    host_rows(table, host)
    machine = host["machine"]
    table.notes.append(f"machine: {machine['cpu']}, {machine['cores']} cores, kernel "
                       f"{machine['kernel']}, libfabric {machine['libfabric']}; medians of "
                       f"{host['repetitions']} interleaved repetitions"
                       + (" (quick run)" if host.get("quick") else ""))
    if args.rxe:
        rxe = json.load(open(args.rxe))
        rxe_rows(table, rxe)
        table.notes.append(f"rxe: Soft-RoCE in a QEMU TCG guest (2 vCPUs), "
                           f"{rxe['repetitions']} repetitions" + (" (quick run)" if rxe.get("quick") else ""))
    if any(DROPPED.values()):
        table.notes.append("samples left out for measuring nothing (0.00): " + ", ".join(
            f"{side} {count}" for side, count in DROPPED.items() if count))
    print(table.render(markdown=False))
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(table.render(markdown=True) + "\n")


if __name__ == "__main__":
    main()
