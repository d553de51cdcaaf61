// The two HTTP requests a node makes (libcurl): a multipart upload of a
// bundle and a JSON POST for the fast pass. Both bounded in time.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace ff::collect {

struct HttpTimeouts {
  double connect_s = 5;
  double total_s = 120;
};

struct HttpReply {
  long status = 0;    // 0 when no reply came (see error)
  std::string body;   // at most 1 MiB
  std::string error;  // curl's message when the request failed
  bool success() const { return status >= 200 && status < 300; }
  std::string describe() const;  // "HTTP 503: ..." or "no reply: ..."
};

struct MultipartFile {
  std::string filename;  // the name sent in the part
  std::filesystem::path path;
};

using HttpHeaders = std::vector<std::string>;  // "Name: value"

HttpReply post_multipart(const std::string& url,
                         const std::vector<std::pair<std::string, std::string>>& fields,
                         const std::string& file_field, const std::vector<MultipartFile>& files,
                         const HttpHeaders& headers, const HttpTimeouts& timeouts);

HttpReply post_json(const std::string& url, const std::string& body, const HttpHeaders& headers,
                    const HttpTimeouts& timeouts);

}  // namespace ff::collect
