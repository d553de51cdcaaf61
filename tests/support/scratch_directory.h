// A fresh, empty directory for one test (mkdtemp under TMPDIR, or /tmp),
// removed with everything in it when the object goes. FF_KEEP_TEST_DIRS=1
// keeps it and says where on stderr, to look at what a failing test left.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ff::test_support {

class ScratchDirectory {
 public:
  // `purpose` names it (/tmp/ff-<purpose>-XXXXXX), so a kept one says
  // which test made it.
  explicit ScratchDirectory(std::string_view purpose = "test") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("ff-" + std::string(purpose) + "-XXXXXX"))
            .string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot make a scratch directory " + pattern + ": " +
                               std::strerror(errno));
    path_ = pattern;
  }
  ~ScratchDirectory() {
    if (keep_requested()) {
      std::cerr << "FF_KEEP_TEST_DIRS: kept " << path_.string() << "\n";
      return;
    }
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& relative) const {
    return path_ / relative;
  }

  // FF_KEEP_TEST_DIRS set to anything but "" or "0".
  static bool keep_requested() {
    const char* keep = std::getenv("FF_KEEP_TEST_DIRS");
    return keep != nullptr && *keep != '\0' && std::string_view(keep) != "0";
  }

 private:
  std::filesystem::path path_;
};

}  // namespace ff::test_support
