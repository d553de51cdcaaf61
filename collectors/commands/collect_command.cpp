#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "collectors/commands/commands.h"
#include "collectors/delivery/bundle_delivery.h"
#include "collectors/sources/app_output.h"
#include "collectors/spool/pending_record.h"
#include "collectors/spool/spool_cleaner.h"

namespace ff::collect {
namespace {

// Holds pending/<job>.json while its bundle is built, so that a flush at the
// same moment does not build it twice.
class PendingClaim {
 public:
  PendingClaim(const std::filesystem::path& path, bool wait) : path_(path) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    held_ = ::flock(fd_, wait ? LOCK_EX : LOCK_EX | LOCK_NB) == 0 &&
            std::filesystem::exists(path);  // not finished by the previous holder
  }
  ~PendingClaim() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool exists() const { return fd_ >= 0; }
  bool held() const { return held_; }
  void done() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace

void finish_invocation(const NodeConfig& config) {
  Outbox outbox(SpoolLayout{config.spool}.outbox());
  for (const auto& entry : outbox.entries()) deliver_once(config, entry, config.request_timeout_s);
  clean_spool(SpoolLayout{config.spool}, config.spool_keep_days);
}

int run_collect(const NodeConfig& config, const CollectRequest& request) {
  SpoolLayout spool{config.spool};
  // Only the Epilog's collector owns the hand-off record; a step collector
  // must not wait for it.
  bool epilog = request.pass == "epilog";
  PendingClaim claim(epilog ? spool.pending_record(request.job_id) : std::filesystem::path(), true);
  if (epilog && claim.exists() && !claim.held()) {
    spdlog::info("job {}: the Epilog bundle was already built by another collector",
                 request.job_id);
    finish_invocation(config);
    return kExitDelivered;
  }
  BuiltBundle built = build_bundle(config, request);
  if (epilog) claim.done();
  spdlog::info("job {}: {} bundle {} built ({} bytes of logs read{})", request.job_id, request.pass,
               built.entry.meta.bundle_id, built.bytes_read,
               built.logs_skipped ? ", job succeeded: job.json only" : "");
  auto kept = deliver_with_retry(config, {built.entry});
  finish_invocation(config);
  return kept.empty() ? kExitDelivered : kExitKept;
}

int run_flush(const NodeConfig& config, bool once) {
  SpoolLayout spool{config.spool};
  // Epilog hand-offs whose collector never finished (a reboot came first).
  // Young ones belong to a collector that is still starting.
  auto young = std::filesystem::file_time_type::clock::now() - std::chrono::seconds(60);
  std::error_code ec;
  for (std::filesystem::directory_iterator it(spool.pending(), ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() != ".json" || it->last_write_time(ec) > young) continue;
    PendingClaim claim(it->path(), false);
    if (!claim.held()) continue;
    auto record = read_pending_record(it->path());
    if (!record) {
      spdlog::warn("{}: not a pending record; removed", it->path().string());
      claim.done();
      continue;
    }
    CollectRequest request;
    request.pass = "epilog";
    request.job_id = record->job_id;
    request.node = record->node;
    request.nodelist = record->nodelist;
    if (!record->exit_code.empty()) request.exit_code = record->exit_code;
    try {
      if (!record->derived_ec.empty()) request.derived_ec = std::stoi(record->derived_ec);
      if (!record->restart_count.empty()) request.attempt = std::stoi(record->restart_count);
    } catch (const std::exception&) {
    }
    request.outputs = {record->stdout_path, record->stderr_path};
    request.owner_uid = parse_uid(record->uid);
    try {
      BuiltBundle built = build_bundle(config, request);
      spdlog::info("job {}: Epilog bundle {} built from a pending record", request.job_id,
                   built.entry.meta.bundle_id);
      claim.done();
    } catch (const std::exception& e) {
      spdlog::error("job {}: pending record not collected: {}", request.job_id, e.what());
    }
  }

  Outbox outbox(spool.outbox());
  auto entries = outbox.entries();
  std::size_t kept = 0;
  if (once) {
    for (const auto& entry : entries)
      kept += deliver_once(config, entry, config.request_timeout_s) == DeliveryOutcome::kept;
  } else {
    kept = deliver_with_retry(config, entries).size();
  }
  clean_spool(spool, config.spool_keep_days);
  spdlog::info("flush: {} bundle(s) in the outbox, {} kept", entries.size(), kept);
  return kept == 0 ? kExitDelivered : kExitKept;
}

}  // namespace ff::collect
