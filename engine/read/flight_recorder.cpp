#include "engine/read/flight_recorder.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <new>
#include <system_error>

#include "engine/read/pickle_value.h"

namespace ff {

namespace {

// Errors kept per dump: a dump whose every entry is malformed says so once
// per entry up to here, then counts the rest.
constexpr std::size_t kMaxErrors = 20;

class DumpReader {
 public:
  DumpReader(const PickleDocument& doc, FlightRecorderDump& dump) : doc_(doc), dump_(dump) {}

  void read(const PickleValue& root) {
    if (root.kind != PickleKind::kDict) {
      error(std::string("the dump is a ") + pickle_kind_name(root.kind) + ", not a dict");
      return;
    }
    if (const PickleValue* v = doc_.find(root, "version")) {
      if (v->kind == PickleKind::kStr && v->text.size() <= kMaxFlightRecorderText) {
        dump_.version = v->text;
      } else {
        error(std::string("'version' is ") + pickle_kind_name(v->kind) +
              ", expected str of at most " + std::to_string(kMaxFlightRecorderText) + " bytes");
      }
    } else if (!root.partial) {
      error("no 'version' key");
    }
    if (const PickleValue* v = doc_.find(root, "pg_config")) read_pg_config(*v);
    if (const PickleValue* v = doc_.find(root, "pg_status")) read_pg_status(*v);
    if (const PickleValue* v = doc_.find(root, "entries")) read_entries(*v);
  }

  void finish() {
    if (suppressed_ > 0) {
      dump_.errors.push_back(std::to_string(suppressed_) + " more errors not listed");
    }
  }

  void error(std::string what) {
    if (dump_.errors.size() < kMaxErrors) {
      dump_.errors.push_back(std::move(what));
    } else {
      ++suppressed_;
    }
  }

 private:
  // --- typed access; false (with `why`) on a wrong type ---
  static std::string wrong(std::string_view key, const PickleValue& v, const char* expected) {
    return "'" + std::string(key) + "' is " + pickle_kind_name(v.kind) + ", expected " + expected;
  }
  // None is PyTorch's "unknown": the field keeps its default.
  bool get_int(const PickleValue& dict, std::string_view key, std::int64_t& out, std::string& why) {
    const PickleValue* v = doc_.find(dict, key);
    if (v == nullptr || v->kind == PickleKind::kNone) return true;
    if (v->kind == PickleKind::kInt) {
      out = v->integer;
      return true;
    }
    why = wrong(key, *v, "int");
    return false;
  }
  bool get_str(const PickleValue& dict, std::string_view key, std::string& out, std::string& why) {
    const PickleValue* v = doc_.find(dict, key);
    if (v == nullptr || v->kind == PickleKind::kNone) return true;
    if (v->kind == PickleKind::kStr && v->text.size() <= kMaxFlightRecorderText) {
      out = v->text;
      return true;
    }
    why = v->kind == PickleKind::kStr ? "'" + std::string(key) + "' is longer than " +
                                            std::to_string(kMaxFlightRecorderText) + " bytes"
                                      : wrong(key, *v, "str");
    return false;
  }
  // Sizes and ranks copied so far against the dump's budget.
  bool spend(std::size_t n, std::string_view key, std::string& why) {
    if (n > numbers_left_) {
      why = "'" + std::string(key) + "' is past the " + std::to_string(kMaxFlightRecorderNumbers) +
            " sizes and ranks read from one dump";
      return false;
    }
    numbers_left_ -= n;
    return true;
  }
  // pg_status values: ints in the pickle, decimal text in PyTorch's JSON dump.
  bool get_seq(const PickleValue& dict, std::string_view key, std::int64_t& out, std::string& why) {
    const PickleValue* v = doc_.find(dict, key);
    if (v != nullptr && v->kind == PickleKind::kStr) {
      std::int64_t n;
      auto [p, ec] = std::from_chars(v->text.data(), v->text.data() + v->text.size(), n);
      if (ec == std::errc() && p == v->text.data() + v->text.size() && !v->text.empty()) {
        out = n;
        return true;
      }
      why = "'" + std::string(key) + "' is \"" + v->text.substr(0, 40) + "\", expected a number";
      return false;
    }
    return get_int(dict, key, out, why);
  }
  bool get_sizes(const PickleValue& dict, std::string_view key,
                 std::vector<std::vector<std::int64_t>>& out, std::string& why) {
    const PickleValue* v = doc_.find(dict, key);
    if (v == nullptr || v->kind == PickleKind::kNone) return true;
    if (v->kind != PickleKind::kList && v->kind != PickleKind::kTuple) {
      why = wrong(key, *v, "list");
      return false;
    }
    out.reserve(v->items.size());
    for (PickleRef r : v->items) {
      const PickleValue* arg = doc_.get(r);
      if (arg == nullptr || (arg->kind != PickleKind::kList && arg->kind != PickleKind::kTuple)) {
        why = "'" + std::string(key) + "' holds a " +
              (arg ? pickle_kind_name(arg->kind) : "missing value") + ", expected a list of ints";
        return false;
      }
      if (!spend(arg->items.size() + 1, key, why)) return false;
      std::vector<std::int64_t>& dims = out.emplace_back();
      dims.reserve(arg->items.size());
      for (PickleRef d : arg->items) {
        const PickleValue* dim = doc_.get(d);
        if (dim == nullptr || dim->kind != PickleKind::kInt) {
          why = "'" + std::string(key) + "' holds a size that is " +
                (dim ? pickle_kind_name(dim->kind) : "missing") + ", expected int";
          return false;
        }
        dims.push_back(dim->integer);
      }
    }
    return true;
  }

