// Step 2 on every core. The files of an incident are independent until
// their events meet in the event store, so a pool of threads reads and
// matches them, a large plain file in several ranges of lines. The events
// reach the caller on its own thread in read order (file order, then line
// order), whatever thread finished first: that order, never timing, is
// what the rest of the pipeline sees, so the thread count cannot change a
// diagnosis.
//
// Memory stays bounded whatever a file holds: at most a few ranges are in
// flight ahead of the one being delivered, and a thread that has buffered
// its share of events waits for the caller to take them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/extract/event_extractor.h"
#include "engine/read/incident_layout.h"
#include "engine/read/line_reader.h"
#include "engine/read/unique_fd.h"
#include "incident/time/timestamp_parser.h"

namespace ff {

// One file to scan, with the time context its lines are read in.
struct ScanFile {
  SourceFile file;
  TimeContext tc;
};

// Opens a file of the incident for reading (an empty UniqueFd, with
// `error` set, when it cannot be). Called from the scanning threads.
using OpenFileFn = std::function<UniqueFd(const SourceFile& file, std::string& error)>;

struct ScanOptions {
  unsigned jobs = 1;                                    // threads; 1 scans on the caller's thread
  std::uint64_t split_bytes = std::uint64_t{64} << 20;  // plain files larger are split
};

// Per file, in file order: `on_event` for each of its events (line numbers
// counted from the file's start, `seq` not set), then `on_file` once with
// the statistics of the whole file. Both run on the calling thread.
using ScanEventFn = std::function<void(std::size_t file_index, Event&& e)>;
using ScanFileDoneFn = std::function<void(std::size_t file_index, const ExtractStats& stats)>;

void scan_files(const std::vector<ScanFile>& files, const EventExtractor& extractor,
                const OpenFileFn& open, const ScanOptions& options, const ScanEventFn& on_event,
                const ScanFileDoneFn& on_file);

// The ranges a file of `size` bytes is read in: fixed multiples of
// `split_bytes`, the last one open-ended (a file that grows while read is
// read to its end). Exposed for tests.
std::vector<ByteRange> split_ranges(std::uint64_t size, std::uint64_t split_bytes);

}  // namespace ff
