#include "collectors/delivery/bundle_delivery.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <thread>
#include <utility>

#include "common/content_digest.h"
#include "common/munge_credential.h"

namespace ff::collect {
namespace fs = std::filesystem;
namespace {

TimeUs now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void remove_delivered(const OutboxEntry& entry) {
  // Renamed first, so no other collector ever finds half a bundle.
  fs::path sent = entry.dir.parent_path() / (".sent-" + entry.meta.bundle_id);
  std::error_code ec;
  fs::rename(entry.dir, sent, ec);
  fs::remove_all(ec ? entry.dir : sent, ec);
}

// The agent's answer is about the bundle itself, not about now.
bool refused_for_good(int status) {
  return status == 400 || status == 413;
}

void move_to_rejected(const OutboxEntry& entry, const http::Reply& reply) {
  fs::path rejected = entry.dir.parent_path().parent_path() / "rejected";
  std::error_code ec;
  fs::create_directories(rejected, ec);
  fs::path to = rejected / entry.meta.bundle_id;
  fs::rename(entry.dir, to, ec);
  if (ec) {
    spdlog::error("bundle {}: cannot move to {}: {}", entry.meta.bundle_id, to.string(),
                  ec.message());
    return;
  }
  std::ofstream(to / "rejected.txt") << reply.describe() << '\n';
}

}  // namespace

std::string upload_digest(const std::string& meta_text,
                          const std::vector<http::MultipartFile>& files) {
  std::vector<const http::MultipartFile*> sorted;
  for (const auto& f : files) sorted.push_back(&f);
  std::sort(sorted.begin(), sorted.end(),
            [](const http::MultipartFile* a, const http::MultipartFile* b) {
              return a->filename < b->filename;
            });
  content_digest::BundleDigest digest(meta_text);
  std::vector<char> chunk(1 << 16);
  for (const http::MultipartFile* f : sorted) {
    std::ifstream in(f->path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + f->path.string());
    digest.begin_file(f->filename, fs::file_size(f->path));
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      digest.update(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())));
    }
  }
  return digest.hex();  // throws when a file's size changed while it was read
}

const char* outcome_name(DeliveryOutcome outcome) {
  switch (outcome) {
    case DeliveryOutcome::delivered:
      return "delivered";
    case DeliveryOutcome::kept:
      return "kept";
    case DeliveryOutcome::busy:
      return "busy";
    case DeliveryOutcome::gone:
      return "gone";
    case DeliveryOutcome::rejected:
      return "rejected";
  }
  return "kept";
}

http::RequestOptions agent_request(double connect_timeout_s, double total_timeout_s,
                                   std::vector<std::string> headers) {
  http::RequestOptions options;
  options.connect_timeout_s = connect_timeout_s;
  options.total_timeout_s = total_timeout_s;
  options.max_body_bytes = 1 << 20;
  options.truncate_long_reply = true;
  options.headers = std::move(headers);
  return options;
}

DeliveryOutcome deliver_once(const NodeConfig& config, const OutboxEntry& entry, double total_s,
                             http::Reply* reply_out) {
  BundleLock lock(entry.dir);
  if (lock.gone()) return DeliveryOutcome::gone;
  if (!lock.held()) return DeliveryOutcome::busy;

  const BundleMeta& meta = entry.meta;
  std::string meta_text = wire_meta(meta).dump();
  std::vector<http::MultipartFile> files;
  for (const auto& rel : bundle_files(entry.files())) files.push_back({rel, entry.files() / rel});
  std::string credential;
  try {
    // A fresh credential per attempt: munge refuses a replayed one. Its
    // payload names the digest of exactly what is sent.
    credential =
        munge_credential::encode("firstfault-bundle " + meta.job_id + " " + meta.node + " " +
                                     meta.bundle_id + " " + upload_digest(meta_text, files),
                                 config.munge_socket);
  } catch (const std::exception& e) {
    spdlog::warn("bundle {}: {}", meta.bundle_id, e.what());
    if (reply_out) *reply_out = {0, "", e.what()};
    return DeliveryOutcome::kept;
  }
  http::Reply reply = http::post_multipart(
      config.agent_url + "/api/v1/bundles", {{"meta", meta_text}}, "file", files,
      agent_request(config.connect_timeout_s, total_s, {"X-Firstfault-Munge: " + credential}));
  if (reply_out) *reply_out = reply;
  if (reply.ok()) {
    spdlog::info("bundle {}: delivered ({} files, HTTP {})", meta.bundle_id, files.size(),
                 reply.status);
    remove_delivered(entry);
    return DeliveryOutcome::delivered;
  }
  if (refused_for_good(reply.status)) {
    spdlog::error("bundle {}: refused by the agent, not sent again: {}", meta.bundle_id,
                  reply.describe());
    move_to_rejected(entry, reply);
    return DeliveryOutcome::rejected;
  }
  spdlog::warn("bundle {}: not delivered: {}", meta.bundle_id, reply.describe());
  return DeliveryOutcome::kept;
}

std::vector<OutboxEntry> deliver_with_retry(const NodeConfig& config,
                                            std::vector<OutboxEntry> entries,
                                            const SleepFn& sleep) {
  SleepFn pause =
      sleep ? sleep : [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  std::vector<OutboxEntry> gave_up;
  double delay_s = std::max(config.retry.initial_s, 0.01);
  auto started = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<OutboxEntry> again;
    for (auto& entry : entries) {
      DeliveryOutcome outcome = deliver_once(config, entry, config.request_timeout_s);
      if (outcome == DeliveryOutcome::delivered || outcome == DeliveryOutcome::gone ||
          outcome == DeliveryOutcome::rejected)
        continue;
      // The bundle's age, or this loop's own duration when the wall clock
      // went backwards since the bundle was made.
      double age_s = std::max(
          static_cast<double>(now_us() - entry.meta.created) / 1e6,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      if (age_s + delay_s > config.retry.give_up_after_s) {
        spdlog::warn("bundle {}: giving up after {:.0f} s; it stays in the outbox",
                     entry.meta.bundle_id, age_s);
        gave_up.push_back(std::move(entry));
      } else {
        again.push_back(std::move(entry));
      }
    }
    if (again.empty()) break;
    entries = std::move(again);
    pause(std::chrono::milliseconds(static_cast<long long>(delay_s * 1000)));
    delay_s = std::min(delay_s * 2, std::max(config.retry.max_s, config.retry.initial_s));
  }
  return gave_up;
}

}  // namespace ff::collect
