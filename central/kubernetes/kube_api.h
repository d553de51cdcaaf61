// Talking to a Kubernetes API server the way kubectl does: a kubeconfig
// (current or named context: server, CA, token or client certificate) or
// the in-cluster service account. Every request goes through http::get().
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "common/http/http_client.h"
#include "incident/coverage.h"

namespace ff::sources::k8s {

// A kubeconfig or service account that cannot be used; the message names the
// file and what is missing in it.
class KubeConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct KubeAccess {
  std::string server;             // "https://host:port", no trailing slash
  http::RequestOptions http;      // token, CA, client certificate, insecure-skip-tls-verify
  std::string default_namespace;  // the context's namespace, or the service account's
  std::string cluster_name;       // the kubeconfig cluster entry's name, or "in-cluster"
  std::string origin;             // for messages: "kubeconfig F (context C)" or "service account D"
  // Private directory holding the *-data fields written out for libcurl,
  // which only takes file names; removed when the last copy goes away.
  std::shared_ptr<const std::string> secrets_dir;
};

// One kubeconfig file; `context` "" means its current-context. Relative file
// paths in it are relative to the file's directory, as kubectl reads them.
KubeAccess load_kubeconfig(const std::string& path, const std::string& context);

// The in-cluster service account: `sa_dir`/{token,ca.crt,namespace} and
// $KUBERNETES_SERVICE_HOST / $KUBERNETES_SERVICE_PORT.
KubeAccess load_in_cluster(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

struct AccessOptions {
  std::string kubeconfig;   // "" = the first file of $KUBECONFIG, else ~/.kube/config
  std::string context;      // "" = current-context
  bool in_cluster = false;  // use the service account even if a kubeconfig exists
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
};

// kubectl's order: --kubeconfig, $KUBECONFIG, ~/.kube/config, then the
// in-cluster service account when running in a pod.
KubeAccess resolve_access(const AccessOptions& options);

// What came of one API request, in the coverage vocabulary.
enum class ApiStatus { kOk, kNotFound, kUnauthorised, kUnreachable, kError };
CoverageStatus coverage_status(ApiStatus s);  // ok, empty (not found), unauthorised, ...

struct ApiReply {
  ApiStatus status = ApiStatus::kError;
  long http_status = 0;
  nlohmann::json body;  // parsed JSON (get_json) when status is kOk
  std::string text;     // raw body (get_text) when status is kOk
  std::string detail;   // "GET /api/...: HTTP 403 Forbidden: <the Status message>"
  bool ok() const { return status == ApiStatus::kOk; }
};

class KubeClient {
 public:
  explicit KubeClient(KubeAccess access) : access_(std::move(access)) {}
  const KubeAccess& access() const { return access_; }

  ApiReply get_json(const std::string& path, const http::QueryParams& params = {}) const;
  ApiReply get_text(const std::string& path, const http::QueryParams& params,
                    std::size_t max_body_bytes) const;
  // A list (PodList, EventList, ...) across `continue` pages of `page_size`,
  // stopping after max_items; body["items"] holds them all and
  // body["truncated"] is true when max_items cut it short.
  ApiReply list(const std::string& path, http::QueryParams params, std::size_t max_items,
                std::size_t page_size = 500) const;

 private:
  ApiReply get(const std::string& path, const http::QueryParams& params, std::size_t max_body,
               bool json) const;
  KubeAccess access_;
};

// Standard base64 (whitespace ignored); nullopt-like: ok=false on bad input.
bool base64_decode(const std::string& in, std::string& out);
std::string base64_encode(const std::string& in);

}  // namespace ff::sources::k8s
