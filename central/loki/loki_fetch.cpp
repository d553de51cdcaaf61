#include "central/loki/loki_fetch.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "common/http/http_client.h"
#include "common/node_name.h"
#include "incident/time/time.h"

namespace ff::sources {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The longest line kept, as the node collector cuts them.
constexpr std::size_t kMaxLineBytes = 1 << 20;

struct Entry {
  std::int64_t ts = 0;
  std::string stream;  // the stream's labels, canonical ({"a":"1"} dumped: keys sorted)
  std::string line;
  bool operator<(const Entry& o) const {
    return std::tie(ts, stream, line) < std::tie(o.ts, o.stream, o.line);
  }
};

std::string read_token(const std::string& file) {
  if (file.empty()) return "";
  std::ifstream in(file);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  return token;
}

// One line as written: no embedded line breaks, at most kMaxLineBytes.
std::string clean_line(std::string line) {
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  if (line.size() > kMaxLineBytes) line.resize(kMaxLineBytes);
  return line;
}

struct Page {
  std::vector<Entry> entries;
  std::string error;                               // "" when the page is good
  CoverageStatus status = CoverageStatus::kError;  // for the error
};

// One query_range reply parsed; a reply that is not Loki's shape is an error.
Page parse_page(const std::string& body) {
  Page page;
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    page.error = "reply is not JSON";
    return page;
  }
  if (j.value("status", "") != "success" || !j.contains("data") || !j["data"].is_object()) {
    page.error = "reply status is not success";
    return page;
  }
  const json& data = j["data"];
  if (data.value("resultType", "") != "streams") {
    page.error = "resultType is '" + data.value("resultType", "") +
                 "', not streams: the selector must be a log query";
    return page;
  }
  if (!data.contains("result") || !data["result"].is_array()) {
    page.error = "reply has no result array";
    return page;
  }
  for (const auto& stream : data["result"]) {
    if (!stream.is_object() || !stream.contains("values") || !stream["values"].is_array()) continue;
    std::string labels = stream.contains("stream") ? stream["stream"].dump() : "{}";
    for (const auto& v : stream["values"]) {
      // [ "<unix ns>", "<line>" ] (a third element, structured metadata, is ignored).
      if (!v.is_array() || v.size() < 2 || !v[0].is_string() || !v[1].is_string()) continue;
      Entry e;
      try {
        e.ts = std::stoll(v[0].get<std::string>());
      } catch (const std::exception&) {
        continue;
      }
      e.stream = labels;
      e.line = v[1].get<std::string>();
      page.entries.push_back(std::move(e));
    }
  }
  return page;
}

struct Pull {
  CoverageStatus status = CoverageStatus::kOk;
  std::string detail;
  std::uint64_t lines = 0;
};

// Every entry of one selector in [start, end), written in time order.
// Paging: the next request starts at the last entry's time (inclusive) and
// skips the entries of that time already written, so a page cut between
// entries of one nanosecond loses none and repeats none.
Pull pull(const LokiConfig& config, const http::RequestOptions& options,
          const std::string& selector, std::int64_t start_ns, std::int64_t end_ns,
          std::ofstream& out, int& requests) {
  Pull result;
  std::int64_t from = start_ns;
  std::set<Entry> written_at_from;  // entries of time `from` already written
  for (;;) {
    http::QueryParams params = {{"query", selector},
                                {"start", std::to_string(from)},
                                {"end", std::to_string(end_ns)},
                                {"limit", std::to_string(config.limit)},
                                {"direction", "forward"}};
    http::Reply reply;
    // 429 and 5xx are Loki being busy: a few tries, then the evidence is partial.
    for (int attempt = 0;; ++attempt) {
      ++requests;
      reply = http::get(config.url + "/loki/api/v1/query_range", params, options);
      bool busy = reply.status == 429 || reply.status >= 500;
      if (!busy || attempt >= 2) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250 << attempt));
    }
    if (!reply.ok()) {
      CoverageStatus status =
          reply.status == 0                            ? CoverageStatus::kUnreachable
          : reply.status == 401 || reply.status == 403 ? CoverageStatus::kUnauthorised
          : reply.status == 429 || reply.status >= 500 ? CoverageStatus::kUnreachable
                                                       : CoverageStatus::kError;
      // What was written stays; the rest of the window is missing.
      result.status = result.lines > 0 ? CoverageStatus::kPartial : status;
      result.detail = reply.describe();
      return result;
    }
    Page page = parse_page(reply.body);
    if (!page.error.empty()) {
      result.status = result.lines > 0 ? CoverageStatus::kPartial : page.status;
      result.detail = page.error;
      return result;
    }
    std::sort(page.entries.begin(), page.entries.end());
    std::size_t fresh = 0;
    for (const auto& e : page.entries) {
      if (e.ts < from || e.ts >= end_ns) continue;  // not asked for: a server's mistake
      if (e.ts == from && written_at_from.count(e)) continue;
      if (result.lines >= config.max_lines) {
        result.status = CoverageStatus::kPartial;
        result.detail = "more than max_lines (" + std::to_string(config.max_lines) + ")";
        return result;
      }
      if (config.prefix_time) out << format_time_nanos(e.ts) << ' ';
      out << clean_line(e.line) << '\n';
      ++result.lines;
      ++fresh;
    }
    if (page.entries.size() < config.limit) break;  // Loki has no more
    std::int64_t last = page.entries.back().ts;
    if (last == from) {
      written_at_from.insert(page.entries.begin(), page.entries.end());
    } else {
      written_at_from.clear();
      for (const auto& e : page.entries)
        if (e.ts == last) written_at_from.insert(e);
    }
    if (fresh == 0) {
      // A whole page of one nanosecond already written: Loki cannot page
      // past it with this limit.
      result.status = CoverageStatus::kPartial;
      result.detail = "more than limit (" + std::to_string(config.limit) +
                      ") entries share one time stamp; raise loki.limit";
      return result;
    }
    from = last;
  }
  if (result.lines == 0) result.status = CoverageStatus::kEmpty;
  return result;
}

}  // namespace

