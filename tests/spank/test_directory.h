// A fresh directory under /tmp for one test, removed with everything in it.
#ifndef FIRSTFAULT_TESTS_SPANK_TEST_DIRECTORY_H_
#define FIRSTFAULT_TESTS_SPANK_TEST_DIRECTORY_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

class TestDirectory {
 public:
  TestDirectory() {
    char pattern[] = "/tmp/ff-spank-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TestDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream content;
  content << file.rdbuf();
  return content.str();
}

inline void WriteWholeFile(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << content;
}

#endif  // FIRSTFAULT_TESTS_SPANK_TEST_DIRECTORY_H_
