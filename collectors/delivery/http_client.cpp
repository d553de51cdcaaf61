#include "collectors/delivery/http_client.h"

#include <curl/curl.h>

#include <memory>

namespace ff::collect {
namespace {

constexpr std::size_t kMaxReplyBytes = 1 << 20;

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
  void operator()(curl_mime* m) const { curl_mime_free(m); }
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
template <typename T>
using CurlPtr = std::unique_ptr<T, CurlDeleter>;

std::size_t append_reply(char* data, std::size_t size, std::size_t n, void* user) {
  auto* body = static_cast<std::string*>(user);
  std::size_t len = size * n;
  if (body->size() < kMaxReplyBytes)
    body->append(data, std::min(len, kMaxReplyBytes - body->size()));
  return len;
}

CurlPtr<curl_slist> header_list(const HttpHeaders& headers) {
  curl_slist* list = nullptr;
  // Without this curl waits up to a second for "100 Continue" on large bodies.
  list = curl_slist_append(list, "Expect:");
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  return CurlPtr<curl_slist>(list);
}

HttpReply perform(CURL* curl, const std::string& url, curl_slist* headers,
                  const HttpTimeouts& timeouts) {
  HttpReply reply;
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeouts.connect_s * 1000));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeouts.total_s * 1000));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_reply);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  CURLcode rc = curl_easy_perform(curl);
  if (rc != CURLE_OK) {
    reply.error = error[0] ? error : curl_easy_strerror(rc);
    return reply;
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

}  // namespace

std::string HttpReply::describe() const {
  if (status == 0) return "no reply: " + error;
  std::string text = "HTTP " + std::to_string(status);
  if (!body.empty()) text += ": " + body.substr(0, 200);
  return text;
}

HttpReply post_multipart(const std::string& url,
                         const std::vector<std::pair<std::string, std::string>>& fields,
                         const std::string& file_field, const std::vector<MultipartFile>& files,
                         const HttpHeaders& headers, const HttpTimeouts& timeouts) {
  CurlPtr<CURL> curl(curl_easy_init());
  if (!curl) return {0, "", "curl_easy_init failed"};
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
      return {0, "", "cannot read " + f.path.string()};
    curl_mime_filename(part, f.filename.c_str());  // the path inside the bundle
    curl_mime_type(part, "application/octet-stream");
  }
  curl_easy_setopt(curl.get(), CURLOPT_MIMEPOST, mime.get());
  auto list = header_list(headers);
  return perform(curl.get(), url, list.get(), timeouts);
}

HttpReply post_json(const std::string& url, const std::string& body, const HttpHeaders& headers,
                    const HttpTimeouts& timeouts) {
  CurlPtr<CURL> curl(curl_easy_init());
  if (!curl) return {0, "", "curl_easy_init failed"};
  HttpHeaders all = headers;
  all.push_back("Content-Type: application/json");
  auto list = header_list(all);
  curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  return perform(curl.get(), url, list.get(), timeouts);
}

}  // namespace ff::collect
