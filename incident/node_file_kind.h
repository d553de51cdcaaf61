// What a file under nodes/<node>/ of an incident holds, read from its name:
// part of the incident's layout that both the node collector (which names
// what it sends) and the engine (which reads it) follow.
#pragma once

#include <string>

namespace ff {

// The kind of a file under nodes/<node>/ from its name: kernel, syslog,
// fabricmanager, slurmd or app; "other" for a name the engine does not read
// ("syslog.1.gz" → syslog, "nv-fabricmanager.log" → fabricmanager,
// "apport.log" → other).
std::string node_file_kind(const std::string& filename);

}  // namespace ff
