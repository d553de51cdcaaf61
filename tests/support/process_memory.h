// A process's resident memory as the kernel counts it, for tests that bound
// it, and whether AddressSanitizer runs (its shadow memory and quarantine
// make resident memory meaningless to compare; such tests compare counts).
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <string>

// gcc says so with a macro, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define FF_UNDER_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FF_UNDER_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef FF_UNDER_ADDRESS_SANITIZER
#define FF_UNDER_ADDRESS_SANITIZER 0
#endif

namespace fftest {

// A process's peak resident set (VmHWM), in KiB; -1 when unknown.
inline long peak_rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// Sets this process's peak resident set back to what is resident now, so a
// later peak_rss_kib(getpid()) measures only what came after. False when the
// kernel does not offer it (/proc/self/clear_refs, Linux 4.0).
inline bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace fftest
