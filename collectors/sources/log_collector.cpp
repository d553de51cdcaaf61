#include "collectors/sources/log_collector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "collectors/sources/journal_reader.h"
#include "collectors/sources/kmsg_reader.h"
#include "collectors/sources/log_files.h"
#include "collectors/sources/tail_copy.h"
#include "collectors/window/window_reader.h"

namespace ff::collect {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

LogCollection collect_log_kind(const SourceGlobs& source, const std::string& node,
                               const TimeWindow& window, const TimeContext& ctx,
                               const std::filesystem::path& bundle_root) {
  LogCollection result;
  result.coverage.collector = source.kind;
  result.coverage.node = node;
  result.coverage.status = CoverageStatus::kMissing;
  result.coverage.lines = 0;
  std::filesystem::path dir = bundle_root / "nodes" / node;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);

  std::vector<std::string> globs;
  std::vector<JournalSelection> journal;
  std::vector<std::string> errors;
  bool want_kmsg = false;
  for (const auto& g : source.globs) {
    if (g == kKmsgPath) {
      want_kmsg = true;
    } else if (is_journal_entry(g)) {
      std::string error;  // the config checked it; a caller building one by hand may not have
      if (auto s = parse_journal_entry(g, error))
        journal.push_back(std::move(*s));
      else
        errors.push_back(error);
    } else {
      globs.push_back(g);
    }
  }
  GlobResult listed = expand_log_globs(globs);

  errors.insert(errors.end(), listed.errors.begin(), listed.errors.end());
  std::vector<std::string> read_ok;
  bool lost = false;  // a window read but not written (spool full)
  // Each file's window goes to a staging name; the final names depend on how
  // many files had lines.
  std::vector<std::filesystem::path> staged;
  std::vector<std::uint64_t> staged_bytes;
  for (const auto& path : listed.files) {
    std::filesystem::path out_path =
        dir / (".staging-" + source.kind + "-" + std::to_string(staged.size()));
    std::unique_ptr<std::FILE, FileCloser> out(std::fopen(out_path.c_str(), "we"));
    if (!out) {
      errors.push_back(out_path.string() + ": cannot write");
      continue;
    }
    std::FILE* f = out.get();
    int write_error = 0;
    WindowReadStats stats =
        read_window(path, window, ctx, [f, &write_error](std::string_view line) {
          if (write_error) return;
          if (std::fwrite(line.data(), 1, line.size(), f) != line.size() ||
              std::fputc('\n', f) == EOF)
            write_error = errno ? errno : EIO;
        });
    if (!write_error && std::fflush(f) != 0) write_error = errno ? errno : EIO;
    if (std::fclose(out.release()) != 0 && !write_error) write_error = errno ? errno : EIO;
    result.bytes_read += stats.bytes_read;
    if (write_error) {
      // The spool is full (or failing): the window could not be kept whole.
      // Without this check the file was half written and still counted as
      // read, so the coverage said "ok" for evidence that was lost. The
      // partial file goes, and its space with it: job.json, which says what
      // was lost, needs that room more than half a log does.
      std::filesystem::remove(out_path, ec);
      std::string problem = path + ": window not kept, cannot write " + out_path.string() + ": " +
                            std::strerror(write_error);
      spdlog::warn("{}", problem);
      errors.push_back(problem);
      lost = true;
      continue;
    }
    if (!stats.error.empty()) errors.push_back(path + ": " + stats.error);
    if (stats.error.empty() || stats.lines_kept > 0) read_ok.push_back(path);
    if (stats.lines_kept == 0) {
      std::filesystem::remove(out_path, ec);
      continue;
    }
    *result.coverage.lines += stats.lines_kept;
    staged.push_back(out_path);
    staged_bytes.push_back(stats.bytes_kept);
  }
  for (std::size_t i = 0; i < staged.size(); ++i) {
    std::size_t age = staged.size() - 1 - i;  // 0 = newest
    std::string name = source.kind + (age ? "." + std::to_string(age) : "");
    std::filesystem::rename(staged[i], dir / name, ec);
    result.files.push_back({"nodes/" + node + "/" + name, source.kind, staged_bytes[i], true});
  }

