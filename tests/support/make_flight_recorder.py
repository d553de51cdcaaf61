#!/usr/bin/env python3
"""Writes PyTorch flight-recorder dumps with Python's own pickle (stdlib only).

    tests/support/make_flight_recorder.py fixtures OUT_DIR
        the unit-test fixtures (tests/unit/data/flight_recorder/ holds their output)
    tests/support/make_flight_recorder.py big OUT_FILE [--entries N] [--protocol P]
        one dump of N entries (the benchmark and the fuzz seed corpus)

Each layout is the dictionary PyTorch's writer builds (FlightRecorder::dump_dict and
getCollectiveTrace; https://github.com/pytorch/pytorch), with the keys that version's
source defines:
  2.3   torch/csrc/distributed/c10d/NCCLUtils.hpp (NCCLTraceBuffer, version_val "2.3"):
        version, pg_config, pg_status, entries, nccl_comm_state; entry keys below.
  2.4   torch/csrc/distributed/c10d/FlightRecorder.hpp (version_val "2.4"): as 2.3.
  2.7   FlightRecorder.hpp (templated FlightRecorder, version_val "2.7"): adds the
        top-level "nccl_version".
  2.10  FlightRecorderDetail.hpp (version_val "2.10"): "comm_lib_version" instead, and
        per entry "thread_name" and "thread_id".
  ranks-list  the 2.4 layout with pg_config "ranks" as a list of ints instead of the
        text "[0, 1]" that ranks_str writes: readers (PyTorch's builder.py evaluates the
        text, NVIDIA's nvidia-resiliency-ext accepts both) see both, so ours must too.
Entry keys (every version above): frames (dicts name/filename/line, shared between
entries as PyTorch shares its symbolized frames), record_id, pg_id, process_group
(name, desc), collective_seq_id, p2p_seq_id, op_id, profiling_name, time_created_ns,
duration_ms (only when timed), input_sizes, input_dtypes, output_sizes, output_dtypes,
state, time_discovered_started_ns, time_discovered_completed_ns (None when not seen),
retired, timeout_ms, is_p2p.

PyTorch writes its dumps with its C++ pickler at protocol 2 (EMPTY_DICT/MARK/SETITEMS,
BINUNICODE with BINPUT/BINGET memo): Python's pickle.dumps at protocol 2 uses the same
opcodes; protocols 0, 4 and 5 are written too so the reader is tested on every form.
Hostile files: a __reduce__ payload naming os.system and a class instance (pickling
them runs nothing; only unpickling them would).
"""
import argparse
import os
import pickle
import sys

LAYOUTS = ["2.3", "2.4", "2.7", "2.10", "ranks-list"]
PROTOCOLS = [0, 2, 4, 5]
BASE_NS = 1733140800_000000000  # fixed, so every run writes the same bytes


def frames():
    names = [("all_reduce", "torch/distributed/distributed_c10d.py", 2696),
             ("wrapper", "torch/distributed/c10d_logger.py", 83),
             ("train_step", "train.py", 41)]
    return [{"name": n, "filename": f, "line": l} for n, f, l in names]


def entry(layout, i, n, shared_frames):
    """Entry i of n: the last one started and never completed (the hang),
    one before it scheduled on the TP group, every 5th a p2p send."""
    p2p = i % 5 == 4
    pg_id, pg = (1, ("1", "TP")) if i == n - 2 else (0, ("0", "default_pg"))
    done = i < n - 2
    started = i == n - 1 or done
    e = {"frames": shared_frames,
         "record_id": i,
         "pg_id": pg_id,
         "process_group": pg,
         "collective_seq_id": 0 if p2p else i + 1,
         "p2p_seq_id": i + 1 if p2p else 0,
         "op_id": i + 1,
         "profiling_name": "nccl:send 0->1" if p2p else "nccl:all_reduce",
         "time_created_ns": BASE_NS + i * 1_000_000,
         "input_sizes": [[1024, 1024]] if not p2p else [[4096]],
         "input_dtypes": ["Float"],
         "output_sizes": [[1024, 1024]] if not p2p else [[4096]],
         "output_dtypes": ["Float"],
         "state": "completed" if done else ("started" if started else "scheduled"),
         "time_discovered_started_ns": BASE_NS + i * 1_000_000 + 500 if started else None,
         "time_discovered_completed_ns": BASE_NS + i * 1_000_000 + 900 if done else None,
         "retired": done,
         "timeout_ms": 600000,
         "is_p2p": p2p}
    if done:  # PyTorch inserts duration_ms right after time_created_ns
        keys = list(e)
        at = keys.index("time_created_ns") + 1
        e["duration_ms"] = 0.25 + i
        e = {k: e[k] for k in keys[:at] + ["duration_ms"] + keys[at:]}
    if layout == "2.10":
        e["thread_name"] = "pt_main_thread"
        e["thread_id"] = "140213971244864"
    return e


