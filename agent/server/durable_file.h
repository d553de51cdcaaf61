// Writing files so that an acknowledged upload survives a crash: data and
// directory entries are fsync'd before anything is reported as stored.
#pragma once

#include <filesystem>
#include <string_view>

namespace ff::agent {

// Creates (truncating) `path`, writes `data`, fsyncs it. Throws
// std::system_error.
void write_file_synced(const std::filesystem::path& path, std::string_view data);
// fsyncs a directory so the entries made in it are durable.
void sync_directory(const std::filesystem::path& dir);
// Writes to "<path>.tmp", fsyncs and renames over `path`.
void replace_file_synced(const std::filesystem::path& path, std::string_view data);
// Creates the missing directories of `dir`, fsyncing each parent whose
// entries changed.
void create_directories_synced(const std::filesystem::path& dir);

}  // namespace ff::agent