std::string loki_selector(const std::string& pattern, const std::string& node) {
  std::string escaped;
  for (char c : node) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'n') {
      out += escaped;
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

LokiFetch fetch_loki_logs(const LokiConfig& config, const std::vector<std::string>& nodes,
                          std::int64_t start_ns, std::int64_t end_ns,
                          const fs::path& incident_dir) {
  LokiFetch fetch;
  http::RequestOptions options;
  options.total_timeout_s = config.timeout_s;
  // One page is `limit` entries of lines as long as Loki keeps them: generous,
  // but a reply past this fails the node's pull instead of the agent's memory.
  options.max_body_bytes = 256u << 20;
  options.ca_file = config.ca_file;
  options.bearer_token = read_token(config.bearer_token_file);
  if (!config.org_id.empty()) options.headers.push_back("X-Scope-OrgID: " + config.org_id);
  // Loki that does not answer at all is not asked again for every other
  // node and kind: with hundreds of nodes that would be hundreds of
  // timeouts before the final pass.
  std::string down;
  auto report = [&](const std::string& kind, const std::string& node, CoverageStatus status,
                    std::uint64_t lines, const std::string& detail) {
    Coverage c;
    c.collector = "loki:" + kind;
    c.node = node;
    c.status = status;
    c.lines = lines;
    c.detail = detail;
    fetch.coverage.push_back(std::move(c));
  };
  for (const auto& node : nodes) {
    for (const auto& [kind, pattern] : config.selectors) {
      std::string selector = loki_selector(pattern, node);
      // The name becomes a directory of the incident: "..", "a/b" or an
      // option-like name from a job.json is never asked for or written.
      if (!ff::valid_node_name(node)) {
        report(kind, node, CoverageStatus::kError, 0, "not asked: not a node name");
        continue;
      }
      fs::path file = incident_dir / "nodes" / node / (kind + ".loki");
      std::error_code ec;
      Pull p;
      if (!down.empty()) {
        report(kind, node, CoverageStatus::kUnreachable, 0, selector + ": not asked: " + down);
        continue;
      }
      fs::create_directories(file.parent_path(), ec);
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      if (!out) {
        p.status = CoverageStatus::kError;
        p.detail = "cannot write " + file.string();
      } else {
        p = pull(config, options, selector, start_ns, end_ns, out, fetch.requests);
        out.close();
        if (!out) {
          p.status = CoverageStatus::kError;
          p.detail = "cannot write " + file.string();
        }
      }
      if (p.lines == 0) fs::remove(file, ec);
      if (p.status == CoverageStatus::kUnreachable && p.detail.rfind("no reply", 0) == 0)
        down = "Loki did not answer for " + node + " (" + p.detail + ")";
      fetch.lines += p.lines;
      report(kind, node, p.status, p.lines,
             p.detail.empty() ? selector : selector + ": " + p.detail);
    }
  }
  return fetch;
}

}  // namespace ff::sources
