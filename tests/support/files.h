// Whole-file reads and writes for tests, failing loudly: a test that reads a
// file the code under test should have written learns which file was missing
// and why, instead of comparing against an empty string.
#pragma once

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ff::test_support {

namespace files_detail {
inline std::runtime_error failure(const char* what, const std::filesystem::path& path, int error) {
  return std::runtime_error(std::string(what) + " " + path.string() + ": " + std::strerror(error));
}
}  // namespace files_detail

namespace files_detail {
// The whole file; nullopt only when there is no such file and that is allowed.
inline std::optional<std::string> read(const std::filesystem::path& path, bool absent_is_empty) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int error = errno ? errno : ENOENT;
    if (absent_is_empty && error == ENOENT) return std::nullopt;
    throw failure("cannot open", path, error);
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw failure("cannot read", path, errno ? errno : EIO);
  return content.str();
}
}  // namespace files_detail

// The whole file, bytes as they are; throws when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  return *files_detail::read(path, false);
}

// The whole file, or "" when there is no such file (a log nobody wrote to
// yet, a process that is gone); any other failure throws.
inline std::string read_file_if_present(const std::filesystem::path& path) {
  return files_detail::read(path, true).value_or("");
}

// Writes `text` as the whole file, creating its parent directories.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw files_detail::failure("cannot create", path, errno ? errno : EACCES);
  out << text;
  out.flush();
  if (!out) throw files_detail::failure("cannot write", path, errno ? errno : EIO);
}

// write_file, then executable by its owner (a script a test runs or hands
// to the code under test).
inline void write_executable(const std::filesystem::path& path, const std::string& text) {
  write_file(path, text);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add);
}

}  // namespace ff::test_support
