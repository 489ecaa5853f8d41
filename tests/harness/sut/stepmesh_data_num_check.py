#!/usr/bin/env python3
"""The seed report's segment contract checked against what StepMesh sends.

faultline's kv engine models the contract of the first seed report: PushRequest 3 segments
(keys, vals, lens), PullRequest 2, PullResponse 3, PushResponse 0. StepMesh's RDMA van says how
many a message carries in its rendezvous (`data_num`, 8 bytes at offset 8 of the 64-byte
RendezvousStart, sent with immediate data). The lane's scenario sut.stepmesh.rdma.inline-off
observes that field of every such post of the worker and the server (an `observe` field in
their `with`); this reads their fault logs and checks, per message type, the data_num StepMesh
actually sent against the table. The program pushes then pulls each key in turn, so on the QP
between them the worker sends PushRequest, PullRequest, ... and the server answers
PushResponse, PullResponse, ...

Usage: stepmesh_data_num_check.py REPORT_DIR   (the `sut run` report folder)
"""
import json
import os
import sys

SEED_TABLE = {"PushRequest": 3, "PullRequest": 2, "PushResponse": 0, "PullResponse": 3}
SCENARIO = "sut.stepmesh.rdma.inline-off"
# Per role, the message types it sends on the QP toward its peer, in turn.
TURNS = {"worker": ["PushRequest", "PullRequest"], "server": ["PushResponse", "PullResponse"]}


def observed(role_dir):
    """data_num of every rendezvous the role posted, per QP, in posting order."""
    by_qp = {}
    with open(os.path.join(role_dir, "faults.jsonl"), encoding="utf-8") as log:
        for line in log:
            event = json.loads(line)
            if event.get("event") == "field" and event.get("offset") == 8:
                by_qp.setdefault(event["qp_num"], []).append(event["value"])
    return by_qp


def main():
    folder = os.path.join(sys.argv[1], SCENARIO)
    # A scenario whose program failed by itself before any fault ran again (`sut run`'s retry
    # rule: StepMesh's flushed completion before its first push, about one run in ten): the
    # last attempt, in retry/ or retry-2/, is the one its verdict is of.
    for again in ("retry-2", "retry"):
        if os.path.isdir(os.path.join(folder, again)):
            folder = os.path.join(folder, again)
            break
    failures = []
    seen = {}
    for role, turns in TURNS.items():
        by_qp = observed(os.path.join(folder, role))
        # The QP toward the peer carries the data messages; the one toward the scheduler only
        # control messages (data_num 0).
        data_qps = [qp for qp, values in by_qp.items() if any(values)]
        if len(data_qps) != 1:
            failures.append(f"{role}: expected one QP carrying data, got {by_qp}")
            continue
        values = by_qp[data_qps[0]]
        if not values or len(values) % 2:
            failures.append(f"{role}: an odd number of messages on its data QP: {values}")
        for i, value in enumerate(values):
            message = turns[i % 2]
            seen.setdefault(message, set()).add(value)
    for message, expected in SEED_TABLE.items():
        got = sorted(seen.get(message, []))
        print(f"{message}: data_num {got} (the seed's table: {expected})")
        if got != [expected]:
            failures.append(f"{message}: StepMesh sent data_num {got}, the table says {expected}")
    for failure in failures:
        print("stepmesh data_num check: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
