#include "agent/slurm/slurmctld_excerpt.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <unordered_set>

#include "collectors/window/window_reader.h"
#include "common/hostlist.h"
#include "incident/time/timestamp_parser.h"

namespace ff::agent {
namespace {

// Messages in which slurmctld (22.05 to master, at its default level info and
// the debug levels) repeats text a user or a job submit plugin chose. A line
// holding one is never passed on: its text could read like slurmctld's own
// ("_update_job: setting comment to Killing JobId=5 on failed node n3 for
// JobId=7"). From src/slurmctld/job_mgr.c:
//  _update_job "%s: setting <field> to %s for %pJ" for comment,
//    admin_comment, extra, name, work_dir, account, QOS, partition,
//    reservation, features, prefer, dependency, nodes, req_nodes, exc_nodes
//    (and _update_job_wckey's wckey): every ": setting " line is dropped,
//    the harmless numeric ones with them;
//  _dump_job_details debug3 "   work_dir=%s ..." and "   dependency=%s
//    account=%s qos=%s comment=%s";
//  job_submit validation "invalid account %s", "invalid partition
//    specified: %s", "invalid wckey '%s'", "invalid licenses: %s",
//    "Job's requested licenses are invalid: %s", "Invalid mcs-label: %s";
//  job_submit/lua's slurm.log_info and friends ("job_submit.lua: ...").
constexpr std::string_view kUserTextMarkers[] = {
    ": setting ",    "comment",          "work_dir=",
    "dependency=",   "invalid account",  "invalid partition specified",
    "invalid wckey", "invalid licenses", "licenses are invalid",
    "mcs-label",     "job_submit",
};

bool carries_user_text(std::string_view message) {
  for (std::string_view marker : kUserTextMarkers)
    if (message.find(marker) != std::string_view::npos) return true;
  return false;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_node_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '-' ||
         c == '.';
}

// "12", "12_3" or "12+1".
bool valid_job_id(std::string_view id) {
  std::size_t sep = id.find_first_of("_+");
  auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 20 && std::all_of(s.begin(), s.end(), is_digit);
  };
  if (sep == std::string_view::npos) return digits(id);
  return digits(id.substr(0, sep)) && digits(id.substr(sep + 1));
}

// The JobId= forms of src/common/log.c (_jobid2fmt, "%pJ"): "JobId=12",
// "JobId=12_3(15)", "JobId=12+1(13)". A token ends where no digit follows;
// a plain id must not be the head of another job's "12_3" or "12+1".
class JobMatcher {
 public:
  explicit JobMatcher(const std::vector<std::string>& ids) {
    for (const std::string& id : ids) {
      if (id.empty()) continue;
      tokens_.push_back("JobId=" + id);
      if (id.find_first_of("_+") == std::string::npos) raw_tokens_.push_back("(" + id + ")");
    }
  }

  bool matches(std::string_view message) const {
    // A plain id may be an array task's or het component's own: "JobId=12_3(15)".
    for (const std::string& raw : raw_tokens_)
      for (std::size_t at = message.find(raw); at != std::string_view::npos;
           at = message.find(raw, at + 1))
        if (follows_compound_job_id(message.substr(0, at))) return true;
    for (const std::string& token : tokens_) {
      bool compound = token.find_first_of("_+") != std::string::npos;
      for (std::size_t at = message.find(token); at != std::string_view::npos;
           at = message.find(token, at + 1)) {
        std::size_t end = at + token.size();
        if (end == message.size()) return true;
        char next = message[end];
        if (!is_digit(next) && (compound || (next != '_' && next != '+'))) return true;
      }
    }
    return false;
  }

 private:
  // `before` ends in "JobId=<digits>_<digits>" or "JobId=<digits>+<digits>".
  static bool follows_compound_job_id(std::string_view before) {
    std::size_t i = before.size();
    auto digits_back = [&] {
      std::size_t end = i;
      while (i > 0 && is_digit(before[i - 1])) --i;
      return i < end;
    };
    if (!digits_back() || i == 0 || (before[i - 1] != '_' && before[i - 1] != '+')) return false;
    --i;
    if (!digits_back()) return false;
    constexpr std::string_view kKey = "JobId=";
    return i >= kKey.size() && before.substr(i - kKey.size(), kKey.size()) == kKey;
  }

  std::vector<std::string> tokens_;
  std::vector<std::string> raw_tokens_;
};

// A node as a whole word: "node n2", "failed node n2.", "Nodes n[1-3] not
// responding" (slurmctld prints node sets as hostlists), "n1,n2".
class NodeMatcher {
 public:
  explicit NodeMatcher(const std::vector<std::string>& nodes) {
    for (const std::string& spec : nodes) {
      for (std::string& name : expand_hostlist(spec)) names_.insert(std::move(name));
    }
  }

  bool matches(std::string_view message) const {
    if (names_.empty()) return false;
    std::size_t i = 0;
    while (i < message.size()) {
      if (!is_node_char(message[i]) && message[i] != '[') {
        ++i;
        continue;
      }
      std::size_t start = i;
      bool bracket = false;
      int depth = 0;
      while (i < message.size()) {
        char c = message[i];
        if (c == '[') {
          bracket = true;
          ++depth;
        } else if (c == ']') {
          if (depth == 0) break;
          --depth;
        } else if (c == ',' && depth == 0) {
          // a comma continues a hostlist ("n1,n[3-4]") only between names
          if (i + 1 >= message.size() || !is_node_char(message[i + 1])) break;
        } else if (!is_node_char(c) && !(depth > 0 && (c == '-' || c == ','))) {
          break;
        }
        ++i;
      }
      if (i == start) {
        ++i;
        continue;
      }
      if (word_names_node(message.substr(start, i - start), bracket)) return true;
    }
    return false;
  }

