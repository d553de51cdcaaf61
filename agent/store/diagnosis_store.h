// The agent's SQLite database: jobs, received bundles, and one diagnosis row
// per engine pass with its root causes, symptoms, evidence and coverage.
// The schema lives in sql/migrations/; this class is the only code that
// writes SQL against it.
//
// Durability: WAL with synchronous=FULL, so a call that returned has its
// rows on disk and they survive a crash of the agent or of the machine.
// Threads: one store object may be shared by any number of threads; it owns
// a writing and a reading connection and serialises the calls on each with
// a mutex (calls are short: milliseconds). Reads never wait behind a write
// that waits for another process's lock.
// Processes: any number of stores, in any processes, may open one file;
// writers wait for each other (busy timeout, then a bounded retry of the
// whole transaction), readers never block a writer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/suspects/suspect_report.h"

namespace ff::agent {

struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
  // Another process kept the database locked past the busy timeout and the
  // retries: the same call may well succeed later (the HTTP layer answers
  // 503 so the collector sends the bundle again).
  virtual bool busy() const { return false; }
};

// How a job attempt is shown to operators: "12" for the first attempt,
// "12.1" for the first requeue (as the `suspects` SQL view writes it).
inline std::string job_label(const std::string& job_id, int attempt) {
  return attempt == 0 ? job_id : job_id + "." + std::to_string(attempt);
}

// One job attempt as the agent knows it (from bundles and scontrol).
struct JobRecord {
  std::string job_id;
  int attempt = 0;
  std::string cluster;
  std::string user;
  std::string state;       // Slurm terminal state, "" while unknown
  std::string exit_code;   // "exit:signal"
  std::string start_time;  // RFC 3339, "" while unknown
  std::string end_time;
  std::vector<std::string> nodes;  // expanded node names
};

// One bundle as received and stored on disk.
struct BundleRecord {
  std::string bundle_id;
  std::string job_id;
  int attempt = 0;
  std::string node;
  std::string pass;  // "step" or "epilog"
  std::string path;  // directory under state_dir
  std::int64_t bytes = 0;
  std::int64_t lines = 0;        // newline-separated lines over all its files
  std::int64_t received_at = 0;  // unix seconds (agent bookkeeping, not the engine)
};

struct BundleTotals {
  std::uint64_t bundles = 0;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
};

// One stored engine pass.
struct PassRecord {
  std::int64_t id = 0;
  std::string job_id;
  int attempt = 0;
  int pass_no = 0;              // 1, 2, ... per job attempt
  std::string trigger;          // "fastpass", "final", "deadline", "replay"
  std::int64_t created_at = 0;  // unix seconds
  std::string verdict;          // diagnosis "verdict" field
  std::string domain;
  std::string summary;
  std::string root_node;
  std::string comment_status;  // "written", "failed: ...", "not_needed", "" (not tried yet)
  nlohmann::json diagnosis;    // the full diagnosis JSON
  // Added by the store work (after the fields above, so existing aggregate
  // initialisations keep compiling):
  std::string sub_domain;
  std::string recommended_action;
  std::string terminal_state;
  std::string root_device;
  std::string engine_version;
  std::string diagnosis_text;  // the diagnosis JSON exactly as stored
};

// One decision of the drain policy (agent/drain/, table drain_actions).
struct DrainAction {
  std::int64_t id = 0;
  std::int64_t created_at = 0;  // unix seconds
  std::string job_id;
  int attempt = 0;
  std::int64_t diagnosis_id = 0;  // the pass that decided
  std::string node;
  std::string device;    // the root cause's device, "" for the node itself
  std::string decision;  // drained | would_drain | declined | failed
  std::string reason;    // the drain Reason given to Slurm, or why not
  int blames = 0;        // hardware blames of the node in the window
  std::string detail;    // scontrol's answer, the node state, ...
};

// When a job attempt was last heard of (its newest bundle, pass or job row,
// unix seconds) and whether its final or deadline pass is stored: what the
// retention sweep decides on.
struct JobActivity {
  std::string job_id;
  int attempt = 0;
  std::int64_t last_at = 0;
  bool closing_pass = false;
};

struct ListFilter {
  std::string node;               // root cause or affected node; "" = any
  std::int64_t since = 0;         // unix seconds; 0 = any
  int limit = 50;                 // <= 0: no limit
  bool failures_only = false;     // leave out no_failure passes
  bool include_diagnosis = true;  // false: diagnosis and diagnosis_text stay empty
                                  // (a listing needs no evidence lines)
};

class DiagnosisStore {
 public:
  // Opens (creating when missing) the database, sets WAL and a busy timeout,
  // and applies every pending migration. Throws StoreError.
  static std::unique_ptr<DiagnosisStore> open(const std::string& path);
  // Opens an existing database read-only (the `show` and `history` commands).
  // Throws StoreError when the file is missing ("no database at PATH"), is
  // not a firstfault database, or has another schema version than this
  // binary (older: the agent migrates it on start; newer: upgrade).
  static std::unique_ptr<DiagnosisStore> open_readonly(const std::string& path);
  virtual ~DiagnosisStore() = default;

