#include "incident/json_fields.h"

namespace ff::json_fields {

std::string text(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  return it->dump();
}

MaybeTime time(const nlohmann::json& j, const char* key, const char* source,
               std::vector<ErrorItem>& errors) {
  std::string s = text(j, key);
  if (s.empty()) return std::nullopt;
  auto t = parse_iso8601_utc(s);
  if (!t)
    errors.push_back({source, 0, std::string("field '") + key + "' is not an RFC 3339 time: " + s});
  return t;
}

}  // namespace ff::json_fields
