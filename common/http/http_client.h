// Every outgoing HTTP request of firstfault, with libcurl: the node collector's
// bundle upload and fast pass request to the agent, and the central sources'
// queries (Prometheus, Loki, the Kubernetes API server). One request per call,
// bounded in time (connect and total) and in the size of the reply, TLS as
// kubectl does it (CA bundle, client certificate, optional bearer token), and
// one form of error text. Never through a shell, never any signal (NOSIGNAL:
// the agent and the collector are multithreaded).
//
// Its own small library (ff_http): the collector and the central sources link
// it; the SPANK plugin and the Epilog must not.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace ff::http {

struct RequestOptions {
  double connect_timeout_s = 5;
  double total_timeout_s = 30;
  // A longer reply body fails the request (error "reply larger than N bytes",
  // body empty), unless truncate_long_reply: then its first max_body_bytes are
  // kept and the request counts as answered.
  std::size_t max_body_bytes = 1 << 20;
  bool truncate_long_reply = false;
  std::vector<std::string> headers;  // more "Name: value" lines
  std::string bearer_token;          // "Authorization: Bearer <token>" when set
  std::string ca_file;               // PEM bundle to verify the server; "" = system's
  std::string client_cert_file;      // PEM client certificate (mutual TLS)
  std::string client_key_file;
  bool insecure_skip_verify = false;  // kubeconfig's insecure-skip-tls-verify
};

struct Reply {
  long status = 0;    // 0: no reply (see error)
  std::string body;   // the reply body (also on 4xx/5xx)
  std::string error;  // why no reply came: curl's own message
  bool ok() const { return status >= 200 && status < 300; }
  // "HTTP 401: <first 200 bytes of the body>" or "no reply: <error>".
  std::string describe() const;
};

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// GET url, with "?" (or "&") and the URL-encoded params appended when there are any.
Reply get(const std::string& url, const QueryParams& params, const RequestOptions& options);

// POST `body` as application/json.
Reply post_json(const std::string& url, const std::string& body, const RequestOptions& options);

struct MultipartFile {
  std::string filename;  // the name sent in the part
  std::filesystem::path path;
};

// POST multipart/form-data: the text fields, then each file as a part named
// `file_field` (application/octet-stream), read from disk while sending.
Reply post_multipart(const std::string& url,
                     const std::vector<std::pair<std::string, std::string>>& fields,
                     const std::string& file_field, const std::vector<MultipartFile>& files,
                     const RequestOptions& options);

// The URL-encoded form of `params` ("a=1&b=x%20y"), in the order given.
std::string encode_query(const QueryParams& params);

}  // namespace ff::http
