#include "engine/extract/parallel_scan.h"

#include <sys/stat.h>

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

namespace ff {
namespace {

// A range of one file: the unit of work of one thread.
struct ScanUnit {
  std::size_t file = 0;
  ByteRange range;
};

// Events a thread hands over at once: fewer lock round trips per event.
constexpr std::size_t kBatch = 64;
// Events buffered for the unit being delivered, and over all units ahead of
// it: a thread past its share waits for the caller. An event holds at most
// a few KiB (kMaxEventText twice plus captures), so this is tens of MiB at
// worst, whatever the log volume or a hostile line flood.
constexpr std::size_t kMaxQueuedCurrent = 4096;
constexpr std::size_t kMaxQueuedAhead = 8192;

std::vector<ScanUnit> plan_units(const std::vector<ScanFile>& files, const OpenFileFn& open,
                                 std::uint64_t split_bytes) {
  std::vector<ScanUnit> units;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::vector<ByteRange> ranges{ByteRange{}};
    if (split_bytes) {
      // The size as the opener sees it (never by path), and only a plain
      // file can be entered in the middle. A file that cannot be opened is
      // one unit, which reports why.
      std::string error;
      UniqueFd fd = open(files[i].file, error);
      struct stat st {};
      if (fd && ::fstat(fd.get(), &st) == 0 &&
          static_cast<std::uint64_t>(st.st_size) > split_bytes && !is_gzip_file(fd.get()))
        ranges = split_ranges(static_cast<std::uint64_t>(st.st_size), split_bytes);
    }
    for (const auto& r : ranges) units.push_back({i, r});
  }
  return units;
}

ExtractStats scan_unit(const ScanFile& f, const ScanUnit& u, const EventExtractor& extractor,
                       const OpenFileFn& open, const EventSink& sink) {
  std::string error;
  UniqueFd fd = open(f.file, error);
  if (!fd) {
    ExtractStats st;
    st.read.error = error;
    return st;
  }
  return extractor.scan_range(f.file, fd.get(), u.range, f.tc, sink);
}

// Folds the statistics of a file's next range into the file's: counts add
// up, "first" line numbers move by the lines before the range, the span
// runs from the first range's first time to the last range's last time.
void add_range_stats(ExtractStats& file, const ExtractStats& range, bool first_range) {
  std::uint64_t before = file.read.lines;
  if (first_range) {
    file = range;
    return;
  }
  ReadStats& r = file.read;
  if (!r.long_lines && range.read.long_lines)
    r.first_long_line = before + range.read.first_long_line;
  r.lines += range.read.lines;
  r.bytes += range.read.bytes;
  r.long_lines += range.read.long_lines;
  r.nul_bytes += range.read.nul_bytes;
  r.opened = r.opened && range.read.opened;
  if (r.error.empty()) r.error = range.read.error;
  file.candidate_lines += range.candidate_lines;
  file.events += range.events;
  if (!file.bad_times && range.bad_times)
    file.first_bad_time_line = before + range.first_bad_time_line;
  file.bad_times += range.bad_times;
  if (!file.first_time) file.first_time = range.first_time;
  if (range.last_time) file.last_time = range.last_time;
}

// The threads' side and the caller's side of the hand-over, under one lock.
class OrderedHandOver {
 public:
  OrderedHandOver(std::size_t units, std::size_t window) : slots_(units), window_(window) {}

  // A thread's next unit, in order, at most `window` ahead of the one being
  // delivered; false when none is left.
  bool next_unit(std::size_t& unit) {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock,
               [&] { return aborted_ || next_ >= slots_.size() || next_ < current_ + window_; });
    if (aborted_ || next_ >= slots_.size()) return false;
    unit = next_++;
    return true;
  }

