#include "common/content_digest.h"

#include <openssl/evp.h>

#include <algorithm>
#include <stdexcept>

namespace ff::content_digest {

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Context>()) {
  ctx_->md = EVP_MD_CTX_new();
  if (!ctx_->md || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: cannot initialise libcrypto's digest");
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view bytes) {
  if (!ctx_->md) throw std::logic_error("sha256: update after hex()");
  if (!bytes.empty() && EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size()) != 1)
    throw std::runtime_error("sha256: digest update failed");
}

std::string Sha256::hex() {
  if (!ctx_->md) throw std::logic_error("sha256: hex() twice");
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_->md, out, &len) != 1)
    throw std::runtime_error("sha256: digest final failed");
  EVP_MD_CTX_free(ctx_->md);
  ctx_->md = nullptr;
  static const char* digits = "0123456789abcdef";
  std::string text;
  text.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    text.push_back(digits[out[i] >> 4]);
    text.push_back(digits[out[i] & 0xf]);
  }
  return text;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 sha;
  sha.update(bytes);
  return sha.hex();
}

namespace {

void put_length(Sha256& sha, std::uint64_t n) {
  char be[8];
  for (int i = 7; i >= 0; --i) {
    be[i] = static_cast<char>(n & 0xff);
    n >>= 8;
  }
  sha.update(std::string_view(be, sizeof be));
}

}  // namespace

BundleDigest::BundleDigest(std::string_view meta) {
  put_length(sha_, meta.size());
  sha_.update(meta);
}

void BundleDigest::end_file() {
  if (remaining_ != 0) throw std::logic_error("bundle digest: a file's bytes are missing");
}

void BundleDigest::begin_file(std::string_view name, std::uint64_t length) {
  end_file();
  // The same name twice is digested (the agent refuses such a bundle with
  // its own message); only the order is fixed.
  if (any_file_ && std::string_view(last_name_) > name)
    throw std::logic_error("bundle digest: files out of order");
  last_name_.assign(name);
  any_file_ = true;
  put_length(sha_, name.size());
  sha_.update(name);
  put_length(sha_, length);
  remaining_ = length;
}

void BundleDigest::update(std::string_view bytes) {
  if (bytes.size() > remaining_) throw std::logic_error("bundle digest: more bytes than announced");
  remaining_ -= bytes.size();
  sha_.update(bytes);
}

std::string BundleDigest::hex() {
  end_file();
  return sha_.hex();
}

std::string bundle_digest(std::string_view meta,
                          std::vector<std::pair<std::string_view, std::string_view>> files) {
  std::sort(files.begin(), files.end());
  BundleDigest digest(meta);
  for (const auto& [name, content] : files) {
    digest.begin_file(name, content.size());
    digest.update(content);
  }
  return digest.hex();
}

}  // namespace ff::content_digest
