// SHA-256 digests that a munge credential's payload names, so a credential
// vouches for the bytes of the request it came with and not only for its
// job, node and bundle id (docs/slurm-path.md section 4). The collector
// computes them over what it sends, the agent over what it received.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ff::content_digest {

// Incremental SHA-256 (OpenSSL's libcrypto).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  // 64 lowercase hex digits; the object takes no more bytes after it.
  std::string hex();

 private:
  struct Context;
  std::unique_ptr<Context> ctx_;
};

std::string sha256_hex(std::string_view bytes);

// The digest of a bundle upload: SHA-256 over the meta part's bytes, then
// for each file in byte order of its name (the path inside the bundle):
// the name's length, the name, the content's length (each length 8 bytes,
// big-endian) and the content. Lengths first, so no two different bundles
// feed the same byte stream.
class BundleDigest {
 public:
  explicit BundleDigest(std::string_view meta);
  // Files must come in byte order of their names, each followed by exactly
  // `length` bytes of update(); hex() throws std::logic_error otherwise.
  void begin_file(std::string_view name, std::uint64_t length);
  void update(std::string_view bytes);
  std::string hex();

 private:
  void end_file();

  Sha256 sha_;
  std::string last_name_;
  bool any_file_ = false;
  std::uint64_t remaining_ = 0;
};

// The same over files held in memory, in any order: (name, content).
std::string bundle_digest(std::string_view meta,
                          std::vector<std::pair<std::string_view, std::string_view>> files);

}  // namespace ff::content_digest
