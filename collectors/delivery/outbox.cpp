#include "collectors/delivery/outbox.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <stdexcept>

namespace ff::collect {
namespace fs = std::filesystem;

fs::path Outbox::staging(const BundleMeta& meta) const {
  return dir_ / (".tmp-" + meta.bundle_id);
}

fs::path Outbox::stage(const BundleMeta& meta) const {
  fs::path root = staging(meta) / "files";
  fs::create_directories(root);
  return root;
}

OutboxEntry Outbox::commit(const BundleMeta& meta) const {
  fs::path tmp = staging(meta);
  {
    std::ofstream out(tmp / "meta.json");
    out << to_json(meta).dump() << '\n';
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + (tmp / "meta.json").string());
  }
  fs::path final_dir = dir_ / meta.bundle_id;
  fs::rename(tmp, final_dir);
  return {final_dir, meta};
}

void Outbox::discard(const BundleMeta& meta) const {
  std::error_code ec;
  fs::remove_all(staging(meta), ec);
}

std::optional<OutboxEntry> read_outbox_entry(const fs::path& dir) {
  std::ifstream in(dir / "meta.json");
  if (!in) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  try {
    return OutboxEntry{dir, meta_from_json(j)};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<OutboxEntry> Outbox::entries() const {
  std::vector<OutboxEntry> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // staging
    if (auto entry = read_outbox_entry(it->path())) out.push_back(std::move(*entry));
  }
  std::sort(out.begin(), out.end(), [](const OutboxEntry& a, const OutboxEntry& b) {
    return a.meta.created != b.meta.created ? a.meta.created < b.meta.created
                                            : a.meta.bundle_id < b.meta.bundle_id;
  });
  return out;
}

std::vector<std::string> bundle_files(const fs::path& files_root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(files_root, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    out.push_back(fs::relative(it->path(), files_root, ec).generic_string());
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    if ((a == "job.json") != (b == "job.json")) return a == "job.json";
    return a < b;
  });
  return out;
}

BundleLock::BundleLock(const fs::path& bundle_dir) {
  fd_ = ::open((bundle_dir / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    gone_ = errno == ENOENT;
    return;
  }
  held_ = ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
  // Delivered and removed while we waited for the directory entry?
  if (held_ && !fs::exists(bundle_dir / "meta.json")) {
    held_ = false;
    gone_ = true;
  }
}

BundleLock::~BundleLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace ff::collect
