#include "central/kubernetes/pod_logs.h"

#include <algorithm>
#include <fstream>

namespace ff::sources::k8s {

namespace {

// Object names are DNS labels/subdomains, but nothing here trusts that.
std::string safe_name(std::string s) {
  for (auto& c : s)
    if (c == '/' || c == '\0' || c == '\n') c = '_';
  if (s.empty() || s == "." || s == "..") s = "_" + s;
  return s;
}

}  // namespace

std::string pod_log_path(const PodLogRequest& r) {
  std::string file =
      safe_name(r.pod) + "." + safe_name(r.container) + (r.previous ? ".previous" : "") + ".log";
  if (r.node.empty()) return "app/" + file;
  return "nodes/" + safe_name(r.node) + "/app." + file;
}

PodLogResult fetch_pod_log(const KubeClient& client, const PodLogRequest& r, const PodLogOptions& o,
                           const std::filesystem::path& incident) {
  PodLogResult out;
  http::QueryParams q = {{"container", r.container}, {"timestamps", "true"}};
  if (r.previous) q.push_back({"previous", "true"});
  if (o.limit_bytes) q.push_back({"limitBytes", std::to_string(o.limit_bytes)});
  if (o.tail_lines > 0) q.push_back({"tailLines", std::to_string(o.tail_lines)});
  if (!o.since_time.empty()) q.push_back({"sinceTime", o.since_time});
  // The server honours limitBytes; the client bound is a safety margin on top.
  ApiReply reply = client.get_text("/api/v1/namespaces/" + r.ns + "/pods/" + r.pod + "/log", q,
                                   o.limit_bytes ? o.limit_bytes + (1u << 20) : 256u << 20);
  out.status = reply.status;
  std::string what = r.pod + "/" + r.container + (r.previous ? " (previous)" : "");
  if (!reply.ok()) {
    out.detail = what + ": " + reply.detail;
    return out;
  }
  std::string& text = reply.text;
  if (o.limit_bytes && text.size() > o.limit_bytes) text.resize(o.limit_bytes);
  long lines = static_cast<long>(std::count(text.begin(), text.end(), '\n'));
  out.truncated = (o.limit_bytes && text.size() >= o.limit_bytes) ||
                  (o.tail_lines > 0 && lines >= o.tail_lines);
  out.bytes = text.size();
  out.rel_path = pod_log_path(r);
  std::filesystem::path file = incident / out.rel_path;
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    out.status = ApiStatus::kError;
    out.detail = what + ": cannot write " + file.string();
    out.rel_path.clear();
    return out;
  }
  out.detail = what + ": " + std::to_string(out.bytes) + " bytes" +
               (out.truncated ? " (cut at the byte or line limit)" : "");
  return out;
}

}  // namespace ff::sources::k8s
