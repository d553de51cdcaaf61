// DiagnosisStore over one SQLite connection (see diagnosis_store.h for the
// guarantees and sql/migrations/001_initial.sql for the tables).
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <mutex>

#include "agent/store/diagnosis_store.h"
#include "agent/store/schema_migrator.h"
#include "agent/store/sqlite_handle.h"
#include "agent/store/write_transaction.h"

namespace ff::agent {
namespace {

using nlohmann::json;

// How long one statement waits for another connection's lock before SQLite
// returns SQLITE_BUSY (then write_transaction retries the whole transaction).
constexpr int kBusyTimeoutMs = 5000;

// A text field of the diagnosis: absent and null become NULL; a number
// (a code written as 79 rather than "79") becomes its text.
std::optional<std::string> text_field(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}
std::string text_or_empty(const json& j, const char* key) {
  return text_field(j, key).value_or("");
}
// A root cause's "trusted": 1 or 0 when the engine said (a JSON bool), NULL
// when it did not (an older engine): read as untrusted.
std::optional<std::int64_t> trusted_field(const json& j) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find("trusted");
  if (it == j.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>() ? 1 : 0;
}
std::int64_t int_field(const json& j, const char* key, std::int64_t fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return fallback;
  return it->is_number_float() ? static_cast<std::int64_t>(it->get<double>())
                               : it->get<std::int64_t>();
}
const json& array_field(const json& j, const char* key) {
  static const json empty = json::array();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

// The columns every pass query selects, in the order read_pass expects.
#define FF_PASS_COLUMNS                                                                      \
  "id, job_id, attempt, pass_no, trigger, created_at, verdict, domain, summary, root_node, " \
  "comment_status, sub_domain, recommended_action, terminal_state, root_device, "            \
  "engine_version, diagnosis_json"

PassRecord read_pass(Statement& st, bool include_diagnosis) {
  PassRecord p;
  p.id = st.column_int(0);
  p.job_id = st.column_text(1);
  p.attempt = static_cast<int>(st.column_int(2));
  p.pass_no = static_cast<int>(st.column_int(3));
  p.trigger = st.column_text(4);
  p.created_at = st.column_int(5);
  p.verdict = st.column_text(6);
  p.domain = st.column_text(7);
  p.summary = st.column_text(8);
  p.root_node = st.column_text(9);
  p.comment_status = st.column_text(10);
  p.sub_domain = st.column_text(11);
  p.recommended_action = st.column_text(12);
  p.terminal_state = st.column_text(13);
  p.root_device = st.column_text(14);
  p.engine_version = st.column_text(15);
  if (include_diagnosis) {
    p.diagnosis_text = st.column_text(16);
    // The column holds valid JSON (CHECK json_valid); parse without throwing
    // anyway, so one damaged row cannot make a listing fail.
    p.diagnosis = json::parse(p.diagnosis_text, nullptr, false);
  }
  return p;
}

JobRecord read_job(Statement& st) {
  JobRecord j;
  j.job_id = st.column_text(0);
  j.attempt = static_cast<int>(st.column_int(1));
  j.cluster = st.column_text(2);
  j.user = st.column_text(3);
  j.state = st.column_text(4);
  j.exit_code = st.column_text(5);
  j.start_time = st.column_text(6);
  j.end_time = st.column_text(7);
  json nodes = json::parse(st.column_text(8), nullptr, false);
  if (nodes.is_array())
    for (const auto& n : nodes)
      if (n.is_string()) j.nodes.push_back(n.get<std::string>());
  return j;
}

class SqliteDiagnosisStore final : public DiagnosisStore {
 public:
  SqliteDiagnosisStore(const std::string& path, bool read_only)
      : db_(path, read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE),
        read_only_(read_only) {
    db_.exec("PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs));
    if (read_only) {
      int found = read_schema_version(db_);
      int known = latest_schema_version();
      refuse_newer_schema(db_);
      if (found == 0) throw StoreError(path + " is not a firstfault database (schema version 0)");
      if (found < known)
        throw StoreError(path + " has schema version " + std::to_string(found) +
                         ", this firstfault needs " + std::to_string(known) +
                         ": start the agent once (it migrates the database on start)");
      return;
    }
    // Before anything changes the file: a newer schema is left untouched.
    refuse_newer_schema(db_);
    // WAL: readers (show, history, the read endpoints, an operator's
    // sqlite3 shell) never block the writer and the writer never blocks them.
    std::string mode = db_.pragma_value("journal_mode = WAL");
    if (mode != "wal")
      throw StoreError(path + ": cannot use WAL (journal mode stays " + mode + ")");
    // FULL: every commit syncs the WAL, so an acknowledged bundle or pass
    // survives a power loss, not only a crash of the agent (NORMAL would
    // lose the last commits on power loss).
    db_.exec("PRAGMA synchronous = FULL");
    db_.exec("PRAGMA foreign_keys = ON");
    migrate(db_);
    reader_ = std::make_unique<SqliteHandle>(path, SQLITE_OPEN_READONLY);
    reader_->exec("PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs));
  }

  int schema_version() override {
    ReadAccess r = reading();
    return read_schema_version(r.db);
  }

  // Non-empty fields replace what is known; empty ones keep it (a bundle
  // knows the nodes, scontrol the state). nodes is the union, in the order
  // first seen.
  void upsert_job(const JobRecord& job) override {
    std::lock_guard lock(mutex_);
    write_transaction(db_, [&] {
      JobRecord merged = job;
      if (auto known = find_job(db_, job.job_id, job.attempt)) {
        auto keep = [](std::string& incoming, const std::string& stored) {
          if (incoming.empty()) incoming = stored;
        };
        keep(merged.cluster, known->cluster);
        keep(merged.user, known->user);
        keep(merged.state, known->state);
        keep(merged.exit_code, known->exit_code);
        keep(merged.start_time, known->start_time);
        keep(merged.end_time, known->end_time);
        merged.nodes = known->nodes;
        for (const auto& n : job.nodes)
          if (std::find(merged.nodes.begin(), merged.nodes.end(), n) == merged.nodes.end())
            merged.nodes.push_back(n);
      }
      auto st = db_.cached(
          "INSERT OR REPLACE INTO jobs (job_id, attempt, cluster, user, state, exit_code, "
          "start_time, end_time, nodes, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
          "?10)");
      st->bind(1, merged.job_id)
          .bind(2, merged.attempt)
          .bind(3, merged.cluster)
          .bind(4, merged.user)
          .bind(5, merged.state)
          .bind(6, merged.exit_code)
          .bind(7, merged.start_time)
          .bind(8, merged.end_time)
          .bind(9, json(merged.nodes).dump())
          .bind(10, static_cast<std::int64_t>(std::time(nullptr)))
          .run();
    });
  }

  std::optional<JobRecord> job(const std::string& job_id, int attempt) override {
    ReadAccess r = reading();
    return find_job(r.db, job_id, attempt);
  }

  bool add_bundle(const BundleRecord& b) override {
    std::lock_guard lock(mutex_);
    return write_transaction(db_, [&] {
      // DO NOTHING rather than OR IGNORE: only the duplicate key is
      // tolerated, a NOT NULL violation still fails loudly.
      auto st = db_.cached(
          "INSERT INTO bundles (bundle_id, job_id, attempt, node, pass, path, bytes, "
          "received_at, lines) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
          "ON CONFLICT (bundle_id) DO NOTHING");
      st->bind(1, b.bundle_id)
          .bind(2, b.job_id)
          .bind(3, b.attempt)
          .bind(4, b.node)
          .bind(5, b.pass)
          .bind(6, b.path)
          .bind(7, b.bytes)
          .bind(8, b.received_at)
          .bind(9, b.lines)
          .run();
      return db_.changes() == 1;
    });
  }

  std::vector<BundleRecord> bundles(const std::string& job_id, int attempt) override {
    ReadAccess r = reading();
    auto st = r.db.cached(
        "SELECT bundle_id, job_id, attempt, node, pass, path, bytes, received_at, lines "
        "FROM bundles "
        "WHERE job_id = ?1 AND attempt = ?2 ORDER BY received_at, bundle_id");
    st->bind(1, job_id).bind(2, attempt);
    std::vector<BundleRecord> out;
    while (st->step()) {
      BundleRecord b;
      b.bundle_id = st->column_text(0);
      b.job_id = st->column_text(1);
      b.attempt = static_cast<int>(st->column_int(2));
      b.node = st->column_text(3);
      b.pass = st->column_text(4);
      b.path = st->column_text(5);
      b.bytes = st->column_int(6);
      b.received_at = st->column_int(7);
      b.lines = st->column_int(8);
      out.push_back(std::move(b));
    }
    return out;
  }

  BundleTotals bundle_totals(const std::string& job_id, int attempt) override {
    ReadAccess r = reading();
    auto st = r.db.cached(
        "SELECT count(*), coalesce(sum(max(bytes, 0)), 0), coalesce(sum(max(lines, 0)), 0) "
        "FROM bundles WHERE job_id = ?1 AND attempt = ?2");
    st->bind(1, job_id).bind(2, attempt);
    BundleTotals t;
    if (st->step()) {
      t.bundles = static_cast<std::uint64_t>(st->column_int(0));
      t.bytes = static_cast<std::uint64_t>(st->column_int(1));
      t.lines = static_cast<std::uint64_t>(st->column_int(2));
    }
    return t;
  }

  PassRecord add_pass(const std::string& job_id, int attempt, const std::string& trigger,
                      const json& diagnosis, std::int64_t created_at) override {
    // The engine's key order is lost in nlohmann::json; add_pass_text keeps it.
    std::string text = diagnosis.dump(2, ' ', false, json::error_handler_t::replace);
    return store_pass(job_id, attempt, trigger, diagnosis, text, created_at);
  }

  PassRecord add_pass_text(const std::string& job_id, int attempt, const std::string& trigger,
                           const std::string& diagnosis_json, std::int64_t created_at) override {
    json diagnosis = json::parse(diagnosis_json, nullptr, false);
    if (diagnosis.is_discarded())
      throw StoreError("diagnosis of job " + job_id + " is not valid JSON; pass not stored");
    return store_pass(job_id, attempt, trigger, diagnosis, diagnosis_json, created_at);
  }

  void set_comment_status(std::int64_t pass_id, const std::string& status) override {
    std::lock_guard lock(mutex_);
    write_transaction(db_, [&] {
      auto st = db_.cached("UPDATE diagnoses SET comment_status = ?1 WHERE id = ?2");
      st->bind(1, status).bind(2, pass_id).run();
      if (db_.changes() != 1) throw StoreError("no pass with id " + std::to_string(pass_id));
    });
  }

  std::optional<PassRecord> latest_pass(const std::string& job_id, int attempt) override {
    ReadAccess r = reading();
    // Both forms are lookups in the UNIQUE (job_id, attempt, pass_no) index.
    auto st = attempt < 0 ? r.db.cached("SELECT " FF_PASS_COLUMNS
                                        " FROM diagnoses WHERE job_id = ?1 "
                                        "ORDER BY attempt DESC, pass_no DESC LIMIT 1")
                          : r.db.cached("SELECT " FF_PASS_COLUMNS
                                        " FROM diagnoses WHERE job_id = ?1 AND attempt = ?2 "
                                        "ORDER BY pass_no DESC LIMIT 1");
    st->bind(1, job_id);
    if (attempt >= 0) st->bind(2, attempt);
    if (!st->step()) return std::nullopt;
    return read_pass(*st, true);
  }

  std::vector<PassRecord> passes(const std::string& job_id) override {
    ReadAccess r = reading();
    auto st = r.db.cached("SELECT " FF_PASS_COLUMNS
                          " FROM diagnoses WHERE job_id = ?1 ORDER BY attempt, pass_no");
    st->bind(1, job_id);
    std::vector<PassRecord> out;
    while (st->step()) out.push_back(read_pass(*st, true));
    return out;
  }

  std::vector<PassRecord> list(const ListFilter& filter) override {
    ReadAccess r = reading();
    auto st =
        r.db.cached("SELECT " FF_PASS_COLUMNS
                    " FROM last_diagnoses AS d "
                    "WHERE d.created_at >= ?2 "
                    "AND (?4 = 0 OR d.verdict <> 'no_failure') "
                    "AND (?1 = '' "
                    "     OR EXISTS (SELECT 1 FROM root_causes AS rc WHERE rc.diagnosis_id = d.id "
                    "                AND rc.node = ?1) "
                    "     OR EXISTS (SELECT 1 FROM affected_nodes AS a WHERE a.diagnosis_id = d.id "
                    "                AND a.node = ?1)) "
                    "ORDER BY d.created_at DESC, d.id DESC LIMIT ?3");
    st->bind(1, filter.node)
        .bind(2, filter.since)
        .bind(3, filter.limit > 0 ? filter.limit : -1)
        .bind(4, filter.failures_only ? 1 : 0);
    std::vector<PassRecord> out;
    while (st->step()) out.push_back(read_pass(*st, filter.include_diagnosis));
    return out;
  }

  std::vector<Sighting> sightings(std::int64_t since) override {
    ReadAccess r = reading();
    auto st = r.db.cached(
        "SELECT job_id, attempt, diagnosis_id, seen_at, verdict, role, domain, sub_domain, node, "
        "device, device_uuid, event, origin, trusted FROM suspect_sightings "
        "WHERE created_at >= ?1 "
        "ORDER BY seen_at, job_id, attempt, role, node, device, event, diagnosis_id");
    st->bind(1, since);
    std::vector<Sighting> out;
    while (st->step()) {
      Sighting s;
      s.job_id = st->column_text(0);
      s.attempt = static_cast<int>(st->column_int(1));
      s.diagnosis_id = st->column_int(2);
      s.seen_at = st->column_int(3);
      s.verdict = st->column_text(4);
      s.role = st->column_text(5);
      s.domain = st->column_text(6);
      s.sub_domain = st->column_text(7);
      s.node = st->column_text(8);
      s.device = st->column_text(9);
      s.device_uuid = st->column_text(10);
      s.event = st->column_text(11);
      s.origin = st->column_text(12);
      s.trusted = st->column_int(13) == 1;
      out.push_back(std::move(s));
    }
    return out;
  }

  std::int64_t add_drain_action(const DrainAction& a) override {
    std::lock_guard lock(mutex_);
    if (read_only_) throw StoreError("the database is open read-only");
    return write_transaction(db_, [&] {
      auto st = db_.cached(
          "INSERT INTO drain_actions (created_at, job_id, attempt, diagnosis_id, node, device, "
          "decision, reason, blames, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
      st->bind(1, a.created_at)
          .bind(2, a.job_id)
          .bind(3, a.attempt)
          .bind(4, a.diagnosis_id)
          .bind(5, a.node)
          .bind(6, a.device)
          .bind(7, a.decision)
          .bind(8, a.reason)
          .bind(9, a.blames)
          .bind(10, a.detail)
          .run();
      return db_.last_insert_rowid();
    });
  }

  std::vector<JobActivity> job_activity() override {
    ReadAccess r = reading();
    auto st = r.db.cached(
        "SELECT job_id, attempt, max(at), max(closing) FROM ("
        "  SELECT job_id, attempt, received_at AS at, 0 AS closing FROM bundles"
        "  UNION ALL SELECT job_id, attempt, created_at, trigger IN ('final', 'deadline')"
        "    FROM diagnoses"
        "  UNION ALL SELECT job_id, attempt, updated_at, 0 FROM jobs) "
        "GROUP BY job_id, attempt ORDER BY 3, 1, 2");
    std::vector<JobActivity> out;
    while (st->step()) {
      JobActivity a;
      a.job_id = st->column_text(0);
      a.attempt = static_cast<int>(st->column_int(1));
      a.last_at = st->column_int(2);
      a.closing_pass = st->column_int(3) != 0;
      out.push_back(std::move(a));
    }
    return out;
  }

  void delete_job_attempt(const std::string& job_id, int attempt) override {
    std::lock_guard lock(mutex_);
    if (read_only_) throw StoreError("the database is open read-only");
    write_transaction(db_, [&] {
      // The child rows of each pass go with it (ON DELETE CASCADE);
      // drain_actions stay: a drain is on record whatever was deleted.
      for (const char* sql : {"DELETE FROM diagnoses WHERE job_id = ?1 AND attempt = ?2",
                              "DELETE FROM bundles WHERE job_id = ?1 AND attempt = ?2",
                              "DELETE FROM jobs WHERE job_id = ?1 AND attempt = ?2"}) {
        auto st = db_.cached(sql);
        st->bind(1, job_id).bind(2, attempt).run();
      }
    });
  }

  std::vector<PassRecord> passes_with_comment_pending(std::int64_t since) override {
    ReadAccess r = reading();
    auto st = r.db.cached("SELECT " FF_PASS_COLUMNS
                          " FROM diagnoses AS d WHERE d.comment_status = '' "
                          "AND d.trigger IN ('fastpass', 'final', 'deadline') "
                          "AND d.created_at >= ?1 "
                          "AND d.pass_no = (SELECT max(n.pass_no) FROM diagnoses AS n "
                          "                 WHERE n.job_id = d.job_id AND n.attempt = d.attempt) "
                          "ORDER BY d.created_at, d.id");
    st->bind(1, since);
    std::vector<PassRecord> out;
    while (st->step()) out.push_back(read_pass(*st, false));
    return out;
  }

  std::vector<DrainAction> drain_actions(std::int64_t since) override {
    ReadAccess r = reading();
    auto st = r.db.cached(
        "SELECT id, created_at, job_id, attempt, diagnosis_id, node, device, decision, reason, "
        "blames, detail FROM drain_actions WHERE created_at >= ?1 ORDER BY created_at, id");
    st->bind(1, since);
    std::vector<DrainAction> out;
    while (st->step()) {
      DrainAction a;
      a.id = st->column_int(0);
      a.created_at = st->column_int(1);
      a.job_id = st->column_text(2);
      a.attempt = static_cast<int>(st->column_int(3));
      a.diagnosis_id = st->column_int(4);
      a.node = st->column_text(5);
      a.device = st->column_text(6);
      a.decision = st->column_text(7);
      a.reason = st->column_text(8);
      a.blames = static_cast<int>(st->column_int(9));
      a.detail = st->column_text(10);
      out.push_back(std::move(a));
    }
    return out;
  }

 private:
  // A read: the reader connection and its lock, or (read-only store) the
  // one connection and the writer's lock.
  struct ReadAccess {
    std::unique_lock<std::mutex> lock;
    SqliteHandle& db;
  };
  ReadAccess reading() {
    if (reader_) return {std::unique_lock(read_mutex_), *reader_};
    return {std::unique_lock(mutex_), db_};
  }

  static std::optional<JobRecord> find_job(SqliteHandle& db, const std::string& job_id,
                                           int attempt) {
    auto st = db.cached(
        "SELECT job_id, attempt, cluster, user, state, exit_code, start_time, end_time, nodes "
        "FROM jobs WHERE job_id = ?1 AND attempt = ?2");
    st->bind(1, job_id).bind(2, attempt);
    if (!st->step()) return std::nullopt;
    return read_job(*st);
  }

  PassRecord store_pass(const std::string& job_id, int attempt, const std::string& trigger,
                        const json& d, const std::string& text, std::int64_t created_at) {
    std::lock_guard lock(mutex_);
    if (read_only_) throw StoreError("the database is open read-only");
    return write_transaction(db_, [&] {
      // pass_no is computed inside the write transaction: two threads or two
      // processes storing a pass of one job attempt get 1 and 2, never 1 twice.
      int pass_no = 1;
      {
        auto st = db_.cached(
            "SELECT coalesce(max(pass_no), 0) + 1 FROM diagnoses "
            "WHERE job_id = ?1 AND attempt = ?2");
        st->bind(1, job_id).bind(2, attempt);
        if (st->step()) pass_no = static_cast<int>(st->column_int(0));
      }
      const json& roots = array_field(d, "root_causes");
      const json first_root = roots.empty() ? json::object() : roots.front();
      {
        auto st = db_.cached(
            "INSERT INTO diagnoses (job_id, attempt, pass_no, trigger, created_at, "
            "terminal_state, verdict, domain, sub_domain, recommended_action, summary, root_node, "
            "root_device, root_event, engine_version, diagnosis_json) VALUES (?1, ?2, ?3, ?4, "
            "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
        st->bind(1, job_id)
            .bind(2, attempt)
            .bind(3, pass_no)
            .bind(4, trigger)
            .bind(5, created_at)
            .bind(6, text_field(d, "terminal_state"))
            .bind(7, text_or_empty(d, "verdict"))
            .bind(8, text_field(d, "domain"))
            .bind(9, text_field(d, "sub_domain"))
            .bind(10, text_field(d, "recommended_action"))
            .bind(11, text_or_empty(d, "summary"))
            .bind(12, text_field(first_root, "node"))
            .bind(13, text_field(first_root, "device"))
            .bind(14, text_field(first_root, "event"))
            .bind(15, text_field(d, "engine_version"))
            .bind(16, text)
            .run();
      }
      std::int64_t id = db_.last_insert_rowid();
      store_children(id, d);

      PassRecord p;
      p.id = id;
      p.job_id = job_id;
      p.attempt = attempt;
      p.pass_no = pass_no;
      p.trigger = trigger;
      p.created_at = created_at;
      p.verdict = text_or_empty(d, "verdict");
      p.domain = text_or_empty(d, "domain");
      p.summary = text_or_empty(d, "summary");
      p.root_node = text_or_empty(first_root, "node");
      p.sub_domain = text_or_empty(d, "sub_domain");
      p.recommended_action = text_or_empty(d, "recommended_action");
      p.terminal_state = text_or_empty(d, "terminal_state");
      p.root_device = text_or_empty(first_root, "device");
      p.engine_version = text_or_empty(d, "engine_version");
      p.diagnosis = d;
      p.diagnosis_text = text;
      return p;
    });
  }

  // The child rows of one pass. Duplicates inside one diagnosis (an
  // evidence id or affected node listed twice) are stored once rather than
  // failing the pass: losing a diagnosis is worse than losing a duplicate.
  void store_children(std::int64_t id, const json& d) {
    std::int64_t ordinal = 0;
    for (const auto& r : array_field(d, "root_causes")) {
      auto st = db_.cached(
          "INSERT OR IGNORE INTO root_causes (diagnosis_id, ordinal, node, device, event, code, "
          "time, summary, domain, sub_domain, device_uuid, origin, trusted) VALUES (?1, ?2, ?3, "
          "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
      st->bind(1, id)
          .bind(2, ordinal++)
          .bind(3, text_field(r, "node"))
          .bind(4, text_field(r, "device"))
          .bind(5, text_or_empty(r, "event"))
          .bind(6, text_field(r, "code"))
          .bind(7, text_field(r, "time"))
          .bind(8, text_or_empty(r, "summary"))
          .bind(9, text_field(r, "domain"))
          .bind(10, text_field(r, "sub_domain"))
          .bind(11, text_field(r, "device_uuid"))
          .bind(12, text_field(r, "origin"))
          .bind(13, trusted_field(r))
          .run();
    }
    for (const auto& n : array_field(d, "affected_nodes")) {
      if (!n.is_string()) continue;
      auto st =
          db_.cached("INSERT OR IGNORE INTO affected_nodes (diagnosis_id, node) VALUES (?1, ?2)");
      st->bind(1, id).bind(2, n.get<std::string>()).run();
    }
    ordinal = 0;
    for (const auto& s : array_field(d, "symptoms")) {
      auto st = db_.cached(
          "INSERT OR IGNORE INTO symptoms (diagnosis_id, ordinal, node, kind, status, count, "
          "first_time, explained_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
      st->bind(1, id)
          .bind(2, ordinal++)
          .bind(3, text_field(s, "node"))
          .bind(4, text_or_empty(s, "kind"))
          .bind(5, text_or_empty(s, "status"))
          .bind(6, int_field(s, "count", 0))
          .bind(7, text_field(s, "first_time"))
          .bind(8, text_field(s, "explained_by"))
          .run();
    }
    ordinal = 0;
    for (const auto& e : array_field(d, "evidence")) {
      auto st = db_.cached(
          "INSERT OR IGNORE INTO evidence (diagnosis_id, evidence_id, time, node, source, line, "
          "event, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
      st->bind(1, id)
          .bind(2, int_field(e, "id", ordinal))
          .bind(3, text_field(e, "time"))
          .bind(4, text_field(e, "node"))
          .bind(5, text_or_empty(e, "source"))
          .bind(6, int_field(e, "line", 0))
          .bind(7, text_or_empty(e, "event"))
          .bind(8, text_or_empty(e, "text"))
          .run();
      ++ordinal;
    }
    ordinal = 0;
    for (const auto& c : array_field(d, "coverage")) {
      auto st = db_.cached(
          "INSERT OR IGNORE INTO coverage (diagnosis_id, ordinal, node, source, status, lines, "
          "detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
      st->bind(1, id)
          .bind(2, ordinal++)
          .bind(3, text_field(c, "node"))
          .bind(4, text_or_empty(c, "source"))
          .bind(5, text_or_empty(c, "status"))
          .bind(6, int_field(c, "lines", 0))
          .bind(7, text_or_empty(c, "detail"))
          .run();
    }
  }

  // One writing connection for all threads, one call at a time (see the
  // header). Connections are opened with SQLITE_OPEN_NOMUTEX: each mutex is
  // the only lock its connection needs.
  std::mutex mutex_;
  SqliteHandle db_;
  bool read_only_;
  // Reads have a connection of their own: in WAL mode nothing blocks a
  // reader, so while a write waits out a lock held by another process (an
  // operator's sqlite3 shell in BEGIN EXCLUSIVE) the read endpoints, `show`
  // and the pass runner's bundle lists still answer. Absent when the store
  // itself is read-only.
  std::mutex read_mutex_;
  std::unique_ptr<SqliteHandle> reader_;
};

}  // namespace

int DiagnosisStore::latest_schema_version() {
  return agent::latest_schema_version();
}

std::unique_ptr<DiagnosisStore> DiagnosisStore::open(const std::string& path) {
  return std::make_unique<SqliteDiagnosisStore>(path, false);
}

std::unique_ptr<DiagnosisStore> DiagnosisStore::open_readonly(const std::string& path) {
  // SQLITE_OPEN_READONLY on a missing file fails with a bare "unable to
  // open database file"; say what is missing instead.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw StoreError("no database at " + path);
  return std::make_unique<SqliteDiagnosisStore>(path, true);
}

}  // namespace ff::agent