  // What the live sources (ring buffer, journal) cover of the window: the
  // union of their spans, each read whole.
  TimeUs covered_from = 0, covered_until = 0;
  auto cover = [&](TimeUs from, TimeUs until) {
    if (from <= 0 || until < from) return;
    covered_from = covered_from ? std::min(covered_from, from) : from;
    covered_until = std::max(covered_until, until);
  };
  if (want_kmsg) {
    KmsgRead kmsg = read_kmsg(window, ctx, dir / "dmesg");
    if (!kmsg.error.empty()) {
      errors.push_back(std::string(kKmsgPath) + ": " + kmsg.error);
    } else {
      cover(kmsg.covered_from, kmsg.covered_until);
      read_ok.push_back(kKmsgPath);
      if (kmsg.lines > 0) {
        *result.coverage.lines += kmsg.lines;
        result.files.push_back({"nodes/" + node + "/dmesg", source.kind, kmsg.bytes, true});
      }
    }
  }

  // The journal's entries of this kind, all selections in one time-ordered
  // read: an entry two selections match is written once.
  std::string journal_missing;
  std::vector<std::string> notes;
  bool journal_read = false;
  if (!journal.empty()) {
    std::string name = source.kind + "-journal";  // the engine's kind, next to rotated files
    JournalRead jr = read_journal(journal, source.journal_directory, window, node, dir / name);
    std::string label = "journal (" +
                        join(
                            [&] {
                              std::vector<std::string> entries;
                              for (const auto& s : journal) entries.push_back(s.entry);
                              return entries;
                            }(),
                            " ") +
                        ")";
    if (!jr.missing.empty()) {
      journal_missing = label + ": " + jr.missing;
    } else {
      if (!jr.error.empty()) errors.push_back(label + ": " + jr.error);
      if (jr.error.empty() || jr.lines > 0) journal_read = true;
      if (jr.error.empty()) cover(jr.covered_from, jr.covered_until);
      if (!jr.note.empty()) notes.push_back(label + ": " + jr.note);
      if (jr.lines_cut)
        notes.push_back(std::to_string(jr.lines_cut) + " journal line(s) cut to " +
                        std::to_string(kMaxLineBytes) + " bytes");
      if (jr.lines > 0) {
        *result.coverage.lines += jr.lines;
        result.bytes_read += jr.bytes;
        result.files.push_back({"nodes/" + node + "/" + name, source.kind, jr.bytes, true});
      }
    }
  }

  Coverage& c = result.coverage;
  if (listed.files.empty() && !want_kmsg && !journal_read && errors.empty()) {
    c.status = CoverageStatus::kMissing;
    if (globs.empty() && journal.empty() && !want_kmsg)
      c.detail = "no path configured";
    else if (!globs.empty())
      c.detail = "no file matches " + join(globs, " ");
    if (!journal_missing.empty()) c.detail += (c.detail.empty() ? "" : "; ") + journal_missing;
  } else if (read_ok.empty() && !journal_read) {
    c.status = CoverageStatus::kError;
    c.detail = join(errors, "; ");
  } else {
    c.status = *c.lines > 0 ? CoverageStatus::kOk : CoverageStatus::kEmpty;
    c.detail = journal_read && read_ok.empty() ? "journal read"
               : journal_read ? std::to_string(read_ok.size()) + " file(s) and the journal read"
                              : std::to_string(read_ok.size()) + " file(s) read";
    c.detail += *c.lines > 0 ? "" : ", no line in the window";
    if (!journal_missing.empty()) notes.push_back(journal_missing);
    if (!notes.empty()) c.detail += "; " + join(notes, "; ");
    if (!errors.empty()) c.detail += "; " + join(errors, "; ");
    if (lost) c.status = CoverageStatus::kTruncated;  // some of the window is not in the bundle
    if (covered_until > 0 && !lost) {
      c.covers_from = covered_from;
      c.covers_until = covered_until;
    }
  }
  return result;
}

}  // namespace ff::collect
