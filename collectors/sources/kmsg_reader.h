// The live kernel ring buffer, /dev/kmsg, read only when the config names it
// (a container or a second slurmd on one host must not claim the host's
// kernel messages). Records become raw dmesg lines ("[86123.512004] msg"),
// which node_info.boot_time dates.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "collectors/window/time_window.h"
#include "incident/time/timestamp_parser.h"

namespace ff::collect {

constexpr const char* kKmsgPath = "/dev/kmsg";

struct KmsgRead {
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
  std::string error;
  // The part of the window the ring buffer covered when read: from its
  // oldest record still there (or the window's begin) to the moment of the
  // read (or the window's end). 0 when unknown (no boot time to date it).
  TimeUs covered_from = 0;
  TimeUs covered_until = 0;
};

// Reads what the buffer holds now (non-blocking) and writes the records in
// the window to `out`; nothing is written when none is.
KmsgRead read_kmsg(const TimeWindow& window, const TimeContext& ctx,
                   const std::filesystem::path& out, const char* device = kKmsgPath);

}  // namespace ff::collect
