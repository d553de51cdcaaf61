// A stand-in for a program the code under test runs (scontrol, sacctmgr, a
// collector): an executable sh script `<dir>/<name>` that records each
// call's argument vector, exactly (NUL-separated, no shell re-parsing), and
// answers with fixed output and exit status. Tests hand its path() to the
// code in place of the real program and read calls() afterwards.
//
// Every call is recorded, in the order the calls began, also when several
// run at once: each takes the next free number by mkdir, which is atomic.
// Answer texts are kept in files next to the script and copied out with
// cat, so output of any bytes passes unchanged.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/files.h"

namespace ff::test_support {

// What a FakeCommand prints and exits with.
struct CommandAnswer {
  std::string out{};  // standard output
  std::string err{};  // standard error
  int exit_code = 0;
  int seconds_after = 0;  // sleeps this long after recording the call, before answering
};

// One call a FakeCommand recorded.
struct RecordedCall {
  std::vector<std::string> args;  // without argv[0]
  std::string input;              // standard input, when record_input() was asked for
};

class FakeCommand {
 public:
  using Answer = CommandAnswer;
  using Call = RecordedCall;

  // `otherwise`: the answer to calls no answer_when() matches.
  FakeCommand(std::filesystem::path dir, std::string name, Answer otherwise = {})
      : dir_(std::move(dir)), name_(std::move(name)), otherwise_(std::move(otherwise)) {
    std::filesystem::create_directories(calls_dir());
    write_script();
  }

  // Calls whose first arguments are `leading` answer `answer`; the first
  // matching rule wins, in the order they were added.
  FakeCommand& answer_when(std::vector<std::string> leading, Answer answer) {
    rules_.push_back({std::move(leading), std::move(answer)});
    write_script();
    return *this;
  }
  FakeCommand& answer_otherwise(Answer answer) {
    otherwise_ = std::move(answer);
    write_script();
    return *this;
  }
  // Records each call's standard input too. Off by default: the script
  // then reads until end of file, which a caller that leaves its own
  // standard input open would never send.
  FakeCommand& record_input() {
    record_input_ = true;
    write_script();
    return *this;
  }

  const std::filesystem::path& path() const { return path_; }
  std::string command() const { return path_.string(); }

  // Every call so far, oldest first.
  std::vector<Call> calls() const {
    std::vector<Call> out;
    for (int i = 0;; ++i) {
      std::filesystem::path call = calls_dir() / std::to_string(i);
      if (!std::filesystem::exists(call / "args")) break;
      Call c;
      c.args = split_at_nul(read_file(call / "args"));
      if (record_input_) c.input = read_file_if_present(call / "input");
      out.push_back(std::move(c));
    }
    return out;
  }
  // The argument vectors of every call, oldest first.
  std::vector<std::vector<std::string>> call_args() const {
    std::vector<std::vector<std::string>> out;
    for (auto& call : calls()) out.push_back(std::move(call.args));
    return out;
  }
  // The arguments of the last call whose first arguments are `leading`;
  // empty when there was none.
  std::vector<std::string> last_call_starting(const std::vector<std::string>& leading) const {
    std::vector<std::string> last;
    for (auto& args : call_args())
      if (starts_with(args, leading)) last = std::move(args);
    return last;
  }
  bool called() const { return std::filesystem::exists(calls_dir() / "0" / "args"); }

  // 'text' for sh, whatever `text` holds.
  static std::string shell_quote(const std::string& text) {
    std::string quoted = "'";
    for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  }

 private:
  struct Rule {
    std::vector<std::string> leading;
    Answer answer;
  };

  std::filesystem::path calls_dir() const { return dir_ / (name_ + ".calls"); }
  std::filesystem::path answers_dir() const { return dir_ / (name_ + ".answers"); }

  static std::vector<std::string> split_at_nul(const std::string& text) {
    std::vector<std::string> out;
    std::string arg;
    for (char c : text) {
      if (c == '\0') {
        out.push_back(std::move(arg));
        arg.clear();
      } else {
        arg += c;
      }
    }
    return out;
  }
  static bool starts_with(const std::vector<std::string>& args,
                          const std::vector<std::string>& leading) {
    if (args.size() < leading.size()) return false;
    for (std::size_t i = 0; i < leading.size(); ++i)
      if (args[i] != leading[i]) return false;
    return true;
  }

  // The branch that picks answer number `index`.
  std::string choose(std::size_t index, const Answer& answer) const {
    write_file(answers_dir() / (std::to_string(index) + ".out"), answer.out);
    write_file(answers_dir() / (std::to_string(index) + ".err"), answer.err);
    return "answer=" + std::to_string(index) + "; code=" + std::to_string(answer.exit_code) +
           "; wait=" + std::to_string(answer.seconds_after);
  }

  void write_script() {
    path_ = dir_ / name_;
    std::string script = "#!/bin/sh\n";
    for (std::size_t r = 0; r < rules_.size(); ++r) {
      const auto& leading = rules_[r].leading;
      std::string test = "[ $# -ge " + std::to_string(leading.size()) + " ]";
      for (std::size_t i = 0; i < leading.size(); ++i)
        test += " && [ \"$" + std::to_string(i + 1) + "\" = " + shell_quote(leading[i]) + " ]";
      script += (r == 0 ? "if " : "elif ") + test + "; then " + choose(r, rules_[r].answer) + "\n";
    }
    std::string fallback = choose(rules_.size(), otherwise_);
    script += rules_.empty() ? fallback + "\n" : "else " + fallback + "\nfi\n";
    script += "calls=" + shell_quote(calls_dir().string()) +
              "\n"
              "n=0\n"
              "while ! mkdir \"$calls/$n\" 2>/dev/null; do n=$((n + 1)); done\n";
    if (record_input_) script += "cat > \"$calls/$n/input\"\n";
    // The args file appears whole (rename), so a reader never sees half a call.
    script +=
        "if [ $# -gt 0 ]; then printf '%s\\0' \"$@\"; fi > \"$calls/$n/args.tmp\"\n"
        "mv \"$calls/$n/args.tmp\" \"$calls/$n/args\"\n"
        "if [ \"$wait\" -gt 0 ]; then sleep \"$wait\"; fi\n"
        "answers=" +
        shell_quote(answers_dir().string()) +
        "\n"
        "cat \"$answers/$answer.out\"\n"
        "cat \"$answers/$answer.err\" >&2\n"
        "exit \"$code\"\n";
    // Replaced whole (rename), so a call that starts while the answers are
    // still being set up runs the old script or the new one, never half.
    std::filesystem::path next = path_;
    next += ".next";
    write_executable(next, script);
    std::filesystem::rename(next, path_);
  }

  std::filesystem::path dir_;
  std::string name_;
  Answer otherwise_;
  std::vector<Rule> rules_;
  bool record_input_ = false;
  std::filesystem::path path_;
};

}  // namespace ff::test_support
