#include "central/kubernetes/kube_api.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ff::sources::k8s {

namespace fs = std::filesystem;

namespace {

std::string read_small_file(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::stringstream ss;
  if (ok) ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n')) ++i;
  return s.substr(i);
}

// A private directory for credential files: 0700, files 0600, created with
// O_EXCL so nothing pre-placed is followed. Removed with the last KubeAccess.
std::shared_ptr<const std::string> make_secrets_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/firstfault-kube-XXXXXX";
  if (!::mkdtemp(tmpl.data()))
    throw KubeConfigError("cannot create a private directory for kubeconfig credentials in " +
                          std::string(tmp && *tmp ? tmp : "/tmp"));
  return std::shared_ptr<const std::string>(new std::string(tmpl), [](const std::string* p) {
    std::error_code ec;
    fs::remove_all(*p, ec);
    delete p;
  });
}

std::string write_secret(KubeAccess& a, const std::string& name, const std::string& bytes) {
  if (!a.secrets_dir) a.secrets_dir = make_secrets_dir();
  std::string path = *a.secrets_dir + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw KubeConfigError("cannot write " + path);
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n <= 0) {
      ::close(fd);
      throw KubeConfigError("cannot write " + path);
    }
    off += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return path;
}

// Finds the entry `name` in a kubeconfig list (clusters, users, contexts).
YAML::Node named_entry(const YAML::Node& root, const char* list, const std::string& name,
                       const char* inner) {
  const YAML::Node& items = root[list];
  if (items && items.IsSequence())
    for (const auto& item : items)
      if (item["name"] && item["name"].as<std::string>() == name) return item[inner];
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string scalar(const YAML::Node& n, const char* key) {
  if (!n || !n.IsMap() || !n[key] || !n[key].IsScalar()) return "";
  return n[key].as<std::string>();
}

// kubectl resolves relative paths in a kubeconfig against the file's directory.
std::string resolve_path(const std::string& file, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(file).parent_path() / path).lexically_normal().string();
}

// "<field>-data" (base64, written to a private file) or "<field>" (a path).
std::string file_or_data(KubeAccess& a, const YAML::Node& n, const std::string& field,
                         const std::string& config, const std::string& what) {
  std::string data = scalar(n, (field + "-data").c_str());
  if (!data.empty()) {
    std::string bytes;
    if (!base64_decode(data, bytes))
      throw KubeConfigError(config + ": " + what + " " + field + "-data is not valid base64");
    return write_secret(a, field + ".pem", bytes);
  }
  std::string path = resolve_path(config, scalar(n, field.c_str()));
  if (!path.empty() && ::access(path.c_str(), R_OK) != 0)
    throw KubeConfigError(config + ": " + what + " " + field + " " + path + " is not readable");
  return path;
}

std::string status_message(const std::string& body) {
  // The API server answers errors with a Status object; its message says why.
  try {
    auto j = nlohmann::json::parse(body);
    if (j.is_object() && j.contains("message") && j["message"].is_string())
      return j["message"].get<std::string>();
  } catch (const nlohmann::json::exception&) {
  }
  return body.substr(0, 200);
}

}  // namespace

