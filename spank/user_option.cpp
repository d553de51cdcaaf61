#include "spank/user_option.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace firstfault::spank {

UserChoice ParseUserChoice(std::string_view value) {
  std::string lower(value);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  constexpr std::array<std::string_view, 6> kOff = {"off", "no",      "false",
                                                    "0",   "disable", "disabled"};
  constexpr std::array<std::string_view, 6> kOn = {"on", "yes", "true", "1", "enable", "enabled"};
  if (std::find(kOff.begin(), kOff.end(), lower) != kOff.end()) return UserChoice::kOff;
  if (lower.empty() || std::find(kOn.begin(), kOn.end(), lower) != kOn.end()) {
    return UserChoice::kOn;
  }
  return UserChoice::kInvalid;
}

}  // namespace firstfault::spank
