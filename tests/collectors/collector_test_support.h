// Helpers shared by the collector tests: gzip files, file times, syslog times.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <ctime>
#include <filesystem>
#include <string>

#include "incident/time/time.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace ff::collect::testing {

// Whole files (tests/support), under the names the collector tests use.
using ff::test_support::read_file;
using ff::test_support::write_file;

inline void write_gzip(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  gzFile gz = gzopen(path.c_str(), "wb");
  gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
  gzclose(gz);
}

inline void set_mtime(const std::filesystem::path& path, TimeUs t) {
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = static_cast<time_t>(t / kUsPerSecond);
  times[0].tv_nsec = times[1].tv_nsec = 0;
  ::utimensat(AT_FDCWD, path.c_str(), times, 0);
}

inline TimeUs at(const std::string& iso) {
  return *parse_iso8601_utc(iso);
}

// "Nov 30 05:01:02" for an RFC 3164 line (UTC).
inline std::string rfc3164(TimeUs t) {
  return format_syslog_time(t);
}

}  // namespace ff::collect::testing