  void read_pg_config(const PickleValue& cfg) {
    if (cfg.kind != PickleKind::kDict) {
      error(std::string("'pg_config' is ") + pickle_kind_name(cfg.kind) + ", expected dict");
      return;
    }
    for (std::size_t i = 0; i + 1 < cfg.items.size(); i += 2) {
      if (dump_.pg_config.size() >= kMaxFlightRecorderGroups) {
        error("pg_config: groups past the first " + std::to_string(kMaxFlightRecorderGroups) +
              " ignored");
        break;
      }
      const PickleValue* key = doc_.get(cfg.items[i]);
      const PickleValue* info = doc_.get(cfg.items[i + 1]);
      if (key == nullptr || info == nullptr || info->partial) continue;
      FlightRecorderPg pg;
      if (!key_text(*key, pg.pg_id_or_name)) {
        error(std::string("pg_config: a key is ") + pickle_kind_name(key->kind) +
              ", not a str or int (or longer than " + std::to_string(kMaxFlightRecorderText) +
              " bytes)");
        continue;
      }
      std::string why;
      if (info->kind != PickleKind::kDict) {
        why = std::string("is ") + pickle_kind_name(info->kind) + ", expected dict";
      } else if (info->items.size() / 2 > kMaxFlightRecorderKeys) {
        why = "has " + std::to_string(info->items.size() / 2) + " keys (at most " +
              std::to_string(kMaxFlightRecorderKeys) + ")";
      } else if (get_str(*info, "name", pg.name, why) && get_str(*info, "desc", pg.desc, why)) {
        read_ranks(*info, pg.ranks, why);
      }
      if (!why.empty()) {
        error("pg_config '" + pg.pg_id_or_name.substr(0, 80) + "': " + why + "; group skipped");
        continue;
      }
      dump_.pg_config.push_back(std::move(pg));
    }
    std::stable_sort(
        dump_.pg_config.begin(), dump_.pg_config.end(),
        [](const auto& a, const auto& b) { return a.pg_id_or_name < b.pg_id_or_name; });
  }

  // "ranks": the text "[0, 1, 2]" (PyTorch's ranks_str) or a list of ints.
  bool read_ranks(const PickleValue& info, std::vector<int>& out, std::string& why) {
    const PickleValue* v = doc_.find(info, "ranks");
    if (v == nullptr || v->kind == PickleKind::kNone) return true;
    auto add = [&](std::int64_t r) {
      if (r < 0 || r > 0x7fffffff) {
        why = "'ranks' holds " + std::to_string(r) + ", not a rank";
        return false;
      }
      if (out.size() >= kMaxFlightRecorderGroupRanks) {
        why = "'ranks' lists more than " + std::to_string(kMaxFlightRecorderGroupRanks);
        return false;
      }
      out.push_back(static_cast<int>(r));
      return true;
    };
    if (v->kind == PickleKind::kList || v->kind == PickleKind::kTuple) {
      if (!spend(v->items.size(), "ranks", why)) return false;
      for (PickleRef r : v->items) {
        const PickleValue* n = doc_.get(r);
        if (n == nullptr || n->kind != PickleKind::kInt) {
          why = "'ranks' holds a " + std::string(n ? pickle_kind_name(n->kind) : "missing value") +
                ", expected int";
          return false;
        }
        if (!add(n->integer)) return false;
      }
      return true;
    }
    if (v->kind != PickleKind::kStr) {
      why = wrong("ranks", *v, "str or list");
      return false;
    }
    std::string_view s = v->text;
    auto trim = [](std::string_view t) {
      while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
      while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
      return t;
    };
    s = trim(s);
    if (s.size() < 2 || s.front() != '[' || s.back() != ']') {
      why = "'ranks' is \"" + std::string(s.substr(0, 40)) + "\", expected \"[0, 1, ...]\"";
      return false;
    }
    s = trim(s.substr(1, s.size() - 2));
    // Each rank takes at least two characters ("0,").
    if (!spend(s.size() / 2 + 1, "ranks", why)) return false;
    while (!s.empty()) {
      std::size_t comma = s.find(',');
      std::string_view item = trim(s.substr(0, comma));
      std::int64_t r = 0;
      auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), r);
      if (item.empty() || ec != std::errc() || p != item.data() + item.size()) {
        why = "'ranks' holds \"" + std::string(item.substr(0, 40)) + "\", not a rank";
        return false;
      }
      if (!add(r)) return false;
      if (comma == std::string_view::npos) break;
      s = s.substr(comma + 1);
    }
    return true;
  }

