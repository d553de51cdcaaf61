#include "spank/spank_option.h"

#include "spank/plugin_log.h"
#include "spank/user_option.h"

namespace firstfault::spank {
namespace {

bool opted_out = false;

// struct spank_option has char* fields; string literals would be const.
char option_name[] = "firstfault";
char option_arginfo[] = "on|off";
char option_usage[] =
    "firstfault failure diagnosis for this job: off records nothing and collects nothing "
    "(default on)";

int OnUserOption(int /*val*/, const char* optarg, int remote) {
  try {
    UserChoice choice = ParseUserChoice(optarg == nullptr ? "" : optarg);
    if (choice == UserChoice::kInvalid) {
      if (!remote) {
        // srun/sbatch then print "Invalid --firstfault argument" and stop: a typo
        // should not silently keep diagnosis on.
        slurm_error("firstfault: --firstfault takes on or off, not '%s'", optarg);
        return -1;
      }
      LogError(std::string("ignoring --firstfault=") + optarg);
      return 0;
    }
    opted_out = choice == UserChoice::kOff;
    return 0;
  } catch (...) {
    return 0;
  }
}

struct spank_option user_option = {option_name, option_arginfo, option_usage, 1, 0, OnUserOption};

}  // namespace

int RegisterUserOption(spank_t spank) {
  opted_out = false;  // a plugin kept loaded between jobs starts from the default
  spank_err_t error = spank_option_register(spank, &user_option);
  if (error != ESPANK_SUCCESS) {
    LogError(std::string("cannot register --firstfault: ") + spank_strerror(error));
  }
  return 0;
}

bool UserOptedOut() {
  return opted_out;
}

}  // namespace firstfault::spank
