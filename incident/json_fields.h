// How the incident readers take a field from a JSON object they do not
// trust: never throwing, and reading text the way the engine always has.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "incident/diagnosis.h"
#include "incident/time/time.h"

namespace ff::json_fields {

// The field as text: a string as it is, an integer in decimal, any other
// value as its JSON text; "" when absent or null.
std::string text(const nlohmann::json& j, const char* key);

// The field as an RFC 3339 time; nullopt when absent, and when it is not one
// (then an error, source `source`, names the field and its text).
MaybeTime time(const nlohmann::json& j, const char* key, const char* source,
               std::vector<ErrorItem>& errors);

}  // namespace ff::json_fields