  void push(std::size_t unit, std::vector<Event>&& batch) {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [&] {
      return aborted_ || (unit == current_ ? slots_[unit].queued < kMaxQueuedCurrent
                                           : queued_ahead_ < kMaxQueuedAhead);
    });
    if (aborted_) return;
    Slot& s = slots_[unit];
    s.queued += batch.size();
    if (unit != current_) {
      s.ahead += batch.size();
      queued_ahead_ += batch.size();
    }
    s.batches.push_back(std::move(batch));
    if (unit == current_) ready_.notify_one();
  }

  void finish(std::size_t unit, ExtractStats&& stats) {
    std::lock_guard<std::mutex> lock(mu_);
    slots_[unit].stats = std::move(stats);
    slots_[unit].done = true;
    if (unit == current_) ready_.notify_one();
  }

  // The caller's side: the batches of the current unit as they come;
  // returns true, with the unit's statistics, once the unit is complete.
  bool take(std::vector<std::vector<Event>>& batches, ExtractStats& stats) {
    std::unique_lock<std::mutex> lock(mu_);
    Slot& s = slots_[current_];
    ready_.wait(lock, [&] { return !s.batches.empty() || s.done; });
    batches.clear();
    batches.swap(s.batches);
    queued_ahead_ -= s.ahead;  // pushed while the unit was still ahead
    s.ahead = 0;
    s.queued = 0;
    bool done = s.done && batches.empty();
    if (done) {
      stats = std::move(s.stats);
      ++current_;
    }
    room_.notify_all();
    return done;
  }

  // The caller failed: threads stop at their next hand-over.
  void abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    room_.notify_all();
  }

 private:
  struct Slot {
    std::vector<std::vector<Event>> batches;
    std::size_t queued = 0;  // events in batches
    std::size_t ahead = 0;   // of those, pushed while the unit was ahead
    bool done = false;
    ExtractStats stats;
  };
  std::mutex mu_;
  std::condition_variable room_, ready_;
  std::vector<Slot> slots_;
  const std::size_t window_;
  std::size_t next_ = 0, current_ = 0, queued_ahead_ = 0;
  bool aborted_ = false;
};

}  // namespace

std::vector<ByteRange> split_ranges(std::uint64_t size, std::uint64_t split_bytes) {
  std::vector<ByteRange> out;
  if (!split_bytes || size <= split_bytes) return {ByteRange{}};
  for (std::uint64_t at = 0; at < size; at += split_bytes) out.push_back({at, at + split_bytes});
  out.back().end = std::numeric_limits<std::uint64_t>::max();
  return out;
}

void scan_files(const std::vector<ScanFile>& files, const EventExtractor& extractor,
                const OpenFileFn& open, const ScanOptions& options, const ScanEventFn& on_event,
                const ScanFileDoneFn& on_file) {
  std::vector<ScanUnit> units = plan_units(files, open, options.split_bytes);
  // Line numbers of a file's later ranges count on from the ranges before.
  std::vector<ExtractStats> file_stats(files.size());
  std::vector<bool> seen(files.size(), false);
  auto unit_done = [&](std::size_t i, const ExtractStats& st) {
    const ScanUnit& u = units[i];
    add_range_stats(file_stats[u.file], st, !seen[u.file]);
    seen[u.file] = true;
    if (i + 1 == units.size() || units[i + 1].file != u.file) on_file(u.file, file_stats[u.file]);
  };

  unsigned jobs = std::max(1u, options.jobs);
  if (jobs == 1 || units.size() < 2) {
    for (std::size_t i = 0; i < units.size(); ++i) {
      const ScanUnit& u = units[i];
      // Lines before this range are known: earlier ranges are complete.
      std::uint64_t before = seen[u.file] ? file_stats[u.file].read.lines : 0;
      ExtractStats st = scan_unit(files[u.file], u, extractor, open, [&](Event&& e) {
        e.line += before;
        on_event(u.file, std::move(e));
      });
      unit_done(i, st);
    }
    return;
  }

  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, units.size()));
  OrderedHandOver hand_over(units.size(), 2 * static_cast<std::size_t>(jobs));
  std::vector<std::thread> threads;
  threads.reserve(jobs);
  for (unsigned t = 0; t < jobs; ++t)
    threads.emplace_back([&] {
      std::size_t i;
      while (hand_over.next_unit(i)) {
        std::vector<Event> batch;
        ExtractStats st;
        try {
          st = scan_unit(files[units[i].file], units[i], extractor, open, [&](Event&& e) {
            batch.push_back(std::move(e));
            if (batch.size() == kBatch) hand_over.push(i, std::exchange(batch, {}));
          });
          if (!batch.empty()) hand_over.push(i, std::move(batch));
        } catch (const std::exception& ex) {
          // Out of memory, most likely: the file is reported, the others read.
          st.read.error = std::string("not read: ") + ex.what();
        }
        hand_over.finish(i, std::move(st));
      }
    });
  try {
    std::vector<std::vector<Event>> batches;
    for (std::size_t i = 0; i < units.size(); ++i) {
      const ScanUnit& u = units[i];
      std::uint64_t before = seen[u.file] ? file_stats[u.file].read.lines : 0;
      ExtractStats st;
      for (bool done = false; !done;) {
        done = hand_over.take(batches, st);
        for (auto& b : batches)
          for (auto& e : b) {
            e.line += before;
            on_event(u.file, std::move(e));
          }
      }
      unit_done(i, st);
    }
  } catch (...) {
    hand_over.abort();
    for (auto& t : threads) t.join();
    throw;
  }
  for (auto& t : threads) t.join();
}

}  // namespace ff
