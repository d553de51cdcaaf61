// firstfault-epilog, the Slurm `Epilog=` program (docs/slurm-path.md §2).
//
// slurmd runs it on every node after every job, waits for EOF on its stdout
// and drains the node when it exits non-zero. So it does almost nothing: it
// writes a hand-off record into the spool, starts `firstfault-collect epilog`
// fully detached (double fork, setsid, stdio on /dev/null, no inherited fds)
// and exits 0 — always, whatever failed, within milliseconds. No curl, no
// munge, no engine: nothing here can hang or throw out of main.
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/launch/detached_launch.h"
#include "common/node_name_pattern.h"

namespace {

constexpr const char* kDefaultConfig = "/etc/firstfault/node.yaml";
constexpr const char* kDefaultSpool = "/var/spool/firstfault";
constexpr const char* kCollectorName = "firstfault-collect";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// `key: value` at the top level of the YAML config; quotes and a trailing
// comment removed. Deliberately not a YAML parser: it cannot fail, and these
// two keys are plain scalars.
std::string config_value(const std::string& config_text, const std::string& key) {
  std::size_t pos = 0;
  while (pos < config_text.size()) {
    std::size_t eol = config_text.find('\n', pos);
    if (eol == std::string::npos) eol = config_text.size();
    std::string line = config_text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.compare(0, key.size() + 1, key + ":") != 0) continue;
    std::string value = line.substr(key.size() + 1);
    std::size_t hash = value.find(" #");
    if (hash != std::string::npos) value.resize(hash);
    std::size_t b = value.find_first_not_of(" \t");
    std::size_t e = value.find_last_not_of(" \t\r");
    if (b == std::string::npos) return "";
    value = value.substr(b, e - b + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    return value;
  }
  return "";
}

std::string read_small_file(const std::string& path) {
  std::string text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return text;
  char buf[4096];
  ssize_t n;
  while (text.size() < (1 << 20) && (n = ::read(fd, buf, sizeof buf)) > 0)
    text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

bool make_dirs(const std::string& path) {
  std::string partial;
  for (std::size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || (path[i] == '/' && i > 0)) {
      partial = path.substr(0, i);
      // Root's only, as the plugin makes it: the spool holds root-only logs.
      if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) return false;
    }
  }
  return true;
}

// pending/<job>.json, written to a temporary name and renamed.
void write_pending(const std::string& spool,
                   const std::vector<std::pair<std::string, std::string>>& fields,
                   const std::string& job_id) {
  std::string dir = spool + "/pending";
  if (!make_dirs(dir)) return;
  std::string body = "{";
  for (std::size_t i = 0; i < fields.size(); ++i)
    body += (i ? ", " : "") + json_string(fields[i].first) + ": " + json_string(fields[i].second);
  body += "}\n";
  std::string final_path = dir + "/" + job_id + ".json";
  std::string tmp = dir + "/." + job_id + ".json.tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  bool ok = ::write(fd, body.data(), body.size()) == static_cast<ssize_t>(body.size());
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), final_path.c_str()) != 0) ::unlink(tmp.c_str());
}

std::string own_directory() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  std::string p(path, static_cast<std::size_t>(n));
  return p.substr(0, p.rfind('/'));
}

// Double fork: the grandchild is re-parented to init and is in its own
// session, so slurmd neither waits for it nor kills it with the Epilog's
// process group. Nothing to do when it cannot start: the Epilog exits 0 anyway.
void start_detached(const std::vector<std::string>& args) {
  std::vector<std::string> environment = ff::current_environment();
  // No PATH in the Epilog's environment: the collector gets a sane one.
  bool has_path = false;
  for (const std::string& entry : environment) has_path |= entry.rfind("PATH=", 0) == 0;
  if (!has_path) environment.push_back("PATH=/usr/sbin:/usr/bin:/sbin:/bin");
  ff::launch_detached({.program = {},
                       .argv = args,
                       .environment = std::move(environment),
                       .umask = 077,  // the collector's bundles hold root-only logs
                       .working_directory = "/"});
}

void run(int argc, char** argv) {
  std::string config_path = kDefaultConfig;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--config") == 0) config_path = argv[i + 1];

  std::string job_id = env("SLURM_JOB_ID");
  std::string node = env("SLURMD_NODENAME");
  if (job_id.empty() || node.empty()) return;  // not run by slurmd: nothing to hand off
  // A job id becomes a file name: digits (and '_' for arrays) only.
  for (char c : job_id)
    if (!(c >= '0' && c <= '9') && c != '_') return;

  // The user opted the job out (`--firstfault=off`): slurmd hands the
  // option of sbatch/salloc to the Epilog under this name.
  if (env("SPANK__SLURM_SPANK_OPTION_firstfault_firstfault") == "off") return;

  std::string config_text = read_small_file(config_path);
  std::string spool = config_value(config_text, "spool");
  spool = ff::expand_node_name(spool.empty() ? kDefaultSpool : spool, node);
  std::string collector = config_value(config_text, "collector");
  if (collector.empty()) collector = own_directory() + "/" + kCollectorName;

  std::string nodelist = env("SLURM_NODELIST");
  std::string exit_code = env("SLURM_JOB_EXIT_CODE2");
  std::string derived_ec = env("SLURM_JOB_DERIVED_EC");
  std::string restart_count = env("SLURM_JOB_RESTART_COUNT");
  std::string out = env("SLURM_JOB_STDOUT");
  std::string err = env("SLURM_JOB_STDERR");
  // The collector runs as root and copies the job's output only when the
  // job's user owns it: a symlink from slurm-<id>.out to a root-only file
  // must not carry that file to the agent.
  std::string uid = env("SLURM_JOB_UID");

  write_pending(spool,
                {{"job_id", job_id},
                 {"node", node},
                 {"nodelist", nodelist},
                 {"exit_code", exit_code},
                 {"derived_ec", derived_ec},
                 {"restart_count", restart_count},
                 {"stdout", out},
                 {"stderr", err},
                 {"uid", uid}},
                job_id);

  std::vector<std::string> args = {collector, "epilog", "--job",    job_id,
                                   "--node",  node,     "--config", config_path};
  auto add = [&](const char* option, const std::string& value) {
    if (value.empty()) return;
    args.push_back(option);
    args.push_back(value);
  };
  add("--nodelist", nodelist);
  add("--exit-code", exit_code);
  add("--derived-ec", derived_ec);
  add("--attempt", restart_count);
  add("--stdout", out);
  add("--stderr", err);
  add("--uid", uid);
  start_detached(args);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    run(argc, argv);
  } catch (...) {
    // Whatever went wrong, the node must not drain because of us.
  }
  return 0;
}
