// The outbox, <spool>/outbox/: bundles waiting for delivery, one directory
// each (<bundle_id>/meta.json + files/), on disk so that nothing is lost
// across a crash or a reboot. A bundle appears there whole or not at all: it
// is staged under a hidden name and renamed into place.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "collectors/bundle/bundle_meta.h"

namespace ff::collect {

struct OutboxEntry {
  std::filesystem::path dir;
  BundleMeta meta;
  std::filesystem::path files() const { return dir / "files"; }
};

class Outbox {
 public:
  explicit Outbox(std::filesystem::path dir) : dir_(std::move(dir)) {}
  const std::filesystem::path& dir() const { return dir_; }

  // A fresh staging directory; returns the root the bundle's files go under.
  std::filesystem::path stage(const BundleMeta& meta) const;
  // Writes meta.json and moves the staged bundle into place.
  OutboxEntry commit(const BundleMeta& meta) const;
  void discard(const BundleMeta& meta) const;

  // Committed bundles, oldest bundle_id first (ids end in a timestamp).
  std::vector<OutboxEntry> entries() const;

 private:
  std::filesystem::path staging(const BundleMeta& meta) const;
  std::filesystem::path dir_;
};

std::optional<OutboxEntry> read_outbox_entry(const std::filesystem::path& dir);

// The files of a bundle as paths relative to its root, job.json first.
std::vector<std::string> bundle_files(const std::filesystem::path& files_root);

// An exclusive, non-blocking flock on <bundle>/.lock: two collectors never
// send one bundle at once. Released on destruction.
class BundleLock {
 public:
  explicit BundleLock(const std::filesystem::path& bundle_dir);
  ~BundleLock();
  BundleLock(const BundleLock&) = delete;
  BundleLock& operator=(const BundleLock&) = delete;
  bool held() const { return held_; }
  bool gone() const { return gone_; }  // the bundle was removed (delivered by another)

 private:
  int fd_ = -1;
  bool held_ = false;
  bool gone_ = false;
};

}  // namespace ff::collect
