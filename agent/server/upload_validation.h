// The checks of POST /api/v1/bundles that need no credential: the meta part
// and the file list (names, the limits of bundle_limits.h, job.json), as
// BundleReceiver::receive applies them before anything touches the disk.
// Split out so that unit tests and fuzz/fuzz_bundle_upload exercise them
// without munged. receive() runs parse_upload_meta, then the credential
// check (its payload names the meta's job, node and bundle and the digest
// of the meta and files, common/content_digest.h), then check_upload_files.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "agent/server/bundle_receiver.h"

namespace ff::agent {

struct UploadMeta {
  std::string bundle_id, job_id, node, pass;
  int attempt = 0;
};

// "" when the meta part is well formed, else the reason naming the field.
std::string parse_upload_meta(const std::string& text, UploadMeta& meta);

struct UploadCheck {
  int status = 200;             // 400 (bad name, duplicate, job.json) or 413 (a limit) when refused
  std::string error;            // the reply's message when refused
  std::size_t total_bytes = 0;  // the files' contents, summed
  BundleWeight weight;          // bytes and lines (bundle_limits.h)
  std::vector<std::string> fragment_nodes;  // the valid node names of job.json's `nodes`
  std::string fragment_start_time;          // job.json's start_time, "" when none
};

// The limits (all but max_lines_per_job, which needs the store), every file
// name against bundle_rules.h, no name twice, and a
// job.json that is a JSON object whose job_id (if any) is the meta's.
UploadCheck check_upload_files(const UploadMeta& meta, const std::vector<UploadedFile>& files,
                               const BundleLimits& limits);

// parse_upload_meta, then check_upload_files (a bad meta part is a 400).
// `meta` receives the parsed meta part.
UploadCheck validate_upload(const std::string& meta_text, const std::vector<UploadedFile>& files,
                            const BundleLimits& limits, UploadMeta& meta);

}  // namespace ff::agent
