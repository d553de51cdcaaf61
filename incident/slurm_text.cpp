#include "incident/slurm_text.h"

#include <algorithm>

namespace ff {
namespace {

// The length of the valid UTF-8 sequence at text[i] (2 to 4), or 0 when the
// byte there does not start one (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string slurm_safe_text(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes + 1));
  auto put = [&](char c) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) return;  // rule 5
    out.push_back(c);
  };
  // Sanitised until one character past the limit that is not a space: enough
  // to know whether the text is cut.
  auto room = [&] {
    return out.size() <= max_bytes || (out.size() == max_bytes + 1 && out.back() == ' ');
  };
  for (std::size_t i = 0; i < text.size() && room();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {  // rule 1
      put(' ');
      ++i;
    } else if (c >= 0x80) {  // rule 2
      std::size_t length = utf8_sequence_length(text, i);
      put('?');
      i += length == 0 ? 1 : length;
    } else {
      bool shell_special = c == '"' || c == '\'' || c == '`' || c == '$' || c == '\\';
      if (!shell_special) put(static_cast<char>(c));  // rule 3
      ++i;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() <= max_bytes) return out;
  // Rule 6: cut, with "..." saying so when there is room for it.
  bool room_for_dots = max_bytes >= 4;
  out.resize(room_for_dots ? max_bytes - 3 : max_bytes);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return room_for_dots ? out + "..." : out;
}

}  // namespace ff