  void read_pg_status(const PickleValue& st) {
    if (st.kind != PickleKind::kDict) {
      error(std::string("'pg_status' is ") + pickle_kind_name(st.kind) + ", expected dict");
      return;
    }
    for (std::size_t i = 0; i + 1 < st.items.size(); i += 2) {
      if (dump_.pg_status.size() >= kMaxFlightRecorderGroups) {
        error("pg_status: groups past the first " + std::to_string(kMaxFlightRecorderGroups) +
              " ignored");
        break;
      }
      const PickleValue* key = doc_.get(st.items[i]);
      const PickleValue* v = doc_.get(st.items[i + 1]);
      if (key == nullptr || v == nullptr || v->partial) continue;
      FlightRecorderDump::PgStatus s;
      if (!key_text(*key, s.pg)) {
        error(std::string("pg_status: a key is ") + pickle_kind_name(key->kind) +
              ", not a str or int (or longer than " + std::to_string(kMaxFlightRecorderText) +
              " bytes)");
        continue;
      }
      std::string why;
      if (v->kind != PickleKind::kDict) {
        why = std::string("is ") + pickle_kind_name(v->kind) + ", expected dict";
      } else if (v->items.size() / 2 > kMaxFlightRecorderKeys) {
        why = "has " + std::to_string(v->items.size() / 2) + " keys (at most " +
              std::to_string(kMaxFlightRecorderKeys) + ")";
      } else {
        get_seq(*v, "last_enqueued_collective", s.last_enqueued, why) &&
            get_seq(*v, "last_started_collective", s.last_started, why) &&
            get_seq(*v, "last_completed_collective", s.last_completed, why);
      }
      if (!why.empty()) {
        error("pg_status '" + s.pg.substr(0, 80) + "': " + why + "; group skipped");
        continue;
      }
      dump_.pg_status.push_back(std::move(s));
    }
    std::stable_sort(dump_.pg_status.begin(), dump_.pg_status.end(),
                     [](const auto& a, const auto& b) { return a.pg < b.pg; });
  }

  // A str key as it is; an int key (a pg id) as decimal text.
  static bool key_text(const PickleValue& key, std::string& out) {
    if (key.kind == PickleKind::kStr && key.text.size() <= kMaxFlightRecorderText) {
      out = key.text;
      return true;
    }
    if (key.kind == PickleKind::kInt) {
      out = std::to_string(key.integer);
      return true;
    }
    return false;
  }

