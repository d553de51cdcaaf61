// Who may talk to the agent: a munge credential in `X-Firstfault-Munge`
// whose uid is root, SlurmUser or in `allowed_uids` (writes; also
// `read_uids` for reads), and whose payload names exactly this request
// (docs/slurm-path.md section 4). munged refuses a credential decoded
// before (replay) or past its time to live (expired), so each credential is
// decoded once: writes authenticate (decode, uid) before their body is read
// and bind the payload to the body afterwards.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <set>
#include <string>

#include "agent/slurm/slurm_client.h"

namespace ff::agent {

inline constexpr const char* kMungeHeader = "X-Firstfault-Munge";

struct AuthDecision {
  int status = 200;   // 200 allowed; 401 no/undecodable/expired/replayed; 403; 503 munged down
  std::string error;  // for the reply and the log
  uid_t uid = static_cast<uid_t>(-1);
  std::string payload;  // the decoded credential's, when status is 200
};

class RequestAuth {
 public:
  // `slurm_user` is SlurmUser by name from the config ("" = ask scontrol).
  // `read_uids` may also read (the GET endpoints), never write.
  RequestAuth(std::set<uid_t> allowed_uids, std::string slurm_user, SlurmClient* slurm,
              std::set<uid_t> read_uids = {});

  // A write (bundle upload, fast pass), in two halves. First, before the
  // body is read: who sent it (decoded; root, SlurmUser or allowed_uids).
  AuthDecision authenticate_writer(const std::string& credential);
  // Then, with the body: `writer` from authenticate_writer names this
  // request (its payload is `expected_payload`).
  static AuthDecision bind_payload(const AuthDecision& writer, const std::string& expected_payload);
  // A read: the writers and read_uids.
  AuthDecision check_read(const std::string& credential, const std::string& expected_payload);

 private:
  AuthDecision authenticate(const std::string& credential, bool read);
  bool allowed(uid_t uid);

  std::mutex mutex_;
  std::set<uid_t> allowed_;
  std::set<uid_t> read_uids_;
  std::string slurm_user_;
  SlurmClient* slurm_;
  bool slurm_user_resolved_ = false;
};

}  // namespace ff::agent
