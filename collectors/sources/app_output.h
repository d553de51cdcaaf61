// The job's own stdout/stderr (slurm-<id>.out), when it lives on this node:
// copied to app/<a name derived from its basename>, only its last bytes when
// it is huge, because the end of a failed job's output is where the failure
// shows.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "collectors/bundle/bundle_file.h"
#include "incident/coverage.h"

namespace ff::collect {

struct AppOutputCopy {
  Coverage coverage;
  BundleFile file;  // file.rel empty when nothing was copied
};

// Slurm's filename patterns that a path may still carry: %j/%J job id,
// %N/%n node name, %u the job's user name when `user` is given, %% percent
// (https://slurm.schedmd.com/sbatch.html#SECTION_FILENAME-PATTERN). Any other
// escape is kept as written.
std::string expand_output_path(const std::string& path, const std::string& job_id,
                               const std::string& node, const std::string& user = "");

// The collector runs as root on the user's path: the file is copied, as
// app/<file_name>, only when it is a regular file owned by `owner` (the job's
// user), opened without following a final symlink and without opening
// anything else first (common/user_file.h). A symlink, a hard link to
// someone else's file, a FIFO or a device is refused and said so in
// coverage; so is every file when the owner is unknown. At most `max_bytes`
// are read. `file_name` must be a valid app file name
// (incident/bundle_paths.h: app_file_name_for); the coverage names `path`.
AppOutputCopy copy_app_output(const std::string& path, const std::string& file_name,
                              const std::string& node, const std::filesystem::path& bundle_root,
                              std::uint64_t max_bytes, std::optional<uid_t> owner);

// SLURM_JOB_UID as text → uid; nullopt when empty or not a number.
std::optional<uid_t> parse_uid(const std::string& text);

}  // namespace ff::collect
