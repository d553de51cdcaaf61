#include "common/http/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>

namespace ff::http {
namespace {

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
  void operator()(curl_mime* m) const { curl_mime_free(m); }
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
template <typename T>
using CurlPtr = std::unique_ptr<T, CurlDeleter>;

struct ReplySink {
  std::string* body;
  std::size_t max;
  bool truncate;
  bool overflow = false;
};

std::size_t append_reply(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<ReplySink*>(user);
  std::size_t n = size * count;
  if (sink->body->size() + n <= sink->max) {
    sink->body->append(data, n);
    return n;
  }
  if (!sink->truncate) {
    sink->overflow = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  sink->body->append(data, sink->max - sink->body->size());
  return n;  // the rest is read and dropped
}

// The request's headers; `posting` adds "Expect:", without which curl waits up
// to a second for "100 Continue" before sending a large body.
CurlPtr<curl_slist> header_list(const RequestOptions& options, bool posting,
                                const char* content_type) {
  curl_slist* list = nullptr;
  if (posting) list = curl_slist_append(list, "Expect:");
  for (const auto& h : options.headers) list = curl_slist_append(list, h.c_str());
  if (content_type != nullptr) list = curl_slist_append(list, content_type);
  if (!options.bearer_token.empty())
    list = curl_slist_append(list, ("Authorization: Bearer " + options.bearer_token).c_str());
  return CurlPtr<curl_slist>(list);
}

Reply perform(CURL* c, const std::string& url, curl_slist* headers, const RequestOptions& options) {
  Reply reply;
  char error[CURL_ERROR_SIZE] = "";
  ReplySink sink{&reply.body, options.max_body_bytes, options.truncate_long_reply};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options.connect_timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options.total_timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append_reply);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the server offers it
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
                  : error[0] ? std::string(error)
                             : std::string(curl_easy_strerror(rc));
    reply.body.clear();
    return reply;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

Reply not_started(const std::string& why) {
  Reply reply;
  reply.error = why;
  return reply;
}

}  // namespace

std::string Reply::describe() const {
  if (status == 0) return "no reply: " + error;
  return "HTTP " + std::to_string(status) + (body.empty() ? "" : ": " + body.substr(0, 200));
}

std::string encode_query(const QueryParams& params) {
  CurlPtr<CURL> curl(curl_easy_init());
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

Reply get(const std::string& url, const QueryParams& params, const RequestOptions& options) {
  CurlPtr<CURL> curl(curl_easy_init());
  if (!curl) return not_started("curl_easy_init failed");
  std::string full = params.empty() ? url
                                    : url + (url.find('?') == std::string::npos ? "?" : "&") +
                                          encode_query(params);
  auto headers = header_list(options, false, nullptr);
  curl_easy_setopt(curl.get(), CURLOPT_HTTPGET, 1L);
  return perform(curl.get(), full, headers.get(), options);
}

Reply post_json(const std::string& url, const std::string& body, const RequestOptions& options) {
  CurlPtr<CURL> curl(curl_easy_init());
  if (!curl) return not_started("curl_easy_init failed");
  auto headers = header_list(options, true, "Content-Type: application/json");
  curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  return perform(curl.get(), url, headers.get(), options);
}

Reply post_multipart(const std::string& url,
                     const std::vector<std::pair<std::string, std::string>>& fields,
                     const std::string& file_field, const std::vector<MultipartFile>& files,
                     const RequestOptions& options) {
  CurlPtr<CURL> curl(curl_easy_init());
  if (!curl) return not_started("curl_easy_init failed");
  CurlPtr<curl_mime> mime(curl_mime_init(curl.get()));
  for (const auto& [name, value] : fields) {
    curl_mimepart* part = curl_mime_addpart(mime.get());
    curl_mime_name(part, name.c_str());
    curl_mime_data(part, value.data(), value.size());
  }
  for (const auto& f : files) {
    curl_mimepart* part = curl_mime_addpart(mime.get());
    curl_mime_name(part, file_field.c_str());
    if (curl_mime_filedata(part, f.path.c_str()) != CURLE_OK)
      return not_started("cannot read " + f.path.string());
    curl_mime_filename(part, f.filename.c_str());  // the path inside the bundle
    curl_mime_type(part, "application/octet-stream");
  }
  curl_easy_setopt(curl.get(), CURLOPT_MIMEPOST, mime.get());
  auto headers = header_list(options, true, nullptr);
  return perform(curl.get(), url, headers.get(), options);
}

}  // namespace ff::http
