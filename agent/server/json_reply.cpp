#include "agent/server/json_reply.h"

#include <zlib.h>

namespace ff::agent {

namespace {

// Below this a reply is sent as it is: compressing buys nothing.
constexpr std::size_t kCompressFrom = 16 * 1024;

bool accepts_gzip(const httplib::Request& req) {
  const std::string& accepted = req.get_header_value("Accept-Encoding");
  return accepted.find("gzip") != std::string::npos;
}

// gzip at level 1: about a twentieth of a diagnosis's size, in
// milliseconds. Empty when zlib fails (the body then goes as it is).
std::string gzip(const std::string& in) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&z, static_cast<uLong>(in.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return rc == Z_STREAM_END ? out : std::string();
}

}  // namespace

void set_json_reply(const httplib::Request* req, httplib::Response& res, std::string body) {
  res.set_header("Vary", "Accept-Encoding");
  if (req && body.size() >= kCompressFrom && body.size() < (1u << 31) && accepts_gzip(*req)) {
    std::string packed = gzip(body);
    if (!packed.empty()) {
      res.set_header("Content-Encoding", "gzip");
      res.set_content(std::move(packed), kJsonType);
      return;
    }
  }
  res.set_content(std::move(body), kJsonType);
}

}  // namespace ff::agent
