#!/usr/bin/env python3
"""Write PyTorch flight-recorder dumps for an example incident.

PyTorch (TORCH_NCCL_TRACE_BUFFER_SIZE > 0, TORCH_NCCL_DUMP_ON_TIMEOUT=1) writes one pickle per rank
when a collective times out. A real dump cannot be published with an example (it names the user's
paths and hosts), so the example's dumps are built here with the documented structure of the dump
format "2.4" that PyTorch 2.4/2.5 write: a dict with version, comm_lib_version, pg_config, pg_status
and entries, each entry with record_id, pg_id, process_group (name, desc), collective_seq_id,
p2p_seq_id, op_id, profiling_name, time_created_ns, input/output sizes and dtypes, state,
time_discovered_*_ns, retired, timeout_ms, is_p2p and frames. Structure from
https://docs.pytorch.org/tutorials/unstable/flight_recorder_tutorial.html and the analyser that reads it
(torch/distributed/flight_recorder/components/types.py, https://github.com/pytorch/pytorch).

Written with the standard library's pickle at protocol 2, the protocol PyTorch's own pickler uses:
only dicts, lists, tuples, strings, ints, floats, booleans and None (no GLOBAL opcode).

The scenario: every rank of one process group has completed collectives up to seq-1 and is in
collective `seq` ("started"), except the lagging ranks, whose last entry is seq-1 and whose
pg_status says so. A truncated rank's file is cut to a fraction of its bytes, as a dump interrupted
by the process being killed.

  make_flight_recorder.py INCIDENT_DIR --nodes fr-n01,fr-n02 --ranks-per-node 4 --seq 1533 \
      --lagging 2 --truncate 6:0.55 --start 2026-11-26T17:20:41Z
"""
import argparse
import datetime
import os
import pickle

FRAMES = [
    {"name": "all_reduce", "filename": "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", "line": 2501},
    {"name": "wrapper", "filename": "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", "line": 83},
    {"name": "reduce_gradients", "filename": "/home/svc-train/detr3d/engine/trainer.py", "line": 214},
    {"name": "train_one_epoch", "filename": "/home/svc-train/detr3d/engine/trainer.py", "line": 301},
    {"name": "<module>", "filename": "/home/svc-train/detr3d/train.py", "line": 122},
]


def entry(rank, seq, created_ns, state, numel, timeout_ms):
    completed = state == "completed"
    return {
        "frames": [dict(f) for f in FRAMES],
        "record_id": seq + 11,
        "pg_id": 0,
        "process_group": ("0", "default_pg"),
        "collective_seq_id": seq,
        "p2p_seq_id": 0,
        "op_id": seq,
        "profiling_name": "nccl:all_reduce",
        "time_created_ns": created_ns,
        "input_sizes": [[numel]],
        "input_dtypes": ["Float"],
        "output_sizes": [[numel]],
        "output_dtypes": ["Float"],
        "state": state,
        "time_discovered_started_ns": created_ns + 1_250_000 + rank * 10_007,
        "time_discovered_completed_ns": created_ns + 39_500_000 + rank * 20_011 if completed else None,
        "retired": completed,
        "timeout_ms": timeout_ms,
        "is_p2p": False,
    }


def dump(rank, world, seq, lagging, start_ns, history, numel, timeout_ms):
    last = seq - 1 if rank in lagging else seq
    entries = []
    for s in range(seq - history, last + 1):
        # one collective every 2.4 s; the lagging rank would have created seq at the same time
        created = start_ns + (s - (seq - history)) * 2_400_000_000 + rank * 15_013
        entries.append(entry(rank, s, created, "completed" if s < seq else "started", numel, timeout_ms))
    return {
        "version": "2.4",
        "comm_lib_version": "2.21.5",
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[%s]" % ", ".join(str(r) for r in range(world))}},
        "pg_status": {"0": {"last_enqueued_collective": last, "last_started_collective": last,
                            "last_completed_collective": seq - 1}},
        "entries": entries,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("incident")
    ap.add_argument("--nodes", required=True, help="node names, in rank order, comma-separated")
    ap.add_argument("--ranks-per-node", type=int, default=4)
    ap.add_argument("--seq", type=int, required=True, help="the collective the joined ranks are stuck in")
    ap.add_argument("--lagging", default="", help="global ranks that never enqueued seq, comma-separated")
    ap.add_argument("--truncate", action="append", default=[], help="RANK:FRACTION of the file's bytes kept")
    ap.add_argument("--start", required=True, help="creation time of the first recorded collective (UTC, ...Z)")
    ap.add_argument("--history", type=int, default=6, help="collectives recorded before seq")
    ap.add_argument("--numel", type=int, default=4194304)
    ap.add_argument("--timeout-ms", type=int, default=600000)
    a = ap.parse_args()
    nodes = a.nodes.split(",")
    world = len(nodes) * a.ranks_per_node
    lagging = {int(r) for r in a.lagging.split(",") if r}
    cut = {int(r): float(f) for r, f in (t.split(":") for t in a.truncate)}
    start = datetime.datetime.strptime(a.start, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    start_ns = int(start.timestamp()) * 1_000_000_000
    for rank in range(world):
        data = pickle.dumps(dump(rank, world, a.seq, lagging, start_ns, a.history, a.numel, a.timeout_ms), protocol=2)
        if rank in cut:
            data = data[: int(len(data) * cut[rank])]
        d = os.path.join(a.incident, "nodes", nodes[rank // a.ranks_per_node], "flight_recorder")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, str(rank)), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
