// What an uploaded bundle may contain (docs/slurm-path.md section 4). Names
// come from the network and become paths on the head node, so they are
// checked against a closed grammar, never sanitised.
#pragma once

#include <string>

namespace ff::agent {

bool valid_job_id(const std::string& job_id);        // ^[0-9]+(_[0-9]+)?$
bool valid_node_name(const std::string& node);       // ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$
bool valid_bundle_id(const std::string& bundle_id);  // ^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$

// "" when `path` may be stored in a bundle of `node`, else why not. Allowed:
//   job.json
//   nodes/<node>/<kind>[<sep><suffix>]   kind: a node file kind of the engine
//                                        (kernel, kern, dmesg, syslog, messages, journal,
//                                        fabricmanager, nv-fabricmanager, slurmd,
//                                        slurmstepd, app)
//   app/<name>                           name: one component, not hidden, no control
//                                        characters, at most 255 bytes
// No "..", no absolute path, no empty component, no other directory.
std::string bundle_path_problem(const std::string& path, const std::string& node);

}  // namespace ff::agent
