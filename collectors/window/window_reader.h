// Reads only the lines of one log file that fall inside a time window.
//
// A plain file is searched, not scanned: a binary search over byte offsets
// (seek to the middle, skip to the next line, read its time) finds where the
// window starts, then lines are read forward until one is past the window's
// end. A 2 GB syslog costs a few dozen small reads plus the window itself.
// A gzip file cannot be searched; it is skipped when its first line is after
// the window or it was last written before the window, else streamed.
//
// Lines without a readable time belong to the line before them (tracebacks,
// continuation lines): kept inside the window, dropped outside it. A file
// with no readable time at all is kept whole.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "collectors/window/time_window.h"
#include "incident/time/timestamp_parser.h"

namespace ff::collect {

struct WindowReadStats {
  std::uint64_t bytes_read = 0;  // bytes read from the file (decompressed for gzip)
  std::uint64_t lines_kept = 0;
  std::uint64_t bytes_kept = 0;  // including the '\n' of each line
  int probes = 0;                // binary-search steps
  bool untimed = false;          // no line had a readable time: all of it was kept
  std::string skipped;           // why the file was not read at all, "" when it was
  std::string error;             // open/read error, "" when none
};

// Receives each kept line without its '\n'.
using LineSink = std::function<void(std::string_view line)>;

struct WindowReadOptions {
  // Refuse a path that is a symbolic link (O_NOFOLLOW): a reader running as
  // root on a path in a directory others can write must not be led elsewhere.
  bool follow_symlinks = true;
  // A file with no readable time is kept whole; with false nothing of it is
  // kept (stats.untimed says so) and reading stops after the first MiB
  // without a readable time, so a log in an unknown format costs no scan.
  bool keep_untimed = true;
};

WindowReadStats read_window(const std::string& path, const TimeWindow& window,
                            const TimeContext& ctx, const LineSink& sink,
                            const WindowReadOptions& options = {});

}  // namespace ff::collect
