// A PyTorch flight-recorder dump (nodes/<node>/flight_recorder/<global-rank>,
// docs/spec/incident.md): the pickle ProcessGroupNCCL
// writes when a collective times out (TORCH_NCCL_TRACE_BUFFER_SIZE > 0,
// TORCH_NCCL_DUMP_ON_TIMEOUT), read into the engine's model without executing
// anything (engine/read/pickle_value.h).
//
// The layout, from PyTorch's writer (FlightRecorder::dump_dict and
// getCollectiveTrace in torch/csrc/distributed/c10d/FlightRecorderDetail.hpp;
// earlier in NCCLUtils.hpp and FlightRecorder.hpp,
// https://github.com/pytorch/pytorch) and its reader
// (torch/distributed/flight_recorder/components/builder.py):
//   {"version": "2.4", "pg_config": {name: {"name", "desc", "ranks"}},
//    "pg_status": {"<pg id>": {"last_enqueued_collective", "last_started_collective",
//                              "last_completed_collective"}},
//    "entries": [{"record_id", "pg_id", "process_group": (name, desc),
//                 "collective_seq_id", "p2p_seq_id", "op_id", "profiling_name",
//                 "time_created_ns", "duration_ms", "input_sizes", "input_dtypes",
//                 "output_sizes", "output_dtypes", "state", "time_discovered_started_ns",
//                 "time_discovered_completed_ns", "retired", "timeout_ms", "is_p2p",
//                 "frames", ...}],
//    "nccl_comm_state": {...}, "comm_lib_version" or "nccl_version": "..."}
// "ranks" is the text "[0, 1, 2]" as PyTorch writes it (ranks_str); a list of
// ints is read too. Keys this reader does not use are ignored; a used key of
// the wrong type is an error and skips its entry (or its pg_config/pg_status
// item), the rest is kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ff {

struct FlightRecorderEntry {
  std::int64_t record_id = -1;
  std::string pg_id;  // the entry's pg_id as decimal text ("0", "2"): PyTorch's "PG ID N"
  std::string pg_name,
      pg_desc;  // process_group tuple (name = GUID text, desc e.g. "default_pg"), may be ""
  std::int64_t collective_seq_id = -1, p2p_seq_id = -1, op_id = -1;
  bool is_p2p = false;
  std::string profiling_name;  // "nccl:all_reduce"
  std::int64_t time_created_ns = -1;
  std::string state;  // "scheduled" | "started" | "completed" (as written; other text kept)
  std::vector<std::vector<std::int64_t>> input_sizes, output_sizes;
  std::int64_t timeout_ms = -1;
};

struct FlightRecorderPg {
  std::string pg_id_or_name;  // the pg_config key
  std::string name, desc;
  std::vector<int> ranks;  // global ranks
};

struct FlightRecorderDump {
  std::string version;                      // "2.2" ... as in the dump
  int rank = -1;                            // from the file name (the caller passes it)
  std::vector<FlightRecorderPg> pg_config;  // sorted by key
  // pg_status: per pg key, last_enqueued/started/completed collective (-1 unknown)
  struct PgStatus {
    std::string pg;
    std::int64_t last_enqueued = -1, last_started = -1, last_completed = -1;
  };
  std::vector<PgStatus> pg_status;           // sorted by key
  std::vector<FlightRecorderEntry> entries;  // in dump order
  bool truncated = false;                    // the pickle ended early: entries read so far kept
  std::vector<std::string>
      errors;  // what could not be read ("opcode 0x63 (GLOBAL) not allowed at byte 17")
};

// Largest dump read: PyTorch's default ring holds 2,000 entries (about 1 MB
// pickled with stack frames); 100,000 entries without frames are about 40 MB.
constexpr std::size_t kMaxFlightRecorderBytes = 64u << 20;
// Entries kept; the ones after are counted in `errors`, not read.
constexpr std::size_t kMaxFlightRecorderEntries = 100'000;
// Process groups kept from pg_config and pg_status, ranks per group.
constexpr std::size_t kMaxFlightRecorderGroups = 100'000;
constexpr std::size_t kMaxFlightRecorderGroupRanks = 1'000'000;
// The pickle memo lets one list or string be referred to from every entry:
// copied into the model, a 16 MB string or a million sizes would be copied
// 100,000 times. So text fields are cut off at a length no PyTorch name
// reaches, and the sizes and ranks copied from one dump have one budget.
constexpr std::size_t kMaxFlightRecorderText = 4096;
constexpr std::size_t kMaxFlightRecorderNumbers = 16'000'000;
// Keys of one entry, group or status dict (PyTorch writes about 22): every
// field is looked up by name, and one dict can stand for every entry.
constexpr std::size_t kMaxFlightRecorderKeys = 128;

// Bounded: at most `kMaxFlightRecorderBytes` input, nesting depth, item counts,
// string sizes; never executes anything. Never throws.
FlightRecorderDump read_flight_recorder(std::string_view bytes, int rank);

}  // namespace ff
