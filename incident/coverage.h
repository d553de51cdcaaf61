// What a collector reports about one source (incident.md, job.json
// `coverage`): a source it could not read is evidence missing, never
// evidence of health. Every component that reports coverage (the node
// collector, the agent, the Kubernetes, Loki and Prometheus connectors) and
// the engine that reads it use this one entry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "incident/diagnosis.h"
#include "incident/time/time.h"

namespace ff {

enum class CoverageStatus {
  kUnstated,      // no status in the entry (read as not saying anything)
  kOk,            // read whole
  kEmpty,         // read, and nothing was there (or nothing of the window)
  kPartial,       // read in part: some pages, nodes or series missing
  kTruncated,     // read, the oldest lines cut to fit a size limit
  kMissing,       // not there to read
  kError,         // there, but could not be read
  kUnreachable,   // a remote source (API server, Loki, Prometheus) did not answer
  kUnauthorised,  // a remote source refused the credentials
  kUnrecognised,  // a status this version does not know: kept as written
};

// The status's name in job.json ("ok", "unauthorised", ...); "" for
// kUnstated and kUnrecognised (whose text only the entry holds).
std::string_view status_name(CoverageStatus status);
// The status named `name`: kUnstated for "", kUnrecognised for any other text.
CoverageStatus coverage_status_named(std::string_view name);

struct Coverage {
  std::string collector;  // the kind (kernel, syslog, ...) or "<source>:<part>" (loki:kernel)
  std::string node;       // "" for a source of no one node (a query, the API server)
  CoverageStatus status = CoverageStatus::kUnstated;
  // The text of a kUnrecognised status, as read: an unknown status is passed
  // on as it was written, never taken for one this version knows.
  std::string unrecognised_status;
  std::optional<std::uint64_t> lines;  // lines delivered; absent where nothing counts them
  std::string detail;
  // For a live source (the kernel ring buffer, the journal): the span it was
  // read over, absent when not known. Inside it a message absent from the
  // source was not logged there, which is how a copy of a kernel message in
  // syslog or in the job's output is told from the kernel's own.
  MaybeTime covers_from;
  MaybeTime covers_until;

  // The status as job.json writes it (the unrecognised text for kUnrecognised).
  std::string status_text() const;
  void set_status_text(const std::string& text);
  // ok, or empty: the source delivered everything there was. Unstated is not
  // a failure either: an entry that says nothing reports nothing missing.
  bool delivered() const {
    return status == CoverageStatus::kOk || status == CoverageStatus::kEmpty ||
           status == CoverageStatus::kUnstated;
  }
};

// The entry as job.json holds it: collector, status and detail always; node,
// lines, covers_from and covers_until when known.
nlohmann::json to_json(const Coverage& c);

// An entry of job.json's `coverage` (an object). Never throws: a number or
// boolean where text belongs reads as its JSON text, a `lines` that is not a
// count as absent, and a covers_* that is not an RFC 3339 time as absent,
// with an error (source "job.json") saying so.
Coverage coverage_from_json(const nlohmann::json& j, std::vector<ErrorItem>& errors);

}  // namespace ff
