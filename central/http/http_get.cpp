#include "central/http/http_get.h"

#include <curl/curl.h>

#include <memory>

namespace ff::sources {

namespace {

struct Sink {
  std::string* body;
  std::size_t max;
  bool overflow = false;
};

size_t write_body(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  std::size_t n = size * count;
  if (sink->body->size() + n > sink->max) {
    sink->overflow = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  sink->body->append(data, n);
  return n;
}

}  // namespace

std::string HttpGetReply::describe() const {
  if (status == 0) return "no reply: " + error;
  return "HTTP " + std::to_string(status) + (body.empty() ? "" : ": " + body.substr(0, 200));
}

std::string encode_query(const QueryParams& params) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  std::string out;
  for (const auto& [key, value] : params) {
    char* k = curl_easy_escape(curl.get(), key.data(), static_cast<int>(key.size()));
    char* v = curl_easy_escape(curl.get(), value.data(), static_cast<int>(value.size()));
    if (!out.empty()) out += '&';
    out += std::string(k ? k : "") + "=" + (v ? v : "");
    curl_free(k);
    curl_free(v);
  }
  return out;
}

HttpGetReply http_get(const std::string& url, const QueryParams& params,
                      const HttpGetOptions& options) {
  HttpGetReply reply;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) {
    reply.error = "curl_easy_init failed";
    return reply;
  }
  std::string full = params.empty() ? url
                                    : url + (url.find('?') == std::string::npos ? "?" : "&") +
                                          encode_query(params);
  Sink sink{&reply.body, options.max_body_bytes};
  struct curl_slist* headers = nullptr;
  for (const auto& h : options.headers) headers = curl_slist_append(headers, h.c_str());
  if (!options.bearer_token.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + options.bearer_token).c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(headers,
                                                                          curl_slist_free_all);
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, full.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options.connect_timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options.total_timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the server offers it
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  if (!options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
  if (!options.client_cert_file.empty())
    curl_easy_setopt(c, CURLOPT_SSLCERT, options.client_cert_file.c_str());
  if (!options.client_key_file.empty())
    curl_easy_setopt(c, CURLOPT_SSLKEY, options.client_key_file.c_str());
  if (options.insecure_skip_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    reply.error = sink.overflow
                      ? "reply larger than " + std::to_string(options.max_body_bytes) + " bytes"
                      : curl_easy_strerror(rc);
    reply.body.clear();
    return reply;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

}  // namespace ff::sources
