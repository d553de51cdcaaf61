#include "spank/spank_client.h"

#include "spank/spank_option.h"

namespace firstfault::spank {

// The plugstack arguments are not parsed here: their problems belong in slurmd's log,
// not on every user's terminal.
int ClientInit(spank_t spank, int /*argc*/, char** /*argv*/) {
  return RegisterUserOption(spank);
}

}  // namespace firstfault::spank
