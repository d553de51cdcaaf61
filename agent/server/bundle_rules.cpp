#include "agent/server/bundle_rules.h"

#include <cctype>

#include "common/node_name.h"

namespace ff::agent {

namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

// ^[A-Za-z0-9][A-Za-z0-9._-]{0,max_rest}$, and never "." or "..".
bool plain_name(const std::string& s, std::size_t max_rest) {
  if (s.empty() || s.size() > max_rest + 1) return false;
  if (!std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!is_name_char(c)) return false;
  return s.find("..") == std::string::npos;
}

}  // namespace

bool valid_job_id(const std::string& job_id) {
  std::size_t i = 0;
  auto digits = [&]() {
    std::size_t start = i;
    while (i < job_id.size() && std::isdigit(static_cast<unsigned char>(job_id[i]))) ++i;
    return i > start && i - start <= 19;
  };
  if (!digits()) return false;
  if (i == job_id.size()) return true;
  if (job_id[i] != '_') return false;
  ++i;
  return digits() && i == job_id.size();
}

bool valid_node_name(const std::string& node) {
  return ff::valid_node_name(node);
}

bool valid_bundle_id(const std::string& bundle_id) {
  return plain_name(bundle_id, 199);
}

}  // namespace ff::agent
