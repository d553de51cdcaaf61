// The read token (agent.yaml read_token_file): a browser cannot make munge
// credentials, so a request with `Authorization: Bearer <token>` may read
// what a read credential may (the GET /api/v1 job endpoints), never write.
#pragma once

#include <string>
#include <string_view>

namespace ff::agent {

// Shorter tokens are refused: the token is all that guards the diagnoses.
inline constexpr std::size_t kMinReadTokenBytes = 16;

// Reads the token file: its content without trailing whitespace, printable
// ASCII with no space, at least kMinReadTokenBytes. Throws ConfigError (with
// the path and what to do) when the file is missing, unreadable, not a
// regular file, readable or writable by other users, or the token is unfit.
std::string load_read_token(const std::string& path);

// True when `authorization` is "Bearer <token>" with exactly `token`
// (non-empty). Takes the same time wherever the two differ.
bool bearer_token_matches(std::string_view authorization, std::string_view token);

}  // namespace ff::agent
