// How JSON leaves the agent. Debian's httplib compresses a reply typed
// "application/json" by itself, with Brotli at its slowest setting whenever
// a browser offers "br": a diagnosis of a few megabytes (a hang of
// thousands of ranks) then cost seconds of a core per request. The agent's
// replies carry a charset, which httplib's check leaves alone, and a large
// body is gzipped here, at a fast level, when the client accepts gzip.
#pragma once

#include <httplib.h>

#include <string>

namespace ff::agent {

constexpr const char* kJsonType = "application/json; charset=utf-8";

// Sets `body` as the reply; `req` (may be null) says what the client accepts.
void set_json_reply(const httplib::Request* req, httplib::Response& res, std::string body);

}  // namespace ff::agent
