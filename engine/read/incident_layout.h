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

struct IncidentLayout {
  std::vector<SourceFile> files;           // logs to scan, in read order
  std::vector<std::string> node_dirs;      // nodes/<node> directories found
  std::vector<std::string> metrics_files;  // metrics/*.json, sorted (read/metrics_reader.h)
};

// Lists the incident by the rule of read/incident_file.h: a symbolic link
// leading outside the incident, a FIFO, a device or a socket is named in
// `errors` and skipped, never listed, so nothing outside the incident is read.
IncidentLayout list_incident(const IncidentRoot& root, std::vector<ErrorItem>& errors);
// The same, opening the incident directory `dir` first.
IncidentLayout list_incident(const std::filesystem::path& dir, std::vector<ErrorItem>& errors);

}  // namespace ff
