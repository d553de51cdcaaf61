// Text that leaves firstfault for Slurm: the diagnosis `summary`, which the agent
// writes into the job's Comment (scontrol update, sacctmgr modify), and a node's
// drain Reason (scontrol update). One rule set for all of them, applied where the
// text is made (the engine's summary) and again where it leaves (the agent), so
// that text from anywhere else gets the same treatment:
//
//   1. Every ASCII control character (0x00-0x1F: newline, carriage return, tab,
//      escape, ...) and DEL (0x7F) becomes a space: one line, no terminal escape
//      sequences in `scontrol show job` or `sinfo -R`, words stay apart.
//   2. Every character outside ASCII becomes one '?': a whole UTF-8 sequence is
//      one '?', and so is each byte that is not part of valid UTF-8. The result
//      is plain ASCII, so slurmdbd's database and any terminal take it as is.
//   3. The quotes " ' `, '$' and '\' are removed. The text goes to Slurm as one
//      argument of an exec'd program, never through a shell; but operators copy
//      Comments and Reasons into shells and scripts, where these would quote,
//      expand or escape.
//   4. '=' is kept: "Comment=a=b" is one value to scontrol, and a text that reads
//      "JobId=1" is never an argument of its own.
//   5. Runs of spaces become one space; leading and trailing spaces are removed.
//   6. At most `max_bytes` bytes: a longer text is cut and ends with "...". All
//      of it is ASCII by then, so the cut never splits a character.
//
// The result obeys the rules again: applying them twice changes nothing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ff {

// The longest Comment firstfault writes; the diagnosis summary is made to fit.
constexpr std::size_t kMaxCommentBytes = 1000;

std::string slurm_safe_text(std::string_view text, std::size_t max_bytes);

}  // namespace ff
