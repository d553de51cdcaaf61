// slurmctld's own account of one job attempt: the lines of its log inside
// the attempt's window that name the job or one of its nodes, for the
// incident's `cluster/slurmctld.log` (docs/spec/incident.md).
//
// The log is searched, not scanned: the window's start is found by binary
// search on the line time (collectors/window/window_reader.h), so a
// multi-GB log costs a few dozen small reads plus the window. Times are read
// in slurmctld's LogTimeFormat iso8601_ms (its default,
// "[2026-12-02T15:40:01.123] ") or iso8601 ("[2026-12-02T15:40:01] ");
// rfc5424 forms are read with their offset ignored (the line is taken in
// `timezone`). A log in another format (clock, short) has no readable time:
// nothing is returned and the status is kError, never the whole file.
//
// Files read, oldest first: `log_path.1` (plain, searched) or else
// `log_path.1.gz` (streamed, skipped when last written before the window),
// then `log_path`. Only the newest rotation is looked at: a failure the agent
// is asked about is recent. None is opened through a symbolic link, and
// only regular files are read (the agent runs as root).
//
// Lines carrying text a user chose are dropped, never passed to the engine
// (see kUserTextMarkers in the .cpp and docs/spec/incident.md): a Comment
// echoed by `_update_job: setting comment to ...` must not become evidence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "incident/coverage.h"
#include "incident/time/time.h"

namespace ff::agent {

struct SlurmctldExcerptRequest {
  std::string log_path;  // SlurmctldLogFile, e.g. /var/log/slurm/slurmctld.log
  TimeUs from = 0;       // the window, inclusive at both ends
  TimeUs to = 0;
  // The job as Slurm names it: "12", an array task "12_3", a het job
  // component "12+1". For an array task or het component, its own (raw)
  // job id as well ("15"): slurmctld prints "JobId=12_3(15)",
  // "JobId=12+1(13)" and, in some messages, "JobId=15". A plain job_id
  // also matches where it is such a task's own id, so job.json's job_id
  // (SLURM_JOB_ID, "15") alone finds "JobId=12_3(15)" too.
  std::string job_id;
  std::string raw_job_id;          // "" unless an array task or het component
  std::vector<std::string> nodes;  // node names or hostlists ("n[1-3]"), expanded here
  std::string timezone;            // IANA zone slurmctld logs in; "" = UTC
};

struct SlurmctldExcerptLimits {
  std::size_t max_bytes = 4u << 20;  // of all lines kept; the first lines are kept
  std::size_t max_line = 4096;       // a longer line is cut to this many bytes
};

struct SlurmctldExcerpt {
  // kOk: lines found; kEmpty: read, nothing of the window names the job;
  // kTruncated: the byte cap was reached (the later lines are missing);
  // kMissing: no log at log_path; kError: not readable (detail says why).
  CoverageStatus status = CoverageStatus::kMissing;
  std::string detail;                   // for coverage: files read, or the error
  std::vector<std::string> lines;       // without '\n', in file order
  std::uint64_t user_text_dropped = 0;  // lines naming the job dropped as user text
  std::uint64_t lines_cut = 0;          // lines cut to max_line
  std::uint64_t bytes_read = 0;         // from disk, all files (the search's cost)
};

// Never throws for a bad file or request: the status says what happened.
SlurmctldExcerpt excerpt_slurmctld_log(const SlurmctldExcerptRequest& request,
                                       const SlurmctldExcerptLimits& limits = {});

}  // namespace ff::agent
