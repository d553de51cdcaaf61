// The names a node bundle may hold: one grammar, part of the incident
// layout, for both sides of the wire. The collector names the
// files it sends with it; the agent checks every name it receives with it
// (names from the network become paths on the head node, so the agent
// checks, never repairs). A name the collector makes can therefore never get
// a bundle refused.
//
//   job.json
//   nodes/<node>/<kind>[<sep><suffix>]   kind: a node file kind (node_file_kind.h:
//                                        kernel, kern, dmesg, syslog, messages, journal,
//                                        fabricmanager, nv-fabricmanager, slurmd,
//                                        slurmstepd, app)
//   nodes/<node>/flight_recorder/<rank> rank: a global rank (node_file_kind.h:
//                                        flight_recorder_rank), the file a PyTorch
//                                        flight-recorder dump
//   app/<name>                           name: valid_app_file_name
// No "..", no absolute path, no empty component, no other directory.
#pragma once

#include <cstddef>
#include <set>
#include <string>

namespace ff {

// The longest app/ file name (NAME_MAX).
constexpr std::size_t kMaxAppFileName = 255;

// An app/ file name: 1 to kMaxAppFileName bytes of ASCII letters, digits,
// space and . _ - + = @ % , ~ ; not starting with '.' or a space (so never
// hidden, "." or ".."). Closed and ASCII-only: the name is a path on the head
// node, a multipart filename on the wire, and text in JSON and on the
// dashboard.
bool valid_app_file_name(const std::string& name);

// "" when `path` may be stored in a bundle of `node`, else why not.
std::string bundle_path_problem(const std::string& path, const std::string& node);

// Is `path` (a bundle or incident path) nodes/<node>/flight_recorder/<rank>?
// Such a file is binary, not lines: no line limit or count applies to it.
bool is_flight_recorder_path(const std::string& path);

// The app/ name for a job output at `output_path` (any bytes a user chose):
// its last component with every byte valid_app_file_name refuses replaced by
// '_' (a run of them by one), leading dots and spaces dropped, cut to the
// length limit; `fallback` ("stdout") when nothing is left. Always valid.
std::string app_file_name_for(const std::string& output_path, const std::string& fallback);

// `name` when it is not in `taken`, else the first of name-2, name-3, ...
// (before the extension: "slurm-7-2.out") that is not; always valid when
// `name` is. Adds the result to `taken`.
std::string unique_app_file_name(const std::string& name, std::set<std::string>& taken);

}  // namespace ff
