// MUNGE credentials: how a node proves to the agent which uid sent a bundle
// or a fast-pass request (docs/slurm-path.md §4). The collector encodes, the
// agent decodes; both talk to the local munged.
#pragma once

#include <sys/types.h>

#include <string>

namespace ff::munge_credential {

enum class DecodeError {
  none,
  missing,   // no credential at all
  invalid,   // not a credential, or not one of this realm / key
  expired,   // older than its TTL
  replayed,  // decoded before: a copied request
  other,     // munged unreachable, out of memory, ...
};

struct DecodeResult {
  bool ok = false;
  DecodeError error = DecodeError::none;
  std::string message;  // munge's own text when !ok
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  std::string payload;
};

// `socket` empty = munged's default socket. Throws std::runtime_error with
// munge's message when no credential can be made (munged not running).
std::string encode(const std::string& payload, const std::string& socket = {});

DecodeResult decode(const std::string& credential, const std::string& socket = {});

const char* error_name(DecodeError error);

}  // namespace ff::munge_credential
