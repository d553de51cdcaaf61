// Where the ranks' progress through their collectives becomes a finding
// about a hang: per process group, the collective the ranks timed out in
// and the ranks that never reached it.
//
//   watchdog and progress lines ─┐
//   flight-recorder dumps ───────┴─► RankReport per (group, rank) ─► HangFinding
//
// A rank's last enqueued collective below the one the others timed out in
// means it never got there (stuck in compute, data loading, a dead GPU, a
// Python hang); every rank at or past it means the collective itself
// stalled (network, NVLink) and no rank is to blame. Ranks nobody reported
// on are `silent`: missing output is not evidence of a lagging rank.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "engine/read/flight_recorder.h"
#include "incident/diagnosis.h"
#include "incident/job_info.h"

namespace ff {

constexpr std::size_t kNoEvent = std::numeric_limits<std::size_t>::max();

// What one source says about one rank of one process group.
struct RankReport {
  std::string pg;       // the group's local id as PyTorch prints it ("0" = default group)
  int rank = -1;        // global rank, -1 unknown
  int group_rank = -1;  // rank inside the group, -1 unknown
  std::string node;     // the node the source ties it to, "" unknown
  std::optional<std::int64_t> timed_out_at, last_enqueued, last_completed;
  std::string op;      // the collective of timed_out_at, as the source names it
  std::string source;  // watchdog | flight_recorder | desync_report | nccl_ras
  // The source says outright that this rank did not get where the others
  // did (a desync report, NCCL RAS), without a sequence number to compare.
  bool behind = false;
  MaybeTime time;                // when the line was written, when known
  std::size_t event = kNoEvent;  // the event it rests on (index into the attribution's events)
};

// One process's rank in one NCCL communicator (NCCL's set-up lines).
struct CommMember {
  std::string comm_id;
  int comm_rank = -1, nranks = 0;
  std::string node, pid;
};

// One collective of one rank, as a flight recorder saw it.
struct CollectiveState {
  std::string pg;
  int rank = -1;  // global
  std::int64_t seq = 0;
  std::string op;     // "nccl:all_reduce"
  std::string state;  // scheduled | started | completed
};

// The finding, with evidence as event indexes (the diagnosis maps them to ids).
struct HangFinding {
  Hang hang;  // evidence lists empty: see rank_events
  // Per group and rank row of `hang.groups`, the events it rests on.
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::size_t>> rank_events;
  bool shown() const { return !hang.status.empty(); }
};

class CollectiveProgress {
 public:
  void add(const RankReport& r);
  void add_state(const CollectiveState& s);
  // The members of a group (global ranks, in group order), from a flight recorder's pg_config.
  void set_members(const std::string& pg, const std::string& name, const std::vector<int>& ranks);
  void add_comm_member(const CommMember& m);
  // A rank's flight-recorder dump: its collectives per group, the groups'
  // members, resting on `event` (the dump's evidence).
  void add_flight_recorder(const FlightRecorderDump& dump, const std::string& node,
                           std::size_t event);
  bool empty() const { return reports_.empty() && states_.empty(); }
  HangFinding analyse(const JobInfo& job) const;

  // Ops as sources name them ("ALLREDUCE", "nccl:all_reduce", "_ALLGATHER_BASE")
  // in one spelling, so that two sources agree on the same collective.
  static std::string normalise_op(const std::string& op);

 private:
  struct Group {
    std::string name;
    std::vector<int> members;  // global ranks in group order; empty = unknown
  };
  std::vector<RankReport> reports_;
  // (pg, rank, seq) → state; bounded like everything read from a user's files.
  std::map<std::tuple<std::string, int, std::int64_t>, CollectiveState> states_;
  std::map<std::string, Group> groups_;
  std::vector<CommMember> comm_members_;
  // The members of a group that names none, from the one communicator whose
  // ranks agree with every (global, group) pair its reports give.
  std::vector<int> members_from_communicators(const std::vector<RankReport>& reports,
                                              int world) const;
  std::size_t dropped_ = 0;
};

}  // namespace ff