  // The newest schema version this binary knows; open() migrates to it,
  // open_readonly() requires it.
  static int latest_schema_version();

  virtual int schema_version() = 0;

  virtual void upsert_job(const JobRecord& job) = 0;
  virtual std::optional<JobRecord> job(const std::string& job_id, int attempt) = 0;

  // Records a bundle. Returns false (and changes nothing) when bundle_id is
  // already stored: uploads are retried, rows are never duplicated.
  virtual bool add_bundle(const BundleRecord& bundle) = 0;
  virtual std::vector<BundleRecord> bundles(const std::string& job_id, int attempt) = 0;
  // What a job attempt's stored bundles add up to (a negative count as 0):
  // asked on every upload, so it is one aggregate query, not the listing
  // above (4,096 uploads of one job would read 4,096 x 4,096 / 2 rows).
  virtual BundleTotals bundle_totals(const std::string& job_id, int attempt) = 0;

  // Stores one pass in one transaction: the diagnoses row and its root_causes,
  // symptoms, evidence and coverage rows taken from `diagnosis`. Returns the
  // pass with id and pass_no filled in.
  virtual PassRecord add_pass(const std::string& job_id, int attempt, const std::string& trigger,
                              const nlohmann::json& diagnosis, std::int64_t created_at) = 0;
  // The same with the diagnosis as JSON text, stored byte for byte (the
  // nlohmann::json above sorts its keys; this keeps the engine's order, so
  // `firstfault show --format json` prints what `firstfault analyze
  // --format json` printed). Throws StoreError when the text is not JSON.
  // (Not pure, so a test double of this interface need not implement it.)
  virtual PassRecord add_pass_text(const std::string& job_id, int attempt,
                                   const std::string& trigger, const std::string& diagnosis_json,
                                   std::int64_t created_at) {
    auto diagnosis = nlohmann::json::parse(diagnosis_json, nullptr, false);
    if (diagnosis.is_discarded()) throw StoreError("diagnosis of job " + job_id + " is not JSON");
    return add_pass(job_id, attempt, trigger, diagnosis, created_at);
  }
  virtual void set_comment_status(std::int64_t pass_id, const std::string& status) = 0;

  // The newest pass of a job (attempt -1: the newest attempt).
  virtual std::optional<PassRecord> latest_pass(const std::string& job_id, int attempt = -1) = 0;
  // Every pass of every attempt, oldest first (attempt, then pass_no).
  virtual std::vector<PassRecord> passes(const std::string& job_id) = 0;
  // Newest first (created_at, then id); the newest pass per job attempt
  // only; filtered by ListFilter (node: a root-cause or affected node).
  virtual std::vector<PassRecord> list(const ListFilter& filter) = 0;
  // Every component named by a failed current diagnosis stored at or after
  // `since` (created_at, unix seconds): the `suspect_sightings` view, ordered
  // by seen_at, job_id, attempt, role, node, device. Input of find_suspects.
  // (Not pure, so a test double of this interface need not implement it.)
  virtual std::vector<Sighting> sightings(std::int64_t since) {
    (void)since;
    throw StoreError("sightings: not supported by this store");
  }
  // Every job attempt the database knows, least recently heard of first.
  // (Not pure, so a test double of this interface need not implement it.)
  virtual std::vector<JobActivity> job_activity() {
    throw StoreError("job_activity: not supported by this store");
  }
  // Deletes a job attempt's passes (with their child rows), bundles and job
  // row in one transaction; drain_actions stay.
  virtual void delete_job_attempt(const std::string& job_id, int attempt) {
    (void)job_id;
    (void)attempt;
    throw StoreError("delete_job_attempt: not supported by this store");
  }
  // The newest pass of each job attempt, stored at or after `since`, whose
  // Comment was never tried (comment_status '': the agent stopped between
  // storing the pass and setting the status), oldest first.
  virtual std::vector<PassRecord> passes_with_comment_pending(std::int64_t since) {
    (void)since;
    throw StoreError("passes_with_comment_pending: not supported by this store");
  }
  // Records one drain decision; returns its id.
  // (Not pure, so a test double of this interface need not implement it.)
  virtual std::int64_t add_drain_action(const DrainAction& action) {
    (void)action;
    throw StoreError("add_drain_action: not supported by this store");
  }
  // Drain decisions made at or after `since` (created_at), oldest first.
  virtual std::vector<DrainAction> drain_actions(std::int64_t since) {
    (void)since;
    throw StoreError("drain_actions: not supported by this store");
  }
};

}  // namespace ff::agent
