// One bounded HTTP GET with libcurl, for the central sources (Prometheus,
// Loki, the Kubernetes API server): query parameters encoded here, optional
// bearer token, CA bundle and client certificate (TLS as kubectl does it).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ff::sources {

struct HttpGetOptions {
  double connect_timeout_s = 5;
  double total_timeout_s = 30;
  std::size_t max_body_bytes = 256u << 20;  // larger replies fail (error says so)
  std::string bearer_token;                 // "Authorization: Bearer <token>" when set
  std::string ca_file;                      // PEM bundle to verify the server; "" = system's
  std::string client_cert_file;             // PEM client certificate (mutual TLS)
  std::string client_key_file;
  bool insecure_skip_verify = false;  // kubeconfig's insecure-skip-tls-verify
  std::vector<std::string> headers;   // more "Name: value" lines
};

struct HttpGetReply {
  long status = 0;    // 0: no reply (see error)
  std::string body;   // the reply body (also on 4xx/5xx)
  std::string error;  // curl's message when the request failed
  bool ok() const { return status >= 200 && status < 300; }
  // "HTTP 401: <first 200 bytes of the body>" or "no reply: <curl error>".
  std::string describe() const;
};

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// GET base_url + path + "?" + the URL-encoded params.
HttpGetReply http_get(const std::string& url, const QueryParams& params,
                      const HttpGetOptions& options);

// The URL-encoded form of `params` ("a=1&b=x%20y"), in the order given.
std::string encode_query(const QueryParams& params);

}  // namespace ff::sources
