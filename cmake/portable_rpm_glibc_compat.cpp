// glibc 2.35/2.36 functions the static libstdc++ of GCC 12 calls, defined in
// each program of the EL9 RPM build (cmake/portable_rpm.cmake) so that none
// needs glibc newer than EL9's 2.34. Only that build compiles this file.
#include <sys/random.h>

#include <cerrno>
#include <cstdint>

// std::random_device (libstdc++'s random.o) draws from arc4random, which glibc
// has since 2.36; getrandom (glibc 2.25) is what glibc's arc4random reads too.
extern "C" std::uint32_t arc4random() noexcept {
  std::uint32_t value = 0;
  for (;;) {
    const ssize_t got = getrandom(&value, sizeof value, 0);
    if (got == static_cast<ssize_t>(sizeof value)) {
      return value;
    }
    if (got < 0 && errno != EINTR) {
      // The kernel has getrandom since 3.17; without it there is nothing to fall back on.
      __builtin_trap();
    }
  }
}