def dump(layout, n):
    version = "2.4" if layout == "ranks-list" else layout
    ranks = (lambda r: r) if layout == "ranks-list" else (lambda r: "[" + ", ".join(map(str, r)) + "]")
    d = {"version": version,
         "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": ranks([0, 1, 2, 3])},
                       # a non-ASCII desc: protocol 0 writes it with raw-unicode-escape
                       "1": {"name": "1", "desc": "TP \u00e9\u2014grp", "ranks": ranks([0, 1])}},
         }
    if layout == "2.7":
        d["nccl_version"] = "2.21.5"
    if layout == "2.10":
        d["comm_lib_version"] = "2.27.3"
    d["pg_status"] = {"0": {"last_enqueued_collective": n, "last_started_collective": n,
                            "last_completed_collective": n - 2},
                      "1": {"last_enqueued_collective": 1, "last_started_collective": -1,
                            "last_completed_collective": -1}}
    f = frames()
    d["entries"] = [entry(layout, i, n, f) for i in range(n)]
    d["nccl_comm_state"] = {"0": {"ncclCommDump": "not a real dump"}}
    return d


class Payload:
    """pickle.dumps writes REDUCE(os.system, ...) for it; nothing runs here."""

    def __reduce__(self):
        return (os.system, ("touch /tmp/firstfault-pickle-executed",))


class Plain:
    def __init__(self):
        self.version = "2.4"


def write(path, data):
    with open(path, "wb") as out:
        out.write(data)


def fixtures(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for layout in LAYOUTS:
        for p in PROTOCOLS:
            write(os.path.join(out_dir, f"dump-{layout}-p{p}.pkl"), pickle.dumps(dump(layout, 8), protocol=p))
    write(os.path.join(out_dir, "reduce-os-system.pkl"),
          pickle.dumps({"version": "2.4", "entries": [Payload()]}, protocol=2))
    write(os.path.join(out_dir, "class-instance.pkl"), pickle.dumps(Plain(), protocol=4))
    # Wrong types: entry 1's collective_seq_id is text, entry 2 is a list, group "1"
    # has ranks that are not numbers; the rest must still be read.
    d = dump("2.4", 4)
    d["entries"][1]["collective_seq_id"] = "7"
    d["entries"][2] = ["not", "an", "entry"]
    d["pg_config"]["1"]["ranks"] = "[0, one]"
    write(os.path.join(out_dir, "wrong-types.pkl"), pickle.dumps(d, protocol=2))
    # The memo shares one value among many places: 10,000 entries that are all the
    # same dict with 200,000 sizes (copied out, 2 billion numbers), and a 100,000
    # character profiling name shared by 10,000 more.
    sizes = {"record_id": 0, "input_sizes": [[1] * 1000] * 200}
    text = {"record_id": 1, "profiling_name": "x" * 100000}
    write(os.path.join(out_dir, "memo-amplified.pkl"),
          pickle.dumps({"version": "2.4", "entries": [sizes] * 10000 + [text] * 10000}, protocol=2))
    # Protocol 0-2 pickle bytes through _codecs.encode (GLOBAL + REDUCE).
    write(os.path.join(out_dir, "bytes-p2.pkl"), pickle.dumps({"version": b"2.4"}, protocol=2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["fixtures", "big"])
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=20000)
    ap.add_argument("--protocol", type=int, default=2)
    ap.add_argument("--layout", default="2.4", choices=LAYOUTS)
    a = ap.parse_args()
    if a.what == "fixtures":
        fixtures(a.out)
    else:
        write(a.out, pickle.dumps(dump(a.layout, a.entries), protocol=a.protocol))
    return 0


if __name__ == "__main__":
    sys.exit(main())
