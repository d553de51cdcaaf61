// One field of a YAML configuration file (agent.yaml, its loki: and
// prometheus: sections), read with an error that names the file and line:
// "<file>:<line>: <prefix><what>", thrown as the caller's error type.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace ff::yaml_field {

template <typename Error>
[[noreturn]] void fail(const std::string& file, const YAML::Mark& mark, const std::string& what) {
  std::string where = mark.is_null() ? file : file + ":" + std::to_string(mark.line + 1);
  throw Error(where + ": " + what);
}

// A single value of type T; `prefix` goes before the message ("loki: ").
template <typename T, typename Error>
T scalar(const std::string& file, const std::string& key, const YAML::Node& node,
         const std::string& prefix = "") {
  if (!node.IsScalar())
    fail<Error>(file, node.Mark(), prefix + "'" + key + "' must be a single value");
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    fail<Error>(file, node.Mark(),
                prefix + "'" + key + "' has the wrong type: '" + node.Scalar() + "'");
  }
}

}  // namespace ff::yaml_field