 private:
  bool known(std::string_view name) const {
    while (!name.empty() && name.back() == '.') name.remove_suffix(1);  // end of a sentence
    return !name.empty() && names_.count(std::string(name)) > 0;
  }

  bool word_names_node(std::string_view word, bool bracket) const {
    if (bracket && word.size() <= 1024) {
      try {
        for (const std::string& name : expand_hostlist(word))
          if (known(name)) return true;
        return false;
      } catch (const std::exception&) {
        // not a hostlist after all ("[rank3]"): read its comma-separated parts
      }
    }
    std::size_t from = 0;
    while (from <= word.size()) {
      std::size_t comma = word.find(',', from);
      std::string_view part =
          word.substr(from, comma == std::string_view::npos ? word.size() - from : comma - from);
      if (known(part)) return true;
      if (comma == std::string_view::npos) break;
      from = comma + 1;
    }
    return false;
  }

  std::unordered_set<std::string> names_;
};

// The message after slurmctld's "[time] " prefix.
std::string_view message_of(std::string_view line) {
  if (!line.empty() && line.front() == '[') {
    std::size_t close = line.find("] ");
    if (close != std::string_view::npos && close < 48) return line.substr(close + 2);
  }
  return line;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 || errno != ENOENT;
}

std::string base_name(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

SlurmctldExcerpt excerpt_slurmctld_log(const SlurmctldExcerptRequest& request,
                                       const SlurmctldExcerptLimits& limits) {
  SlurmctldExcerpt out;
  auto fail = [&out](std::string why) {
    out.status = CoverageStatus::kError;
    out.detail = std::move(why);
    out.lines.clear();
    return out;
  };
  if (request.log_path.empty()) return fail("no slurmctld log path");
  if (!valid_job_id(request.job_id))
    return fail("job id '" + request.job_id + "' is not 12, 12_3 or 12+1");
  if (!request.raw_job_id.empty() && !valid_job_id(request.raw_job_id))
    return fail("raw job id '" + request.raw_job_id + "' is not a number");

  TimeContext ctx;
  std::vector<std::string> nodes;
  try {
    ctx.zone = find_zone(request.timezone);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  ctx.reference = request.from;
  std::optional<NodeMatcher> node_matcher;
  try {
    node_matcher.emplace(request.nodes);
  } catch (const std::invalid_argument& e) {
    return fail(std::string("node list: ") + e.what());
  }
  const JobMatcher job_matcher({request.job_id, request.raw_job_id});

  std::vector<std::string> files;
  if (exists(request.log_path + ".1"))
    files.push_back(request.log_path + ".1");
  else if (exists(request.log_path + ".1.gz"))
    files.push_back(request.log_path + ".1.gz");
  bool main_exists = exists(request.log_path);
  if (main_exists) files.push_back(request.log_path);
  if (!main_exists && files.empty()) {
    out.status = CoverageStatus::kMissing;
    out.detail = "no file at " + request.log_path;
    return out;
  }

  collect::TimeWindow window{request.from, request.to};
  collect::WindowReadOptions options;
  options.follow_symlinks = false;  // read as root: never be led to another file
  options.keep_untimed = false;     // a log in an unknown format is not scanned whole
  std::size_t bytes_kept = 0;
  bool truncated = false;
  std::vector<std::string> errors;
  std::vector<std::string> files_read;
  bool untimed_everywhere = true;

  for (const std::string& file : files) {
    collect::WindowReadStats stats = collect::read_window(
        file, window, ctx,
        [&](std::string_view line) {
          std::string_view message = message_of(line);
          if (!job_matcher.matches(message) && !node_matcher->matches(message)) return;
          if (carries_user_text(message)) {
            ++out.user_text_dropped;
            return;
          }
          if (truncated) return;
          if (line.size() > limits.max_line) {
            line = line.substr(0, limits.max_line);
            ++out.lines_cut;
          }
          if (bytes_kept + line.size() + 1 > limits.max_bytes) {
            truncated = true;
            return;
          }
          bytes_kept += line.size() + 1;
          out.lines.emplace_back(line);
        },
        options);
    out.bytes_read += stats.bytes_read;
    if (!stats.error.empty()) {
      errors.push_back(base_name(file) + ": " + stats.error);
      continue;
    }
    files_read.push_back(base_name(file));
    if (!stats.untimed) untimed_everywhere = false;
  }

  if (files_read.empty()) return fail(errors.empty() ? "nothing read" : errors.front());
  if (untimed_everywhere)
    return fail("no line with a time slurmctld's LogTimeFormat iso8601_ms or iso8601 writes");

  std::string detail = "read ";
  for (std::size_t i = 0; i < files_read.size(); ++i) detail += (i ? ", " : "") + files_read[i];
  detail += "; " + std::to_string(out.lines.size()) + " lines";
  if (out.user_text_dropped)
    detail += ", " + std::to_string(out.user_text_dropped) + " with user text left out";
  if (out.lines_cut) detail += ", " + std::to_string(out.lines_cut) + " cut";
  if (truncated)
    detail += "; later lines left out past " + std::to_string(limits.max_bytes) + " bytes";
  for (const std::string& error : errors) detail += "; " + error;
  out.detail = std::move(detail);

  if (!errors.empty() && std::find(files_read.begin(), files_read.end(),
                                   base_name(request.log_path)) == files_read.end())
    out.status = CoverageStatus::kError;  // the current log itself was not read
  else if (truncated)
    out.status = CoverageStatus::kTruncated;
  else if (out.lines.empty())
    out.status = CoverageStatus::kEmpty;
  else
    out.status = CoverageStatus::kOk;
  return out;
}

}  // namespace ff::agent
