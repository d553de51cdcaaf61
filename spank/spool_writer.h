// Writes files under the node spool (docs/slurm-path.md section 1): each file goes to a
// temporary name first and is renamed, so the collector never reads half a record.
// Directories are created as needed (0755), files are 0644 whatever the umask.
// A spool that cannot be written (missing parent, read-only file system) is reported
// once per writer and then only counted: a broken spool must not flood slurmd's log
// once per task, nor fail a job.
#ifndef FIRSTFAULT_SPANK_SPOOL_WRITER_H_
#define FIRSTFAULT_SPANK_SPOOL_WRITER_H_

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

namespace firstfault::spank {

class SpoolWriter {
 public:
  using ErrorSink = std::function<void(const std::string& message)>;

  SpoolWriter(std::string root, ErrorSink report_first_error);

  // Writes root/relative_path atomically; false on failure (reported at most once).
  bool WriteFile(std::string_view relative_path, std::string_view content);

  const std::string& root() const { return root_; }
  int failures() const { return failures_.load(); }

 private:
  void Fail(const std::string& message);

  std::string root_;
  ErrorSink report_first_error_;
  std::atomic<int> failures_{0};
};

// mkdir -p with mode 0755 for the directories it creates; "" on success, else why not.
std::string MakeDirectories(const std::string& path);

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_SPOOL_WRITER_H_