bool base64_decode(const std::string& in, std::string& out) {
  out.clear();
  unsigned buf = 0;
  int bits = 0;
  bool padding = false;
  for (char ch : in) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    if (padding) return false;  // data after padding
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else
      return false;
    buf = (buf << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return true;
}

std::string base64_encode(const std::string& in) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                 (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    out += tbl[(v >> 18) & 63];
    out += tbl[(v >> 12) & 63];
    out += tbl[(v >> 6) & 63];
    out += tbl[v & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += tbl[(v >> 18) & 63];
    out += tbl[(v >> 12) & 63];
    out += i + 1 < in.size() ? tbl[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

KubeAccess load_kubeconfig(const std::string& path, const std::string& context) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw KubeConfigError(path + ": cannot read the kubeconfig");
  } catch (const YAML::Exception& e) {
    throw KubeConfigError(path + ":" + std::to_string(e.mark.line + 1) +
                          ": not a valid kubeconfig: " + e.msg);
  }
  if (!root.IsMap()) throw KubeConfigError(path + ": not a kubeconfig (no YAML mapping)");
  try {
    std::string ctx_name = context.empty() ? scalar(root, "current-context") : context;
    if (ctx_name.empty())
      throw KubeConfigError(path + ": no current-context and no --context given");
    YAML::Node ctx = named_entry(root, "contexts", ctx_name, "context");
    if (!ctx || !ctx.IsMap())
      throw KubeConfigError(path + ": context '" + ctx_name + "' is not in its contexts list");
    std::string cluster_name = scalar(ctx, "cluster");
    std::string user_name = scalar(ctx, "user");
    YAML::Node cluster = named_entry(root, "clusters", cluster_name, "cluster");
    if (!cluster || !cluster.IsMap())
      throw KubeConfigError(path + ": cluster '" + cluster_name + "' of context '" + ctx_name +
                            "' is not in its clusters list");
    KubeAccess a;
    a.origin = "kubeconfig " + path + " (context " + ctx_name + ")";
    a.cluster_name = cluster_name;
    a.default_namespace = scalar(ctx, "namespace");
    if (a.default_namespace.empty()) a.default_namespace = "default";
    a.server = scalar(cluster, "server");
    if (a.server.empty())
      throw KubeConfigError(path + ": cluster '" + cluster_name + "' has no server");
    while (!a.server.empty() && a.server.back() == '/') a.server.pop_back();
    std::string insecure = scalar(cluster, "insecure-skip-tls-verify");
    a.http.insecure_skip_verify = insecure == "true";
    a.http.ca_file =
        file_or_data(a, cluster, "certificate-authority", path, "cluster '" + cluster_name + "'");
    if (!user_name.empty()) {
      YAML::Node user = named_entry(root, "users", user_name, "user");
      if (!user || !user.IsMap())
        throw KubeConfigError(path + ": user '" + user_name + "' of context '" + ctx_name +
                              "' is not in its users list");
      std::string who = "user '" + user_name + "'";
      if (user["exec"] || user["auth-provider"])
        throw KubeConfigError(
            path + ": " + who +
            " gets its credentials from an exec plugin or auth-provider, which firstfault does "
            "not run; give it a kubeconfig with a token (kubectl create token SA) or a client "
            "certificate");
      a.http.bearer_token = scalar(user, "token");
      std::string token_file = scalar(user, "tokenFile");
      if (token_file.empty()) token_file = scalar(user, "token-file");
      if (a.http.bearer_token.empty() && !token_file.empty()) {
        token_file = resolve_path(path, token_file);
        bool ok = false;
        a.http.bearer_token = trim(read_small_file(token_file, ok));
        if (!ok)
          throw KubeConfigError(path + ": " + who + " tokenFile " + token_file +
                                " is not readable");
      }
      a.http.client_cert_file = file_or_data(a, user, "client-certificate", path, who);
      a.http.client_key_file = file_or_data(a, user, "client-key", path, who);
      if (a.http.client_cert_file.empty() != a.http.client_key_file.empty())
        throw KubeConfigError(path + ": " + who +
                              " has a client certificate without a key, or a key without one");
      std::string username = scalar(user, "username");
      if (!username.empty() && a.http.bearer_token.empty())
        a.http.headers.push_back("Authorization: Basic " +
                                 base64_encode(username + ":" + scalar(user, "password")));
    }
    return a;
  } catch (const YAML::Exception& e) {
    throw KubeConfigError(path + ":" + std::to_string(e.mark.line + 1) +
                          ": unexpected value: " + e.msg);
  }
}

KubeAccess load_in_cluster(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    throw KubeConfigError(
        "not running in a pod: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are unset "
        "(give --kubeconfig)");
  KubeAccess a;
  a.origin = "service account " + sa_dir;
  a.cluster_name = "in-cluster";
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6 literal
  a.server = "https://" + h + ":" + port;
  bool ok = false;
  a.http.bearer_token = trim(read_small_file(sa_dir + "/token", ok));
  if (!ok || a.http.bearer_token.empty())
    throw KubeConfigError(sa_dir +
                          "/token: missing or empty (is a service account token mounted?)");
  a.http.ca_file = sa_dir + "/ca.crt";
  if (::access(a.http.ca_file.c_str(), R_OK) != 0)
    throw KubeConfigError(a.http.ca_file + ": missing (the cluster CA of the service account)");
  a.default_namespace = trim(read_small_file(sa_dir + "/namespace", ok));
  if (!ok || a.default_namespace.empty()) a.default_namespace = "default";
  return a;
}

KubeAccess resolve_access(const AccessOptions& o) {
  if (o.in_cluster) return load_in_cluster(o.service_account_dir);
  if (!o.kubeconfig.empty()) return load_kubeconfig(o.kubeconfig, o.context);
  // $KUBECONFIG is a list; kubectl merges it, we take its first readable file.
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::stringstream list(env);
    std::string item;
    while (std::getline(list, item, ':'))
      if (!item.empty() && ::access(item.c_str(), R_OK) == 0)
        return load_kubeconfig(item, o.context);
    throw KubeConfigError("$KUBECONFIG (" + std::string(env) + ") names no readable file");
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    std::string def = std::string(home) + "/.kube/config";
    if (::access(def.c_str(), R_OK) == 0) return load_kubeconfig(def, o.context);
  }
  if (std::getenv("KUBERNETES_SERVICE_HOST")) return load_in_cluster(o.service_account_dir);
  throw KubeConfigError(
      "no kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config) and not running in a pod");
}

CoverageStatus coverage_status(ApiStatus s) {
  switch (s) {
    case ApiStatus::kOk:
      return CoverageStatus::kOk;
    case ApiStatus::kNotFound:
      return CoverageStatus::kEmpty;
    case ApiStatus::kUnauthorised:
      return CoverageStatus::kUnauthorised;
    case ApiStatus::kUnreachable:
      return CoverageStatus::kUnreachable;
    case ApiStatus::kError:
      return CoverageStatus::kError;
  }
  return CoverageStatus::kError;
}

ApiReply KubeClient::get(const std::string& path, const http::QueryParams& params,
                         std::size_t max_body, bool json) const {
  http::RequestOptions opt = access_.http;
  opt.max_body_bytes = max_body;
  opt.headers.push_back(json ? "Accept: application/json" : "Accept: */*");
  http::Reply r = http::get(access_.server + path, params, opt);
  ApiReply out;
  out.http_status = r.status;
  std::string what = "GET " + path;
  if (r.status == 0) {
    out.status = ApiStatus::kUnreachable;
    out.detail = what + ": no reply from " + access_.server + ": " + r.error;
    return out;
  }
  if (!r.ok()) {
    out.status = r.status == 401 || r.status == 403 ? ApiStatus::kUnauthorised
                 : r.status == 404                  ? ApiStatus::kNotFound
                                                    : ApiStatus::kError;
    const char* name = r.status == 401   ? " Unauthorized"
                       : r.status == 403 ? " Forbidden"
                       : r.status == 404 ? " Not Found"
                                         : "";
    out.detail = what + ": HTTP " + std::to_string(r.status) + name + ": " + status_message(r.body);
    if (r.status == 401) out.detail += " (credentials of " + access_.origin + ")";
    return out;
  }
  if (!json) {
    out.status = ApiStatus::kOk;
    out.text = std::move(r.body);
    return out;
  }
  try {
    out.body = nlohmann::json::parse(r.body);
    out.status = ApiStatus::kOk;
  } catch (const nlohmann::json::exception& e) {
    out.status = ApiStatus::kError;
    out.detail = what + ": reply is not JSON: " + e.what();
  }
  return out;
}

ApiReply KubeClient::get_json(const std::string& path, const http::QueryParams& params) const {
  return get(path, params, 64u << 20, true);
}

ApiReply KubeClient::get_text(const std::string& path, const http::QueryParams& params,
                              std::size_t max_body_bytes) const {
  return get(path, params, max_body_bytes, false);
}

ApiReply KubeClient::list(const std::string& path, http::QueryParams params, std::size_t max_items,
                          std::size_t page_size) const {
  ApiReply all;
  all.status = ApiStatus::kOk;
  all.body = nlohmann::json::object();
  all.body["items"] = nlohmann::json::array();
  all.body["truncated"] = false;
  std::string cont;
  params.push_back({"limit", std::to_string(page_size)});
  for (int page = 0; page < 10000; ++page) {
    http::QueryParams p = params;
    if (!cont.empty()) p.push_back({"continue", cont});
    ApiReply r = get_json(path, p);
    if (!r.ok()) {
      if (page == 0) return r;
      // Later pages failing (an expired continue token: 410) leave what we have.
      all.body["truncated"] = true;
      all.detail = r.detail;
      return all;
    }
    if (r.body.contains("items") && r.body["items"].is_array())
      for (auto& item : r.body["items"]) {
        if (all.body["items"].size() >= max_items) {
          all.body["truncated"] = true;
          return all;
        }
        all.body["items"].push_back(std::move(item));
      }
    std::string next;
    if (auto m = r.body.find("metadata"); m != r.body.end() && m->is_object())
      if (auto c = m->find("continue"); c != m->end() && c->is_string()) next = *c;
    if (!next.empty() && next == cont) {  // a server repeating itself would never end
      all.body["truncated"] = true;
      all.detail = "GET " + path + ": the same continue token twice";
      return all;
    }
    cont = next;
    if (cont.empty()) break;
  }
  return all;
}

}  // namespace ff::sources::k8s
