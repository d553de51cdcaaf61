#include "agent/server/read_token.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "agent/server/agent_config.h"

namespace ff::agent {

std::string load_read_token(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw ConfigError("read_token_file " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw ConfigError("read_token_file " + path + ": not a regular file");
  if ((st.st_mode & (S_IROTH | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw ConfigError("read_token_file " + path + " is readable or writable by other users (mode " +
                      mode + "); run: chmod o-rwx " + path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("read_token_file " + path + ": cannot read it");
  std::ostringstream s;
  s << in.rdbuf();
  std::string token = s.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t'))
    token.pop_back();
  for (char c : token)
    if (c < 0x21 || c > 0x7e)
      throw ConfigError("read_token_file " + path +
                        ": the token must be one word of printable ASCII (no space, no newline)");
  if (token.size() < kMinReadTokenBytes)
    throw ConfigError("read_token_file " + path + ": the token is shorter than " +
                      std::to_string(kMinReadTokenBytes) +
                      " characters (make one: head -c 32 /dev/urandom | base64)");
  return token;
}

bool bearer_token_matches(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kScheme = "Bearer ";
  if (token.empty() || authorization.substr(0, kScheme.size()) != kScheme) return false;
  std::string_view given = authorization.substr(kScheme.size());
  // Every byte of the token is compared whatever is given, so the time says
  // nothing about where the two first differ; volatile keeps the compiler
  // from stopping at the first difference.
  volatile unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (std::size_t i = 0; i < token.size(); ++i) {
    unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff = diff | static_cast<unsigned char>(g ^ static_cast<unsigned char>(token[i]));
  }
  return diff == 0;
}

}  // namespace ff::agent
