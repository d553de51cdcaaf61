#include "collectors/sources/journal_reader.h"

#include <systemd/sd-journal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "collectors/sources/tail_copy.h"
#include "incident/time/time.h"

namespace ff::collect {
namespace {

// sd_journal_add_match's rule for field names: what journald itself accepts.
bool valid_field_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

struct JournalCloser {
  void operator()(sd_journal* j) const { sd_journal_close(j); }
};

std::string errno_text(int negative_errno) {
  return std::strerror(-negative_errno);
}

// A field's value, copied: sd_journal_get_data's pointer is only good until
// its next call. Header fields (host, identifier, pid) are short; `limit`
// keeps a hostile one from growing the line.
std::string header_field(sd_journal* j, const char* name, std::size_t limit = 256) {
  const void* data = nullptr;
  std::size_t len = 0;
  if (sd_journal_get_data(j, name, &data, &len) < 0) return {};
  std::size_t skip = std::strlen(name) + 1;  // "NAME="
  if (len <= skip) return {};
  std::string value(static_cast<const char*>(data) + skip, std::min(len - skip, limit));
  // Host and identifier are single words in a syslog prefix; anything else
  // would move where the engine finds the message.
  for (char& c : value)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f || c == ':' || c == '[') c = '_';
  return value;
}

// Length of the valid UTF-8 sequence at s[i], 0 when the byte starts none.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xbf;  // bounds of the second byte
  if (b >= 0xc2 && b <= 0xdf)
    n = 2;
  else if (b >= 0xe0 && b <= 0xef) {
    n = 3;
    if (b == 0xe0) lo = 0xa0;  // overlong
    if (b == 0xed) hi = 0x9f;  // surrogates
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 4;
    if (b == 0xf0) lo = 0x90;
    if (b == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b1 < lo || b1 > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  return n;
}

// One entry's text, every line of it cut at kMaxLineBytes.
class EntryText {
 public:
  void start(std::string_view prefix) {
    text_.clear();
    line_start_ = 0;
    cut_ = false;
    cuts_ = 0;
    put(prefix, true);
    indent_ = std::min<std::size_t>(prefix.size(), 64);
  }
  // `divisible`: may be cut part way (plain text); an escape or a multi-byte
  // character is kept whole or not at all, so a cut line stays valid UTF-8.
  void put(std::string_view s, bool divisible) {
    std::size_t used = text_.size() - line_start_;
    std::size_t room = used >= kMaxLineBytes ? 0 : kMaxLineBytes - used;
    if (s.size() <= room) {
      text_.append(s);
      return;
    }
    if (divisible) text_.append(s.substr(0, room));
    if (!cut_) ++cuts_;
    cut_ = true;
  }
  // A message's own line break: journalctl indents what follows, and a line
  // without a timestamp is the engine's continuation of the one before.
  void newline() {
    text_ += '\n';
    line_start_ = text_.size();
    cut_ = false;
    text_.append(indent_, ' ');
  }
  void finish() { text_ += '\n'; }  // beyond the limit, as tail_copy's cut lines
  bool full() const { return text_.size() - line_start_ >= kMaxLineBytes; }
  const std::string& text() const { return text_; }
  std::uint64_t cuts() const { return cuts_; }

 private:
  std::string text_;
  std::size_t line_start_ = 0;
  std::size_t indent_ = 0;
  bool cut_ = false;
  std::uint64_t cuts_ = 0;
};

// The journal keeps a message with control bytes or invalid UTF-8 as a
// blob; journalctl then prints "[N blob data]". The evidence is kept
// instead: such bytes become \xNN, so a line holds printable UTF-8 only.
void put_message(EntryText& out, std::string_view m) {
  while (!m.empty() && m.back() == '\n') m.remove_suffix(1);
  std::size_t run = 0;  // start of plain bytes not yet written
  for (std::size_t i = 0; i < m.size();) {
    auto b = static_cast<unsigned char>(m[i]);
    bool plain = (b >= 0x20 && b < 0x7f) || b == '\t';
    std::size_t seq = 0;
    if (plain) {
      ++i;
      continue;
    }
    out.put(m.substr(run, i - run), true);
    if (b >= 0x80) seq = utf8_sequence(m, i);
    if (seq) {
      out.put(m.substr(i, seq), false);
      i += seq;
    } else if (b == '\n') {
      out.newline();
      ++i;
    } else {
      char esc[5];
      std::snprintf(esc, sizeof esc, "\\x%02x", b);
      out.put(esc, false);
      ++i;
    }
    run = i;
    // A 1 MiB message of control bytes must not be walked for nothing.
    if (out.full() && m.find('\n', i) == std::string_view::npos) {
      out.put(m.substr(i), true);  // counts the cut
      return;
    }
  }
  out.put(m.substr(run), true);
}

}  // namespace

std::optional<JournalSelection> parse_journal_entry(const std::string& entry, std::string& error) {
  if (!is_journal_entry(entry)) {
    error = "'" + entry + "' is no journal entry";
    return std::nullopt;
  }
  std::string spec = entry.substr(kJournalPrefix.size());
  JournalSelection s{entry, {}};
  auto eq = spec.find('=');
  std::string key = spec.substr(0, eq);
  std::string value = eq == std::string::npos ? "" : spec.substr(eq + 1);
  if (spec == "all") return s;
  if (spec == "kernel") {
    s.any_of.push_back({"_TRANSPORT=kernel"});
    return s;
  }
  if (eq != std::string::npos && !value.empty()) {
    if (key == "unit") {
      if (value.find('.') == std::string::npos) value += ".service";
      s.any_of.push_back({"_SYSTEMD_UNIT=" + value});
      // systemd's lines about the unit ("Main process exited, code=killed")
      // say why a daemon died; journalctl -u shows them too.
      s.any_of.push_back({"_PID=1", "UNIT=" + value});
      return s;
    }
    if (key == "identifier") {
      s.any_of.push_back({"SYSLOG_IDENTIFIER=" + value});
      return s;
    }
    if (valid_field_name(key)) {
      s.any_of.push_back({spec});
      return s;
    }
  }
  error = "'" + entry +
          "': expected journal:kernel, journal:unit=NAME, journal:identifier=ID, "
          "journal:FIELD=value or journal:all";
  return std::nullopt;
}

JournalRead read_journal(const std::vector<JournalSelection>& selections,
                         const std::string& directory, const TimeWindow& window,
                         const std::string& host, const std::filesystem::path& out) {
  JournalRead result;
  const std::string where = directory.empty() ? "the system journal" : directory;
  sd_journal* raw = nullptr;
  int r;
  if (directory.empty()) {
    r = sd_journal_open(&raw, SD_JOURNAL_LOCAL_ONLY);
  } else {
    std::error_code ec;
    if (!std::filesystem::exists(directory, ec)) {
      result.missing = "no journal directory " + directory;
      return result;
    }
    r = sd_journal_open_directory(&raw, directory.c_str(), 0);
  }
  if (r < 0) {
    result.error = "cannot open " + where + ": " + errno_text(r);
    return result;
  }
  std::unique_ptr<sd_journal, JournalCloser> journal(raw);
  sd_journal* j = raw;

  std::uint64_t first = 0, last = 0;
  r = sd_journal_get_cutoff_realtime_usec(j, &first, &last);
  if (r == 0) {
    result.missing = "no journal file in " + where;
    return result;
  }
  if (r < 0) {
    result.error = where + ": " + errno_text(r);
    return result;
  }
  auto begin = static_cast<std::uint64_t>(window.begin < 0 ? 0 : window.begin);
  auto end = static_cast<std::uint64_t>(window.end < 0 ? 0 : window.end);
  if (first > end) {
    // Rotated away (or journald started after the job): no evidence, which
    // must not read as a quiet node.
    result.missing = where + " begins at " + format_time_journal(static_cast<TimeUs>(first)) +
                     ", after the window";
    return result;
  }
  if (first > begin)
    result.note = where + " begins at " + format_time_journal(static_cast<TimeUs>(first)) +
                  ", inside the window";

  // Without a threshold a compressed field is only decompressed to 64 KiB;
  // with it, up to the longest line kept and no further.
  sd_journal_set_data_threshold(j, kMaxLineBytes + 16);
  bool everything = false;
  for (const auto& s : selections) everything = everything || s.any_of.empty();
  if (!everything) {
    for (const auto& s : selections) {
      for (const auto& conjunction : s.any_of) {
        for (const auto& match : conjunction) {
          r = sd_journal_add_match(j, match.data(), match.size());
          if (r < 0) {
            result.error = s.entry + ": bad match " + match + ": " + errno_text(r);
            return result;
          }
        }
        sd_journal_add_disjunction(j);
      }
    }
  }

  r = sd_journal_seek_realtime_usec(j, begin);
  if (r < 0) {
    result.error = "cannot seek " + where + ": " + errno_text(r);
    return result;
  }
  std::FILE* f = nullptr;
  int write_error = 0;
  EntryText entry;
  std::string prefix;
  while ((r = sd_journal_next(j)) > 0) {
    std::uint64_t t = 0;
    if (sd_journal_get_realtime_usec(j, &t) < 0) continue;
    // The journal is ordered by time only file by file; like journalctl
    // --until the read ends at the first entry after the window, and one
    // before it (a clock stepped back) is passed over.
    if (t > end) break;
    if (t < begin) continue;

    std::string h = header_field(j, "_HOSTNAME");
    std::string ident = header_field(j, "SYSLOG_IDENTIFIER");
    if (ident.empty()) ident = header_field(j, "_COMM");
    if (ident.empty()) ident = header_field(j, "_TRANSPORT", 16) == "kernel" ? "kernel" : "unknown";
    std::string pid = header_field(j, "_PID", 20);
    if (pid.empty()) pid = header_field(j, "SYSLOG_PID", 20);
    prefix = format_time_journal(static_cast<TimeUs>(t));
    prefix += ' ';
    prefix += h.empty() ? host : h;
    prefix += ' ';
    prefix += ident;
    if (!pid.empty()) prefix += "[" + pid + "]";
    prefix += ": ";
    entry.start(prefix);
    const void* data = nullptr;
    std::size_t len = 0;
    if (sd_journal_get_data(j, "MESSAGE", &data, &len) >= 0 && len > 8)
      put_message(entry, std::string_view(static_cast<const char*>(data) + 8, len - 8));
    entry.finish();
    if (!f) {
      f = std::fopen(out.c_str(), "we");
      if (!f) {
        write_error = errno ? errno : EIO;
        break;
      }
    }
    const std::string& text = entry.text();
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) {
      write_error = errno ? errno : EIO;
      break;
    }
    result.bytes += text.size();
    result.lines_cut += entry.cuts();
    ++result.lines;
  }
  if (f && std::fclose(f) != 0 && !write_error) write_error = errno ? errno : EIO;
  if (write_error) {
    // As for the file sources: a half-written window is lost, not kept.
    std::error_code ec;
    std::filesystem::remove(out, ec);
    result.error =
        "window not kept, cannot write " + out.string() + ": " + std::strerror(write_error);
    result.lines = result.bytes = result.lines_cut = 0;
    return result;
  }
  if (r < 0) {
    result.error = "reading " + where + " stopped: " + errno_text(r);
    return result;
  }
  result.covered_from = static_cast<TimeUs>(std::max(first, begin));
  result.covered_until = std::min(static_cast<TimeUs>(end), wall_clock_now_us());
  return result;
}

}  // namespace ff::collect
