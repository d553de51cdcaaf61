// What an uploaded bundle may contain (docs/slurm-path.md section 4). Names
// come from the network and become paths on the head node, so they are
// checked against a closed grammar, never sanitised.
#pragma once

#include <string>

#include "incident/bundle_paths.h"

namespace ff::agent {

bool valid_job_id(const std::string& job_id);        // ^[0-9]+(_[0-9]+)?$
bool valid_node_name(const std::string& node);       // ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$
bool valid_bundle_id(const std::string& bundle_id);  // ^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$

// The file names of a bundle: the grammar the collector names its files
// with (incident/bundle_paths.h).
using ff::bundle_path_problem;

}  // namespace ff::agent
