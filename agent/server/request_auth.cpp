#include "agent/server/request_auth.h"

#include <pwd.h>

#include <utility>
#include <vector>

#include "common/munge_credential.h"

namespace ff::agent {

namespace mc = ff::munge_credential;

RequestAuth::RequestAuth(std::set<uid_t> allowed_uids, std::string slurm_user, SlurmClient* slurm,
                         std::set<uid_t> read_uids)
    : allowed_(std::move(allowed_uids)),
      read_uids_(std::move(read_uids)),
      slurm_user_(std::move(slurm_user)),
      slurm_(slurm) {
  allowed_.insert(0);
}

bool RequestAuth::allowed(uid_t uid) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (allowed_.count(uid)) return true;
  // SlurmUser is looked up on the first credential that needs it, so the
  // agent starts even while slurmctld is down; a failed lookup is retried.
  if (!slurm_user_resolved_) {
    if (!slurm_user_.empty()) {
      std::vector<char> buf(16384);
      passwd pw{};
      passwd* found = nullptr;
      if (getpwnam_r(slurm_user_.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found) {
        allowed_.insert(found->pw_uid);
        slurm_user_resolved_ = true;
      }
    } else if (slurm_ != nullptr) {
      ClusterFacts facts = slurm_->cluster_facts();
      if (facts.known) {
        if (facts.slurm_user_uid >= 0) allowed_.insert(static_cast<uid_t>(facts.slurm_user_uid));
        slurm_user_resolved_ = true;
      }
    } else {
      slurm_user_resolved_ = true;
    }
  }
  return allowed_.count(uid) > 0;
}

AuthDecision RequestAuth::check_read(const std::string& credential,
                                     const std::string& expected_payload) {
  return bind_payload(authenticate(credential, true), expected_payload);
}

AuthDecision RequestAuth::authenticate_writer(const std::string& credential) {
  return authenticate(credential, false);
}

AuthDecision RequestAuth::bind_payload(const AuthDecision& who,
                                       const std::string& expected_payload) {
  if (who.status != 200) return who;
  AuthDecision d = who;
  if (who.payload != expected_payload) {
    d.status = 403;
    d.error = "credential payload does not match the request";
  }
  return d;
}

AuthDecision RequestAuth::authenticate(const std::string& credential, bool read) {
  AuthDecision d;
  mc::DecodeResult r = mc::decode(credential);
  if (!r.ok) {
    d.status = r.error == mc::DecodeError::other ? 503 : 401;
    d.error = std::string("credential ") + mc::error_name(r.error) +
              (r.message.empty() ? "" : ": " + r.message);
    return d;
  }
  d.uid = r.uid;
  if (!allowed(r.uid) && !(read && read_uids_.count(r.uid))) {
    d.status = 403;
    d.error = "uid " + std::to_string(r.uid) + " is not allowed";
    return d;
  }
  d.payload = std::move(r.payload);
  return d;
}

}  // namespace ff::agent