  void read_entries(const PickleValue& list) {
    if (list.kind != PickleKind::kList) {
      error(std::string("'entries' is ") + pickle_kind_name(list.kind) + ", expected list");
      return;
    }
    std::size_t n = list.items.size();
    if (n > kMaxFlightRecorderEntries) {
      error(std::to_string(n - kMaxFlightRecorderEntries) + " entries past the first " +
            std::to_string(kMaxFlightRecorderEntries) + " not read");
      n = kMaxFlightRecorderEntries;
    }
    dump_.entries.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const PickleValue* e = doc_.get(list.items[i]);
      // An entry still being written when the dump was cut is not evidence.
      if (e == nullptr || e->partial) continue;
      std::string why;
      FlightRecorderEntry entry;
      if (e->kind != PickleKind::kDict) {
        why = std::string("is ") + pickle_kind_name(e->kind) + ", expected dict";
      } else if (e->items.size() / 2 > kMaxFlightRecorderKeys) {
        why = "has " + std::to_string(e->items.size() / 2) + " keys (at most " +
              std::to_string(kMaxFlightRecorderKeys) + ")";
      } else {
        read_entry(*e, entry, why);
      }
      if (!why.empty()) {
        error("entries[" + std::to_string(i) + "]: " + why + "; entry skipped");
        continue;
      }
      dump_.entries.push_back(std::move(entry));
    }
  }

  bool read_entry(const PickleValue& e, FlightRecorderEntry& out, std::string& why) {
    if (!get_int(e, "record_id", out.record_id, why)) return false;
    if (const PickleValue* v = doc_.find(e, "pg_id"); v && v->kind != PickleKind::kNone) {
      if (!key_text(*v, out.pg_id)) {
        why = wrong("pg_id", *v, "int (or str of at most 4096 bytes)");
        return false;
      }
    }
    if (const PickleValue* v = doc_.find(e, "process_group"); v && v->kind != PickleKind::kNone) {
      const PickleValue* name = nullptr;
      const PickleValue* desc = nullptr;
      if ((v->kind == PickleKind::kTuple || v->kind == PickleKind::kList) && v->items.size() == 2) {
        name = doc_.get(v->items[0]);
        desc = doc_.get(v->items[1]);
      }
      if (name == nullptr || desc == nullptr || name->kind != PickleKind::kStr ||
          desc->kind != PickleKind::kStr || name->text.size() > kMaxFlightRecorderText ||
          desc->text.size() > kMaxFlightRecorderText) {
        why = "'process_group' is not a (name, desc) pair of str of at most " +
              std::to_string(kMaxFlightRecorderText) + " bytes";
        return false;
      }
      out.pg_name = name->text;
      out.pg_desc = desc->text;
    }
    if (!get_int(e, "collective_seq_id", out.collective_seq_id, why) ||
        !get_int(e, "p2p_seq_id", out.p2p_seq_id, why) || !get_int(e, "op_id", out.op_id, why) ||
        !get_str(e, "profiling_name", out.profiling_name, why) ||
        !get_int(e, "time_created_ns", out.time_created_ns, why) ||
        !get_str(e, "state", out.state, why) ||
        !get_sizes(e, "input_sizes", out.input_sizes, why) ||
        !get_sizes(e, "output_sizes", out.output_sizes, why) ||
        !get_int(e, "timeout_ms", out.timeout_ms, why)) {
      return false;
    }
    if (const PickleValue* v = doc_.find(e, "is_p2p"); v && v->kind != PickleKind::kNone) {
      if (v->kind != PickleKind::kBool) {
        why = wrong("is_p2p", *v, "bool");
        return false;
      }
      out.is_p2p = v->boolean;
    }
    return true;
  }

  const PickleDocument& doc_;
  FlightRecorderDump& dump_;
  std::size_t suppressed_ = 0;
  std::size_t numbers_left_ = kMaxFlightRecorderNumbers;
};

}  // namespace

FlightRecorderDump read_flight_recorder(std::string_view bytes, int rank) {
  FlightRecorderDump dump;
  dump.rank = rank;
  try {
    if (bytes.size() > kMaxFlightRecorderBytes) {
      dump.errors.push_back("dump of " + std::to_string(bytes.size()) +
                            " bytes is larger than the " + std::to_string(kMaxFlightRecorderBytes) +
                            " bytes read");
      return dump;
    }
    PickleLimits limits;
    limits.max_input_bytes = kMaxFlightRecorderBytes;
    PickleDocument doc = read_pickle(bytes, limits);
    const PickleValue* root = doc.root_value();
    if (doc.truncated) {
      dump.truncated = true;
      dump.errors.push_back(doc.error + ": what was read before it is kept");
    } else if (!doc.ok) {
      dump.errors.push_back(doc.error);
      return dump;
    }
    if (root == nullptr) return dump;
    DumpReader reader(doc, dump);
    reader.read(*root);
    reader.finish();
  } catch (const std::bad_alloc&) {
    dump = FlightRecorderDump();
    dump.rank = rank;
    dump.errors.push_back("out of memory reading the dump");
  } catch (const std::exception& e) {
    dump = FlightRecorderDump();
    dump.rank = rank;
    dump.errors.push_back(std::string("dump not read: ") + e.what());
  }
  return dump;
}

}  // namespace ff
