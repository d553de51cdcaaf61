// What a file under nodes/<node>/ of an incident holds, read from its name:
// part of the incident's layout that both the node collector (which names
// what it sends) and the engine (which reads it) follow.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ff {

// The kind of a file under nodes/<node>/ from its name: kernel, syslog,
// fabricmanager, slurmd or app; "other" for a name the engine does not read
// ("syslog.1.gz" → syslog, "nv-fabricmanager.log" → fabricmanager,
// "apport.log" → other). "flight_recorder" for the directory of that name.
std::string node_file_kind(const std::string& filename);

// nodes/<node>/flight_recorder/<global-rank>: one PyTorch flight-recorder
// dump per rank, the bytes PyTorch wrote (a pickle), never read as log text.
// The kind node_file_kind gives this directory's name.
constexpr std::string_view kFlightRecorderDir = "flight_recorder";

// The highest global rank a dump may be named by: far above any job's
// size, and small enough that a name is never a number an int cannot hold.
constexpr int kMaxFlightRecorderRank = 9'999'999;

// The global rank a file of flight_recorder/ is named by: decimal digits, no
// leading zero ("0", "17"; not "017", "+1", "1.pkl"), at most
// kMaxFlightRecorderRank. nullopt for any other name: the collector names by
// this grammar, the agent refuses what it does not accept, the engine skips it.
std::optional<int> flight_recorder_rank(std::string_view name);

}  // namespace ff
