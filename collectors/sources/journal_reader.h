// The systemd journal as a source, for nodes that keep no text syslog. A
// kind's list in node.yaml may name journal selections next to its file
// globs ("journal:kernel", "journal:unit=slurmd.service"); they are read
// with sd-journal, cut to the window, and written as the lines
// `journalctl -o short-iso-precise --utc` prints, which the engine dates
// like any RFC 3339 syslog line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/window/time_window.h"

namespace ff::collect {

constexpr std::string_view kJournalPrefix = "journal:";

// FIELD=value pairs that must all hold (sd_journal_add_match within one
// disjunction; the same field twice means either value).
using JournalConjunction = std::vector<std::string>;

// What one "journal:..." entry selects: entries matching any conjunction.
// Empty = the whole journal ("journal:all").
struct JournalSelection {
  std::string entry;  // as configured, for coverage details
  std::vector<JournalConjunction> any_of;
};

inline bool is_journal_entry(std::string_view entry) {
  return entry.substr(0, kJournalPrefix.size()) == kJournalPrefix;
}

// "journal:kernel"          _TRANSPORT=kernel
// "journal:unit=NAME"       _SYSTEMD_UNIT=NAME, or systemd's own lines about
//                           it (_PID=1 UNIT=NAME: "Main process exited"), as
//                           journalctl -u; NAME without a dot gets ".service"
// "journal:identifier=ID"   SYSLOG_IDENTIFIER=ID
// "journal:FIELD=value"     any journal field (upper case, digits, '_')
// "journal:all"             everything
// nullopt and `error` set when the entry is none of these.
std::optional<JournalSelection> parse_journal_entry(const std::string& entry, std::string& error);

struct JournalRead {
  std::uint64_t lines = 0;  // entries written (a multi-line message is one)
  std::uint64_t bytes = 0;  // written to `out`
  std::uint64_t lines_cut = 0;
  std::string missing;  // no journal there: why (then nothing else is set)
  std::string error;    // could not read it (lines may still be > 0)
  std::string note;     // read, but part of the window was not there
  // The part of the window the journal covers: from its first entry (or the
  // window's begin) to the moment it was read (or the window's end). 0 when
  // not read. The journal is taken to be live: journald writes it as the
  // kernel logs, so an entry absent inside this span was never logged.
  TimeUs covered_from = 0;
  TimeUs covered_until = 0;
};

// Writes the entries of `selections` (any of them) inside `window` to `out`,
// oldest first, one line each; `out` is left absent when none is. `directory`
// "" = this host's system journal, else the journal files in that directory.
// `host` stands in for an entry without _HOSTNAME. Memory stays bounded by
// the longest kept line whatever the journal's size.
JournalRead read_journal(const std::vector<JournalSelection>& selections,
                         const std::string& directory, const TimeWindow& window,
                         const std::string& host, const std::filesystem::path& out);

}  // namespace ff::collect
