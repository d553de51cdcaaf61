// Step 1 of the pipeline, part 1: which files an incident holds, what kind
// each one is, and the fixed order they are read in (sorted names; within a
// kind, rotated files oldest first: syslog-20261101, syslog.2.gz, syslog.1, syslog).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "engine/read/incident_file.h"
#include "incident/diagnosis.h"

namespace ff {

struct SourceFile {
  std::filesystem::path path;
  std::string rel;   // incident-relative path with '/' separators
  std::string node;  // nodes/<node>/..., else ""
  std::string kind;  // kernel, syslog, fabricmanager, slurmd, app, slurmctld, cluster, other
};

// A PyTorch flight-recorder dump of the incident:
// nodes/<node>/flight_recorder/<global-rank> (docs/spec/incident.md). Binary
// (a pickle): never one of the logs to scan.
struct FlightRecorderFile {
  std::string node;
  int rank = -1;    // the global rank the file is named by
  std::string rel;  // incident-relative path, for IncidentRoot::open_file
};

struct IncidentLayout {
  std::vector<SourceFile> files;           // logs to scan, in read order
  std::vector<std::string> node_dirs;      // nodes/<node> directories found
  std::vector<std::string> metrics_files;  // metrics/*.json, sorted (read/metrics_reader.h)
  std::vector<FlightRecorderFile> flight_recorder_files;  // as list_flight_recorder_files
};

// Lists the incident by the rule of read/incident_file.h: a symbolic link
// leading outside the incident, a FIFO, a device or a socket is named in
// `errors` and skipped, never listed, so nothing outside the incident is read.
IncidentLayout list_incident(const IncidentRoot& root, std::vector<ErrorItem>& errors);
// The same, opening the incident directory `dir` first.
IncidentLayout list_incident(const std::filesystem::path& dir, std::vector<ErrorItem>& errors);

// The flight-recorder dumps of an incident, each (node, global rank, path),
// ordered by node then rank: the files of nodes/<node>/flight_recorder/
// named by a global rank (incident/node_file_kind.h: flight_recorder_rank),
// found by the rule of read/incident_file.h. A name that is not a rank, a
// subdirectory, or an entry refused by that rule is named in `errors` and
// skipped. Open one with root.open_file(file.rel, error) and read it with
// read_flight_recorder (engine/read/flight_recorder.h), bounding the bytes
// read as that reader asks. list_incident fills
// IncidentLayout::flight_recorder_files with the same list.
std::vector<FlightRecorderFile> list_flight_recorder_files(const IncidentRoot& root,
                                                           std::vector<ErrorItem>& errors);

}  // namespace ff
