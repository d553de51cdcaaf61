#include "central/kubernetes/k8s_collect.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "incident/job_json.h"
#include "incident/time/time.h"

namespace ff::sources::k8s {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// --- small helpers ----------------------------------------------------------

const json& at(const json& j, std::initializer_list<const char*> path) {
  static const json null;
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return null;
    auto it = cur->find(k);
    if (it == cur->end()) return null;
    cur = &*it;
  }
  return *cur;
}

std::string str(const json& j, std::initializer_list<const char*> path) {
  const json& v = at(j, path);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return "";
}

long long num(const json& j, std::initializer_list<const char*> path, long long fallback) {
  const json& v = at(j, path);
  if (v.is_number_integer()) return v.get<long long>();
  if (v.is_string()) {
    try {
      return std::stoll(v.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  return fallback;
}

using Time = MaybeTime;

// Kubernetes writes metav1.Time as RFC 3339 ("2026-11-02T10:41:07Z") and
// MicroTime with a fraction; both, with any offset, become UTC microseconds.
Time time_of(const json& j, std::initializer_list<const char*> path) {
  return parse_iso8601_utc(str(j, path));
}

// A value in a kubernetes.log line: one token, never empty, no spaces.
std::string token(const std::string& s) {
  if (s.empty()) return "-";
  std::string out = s;
  for (auto& c : out)
    if (c == ' ' || c == '\n' || c == '\t' || c == '"') c = '_';
  return out;
}

// A free-text value: JSON-quoted (one line, quotes escaped), bounded.
std::string quoted(const std::string& s) {
  std::string v = s.size() > 1000 ? s.substr(0, 1000) + "..." : s;
  return json(v).dump(-1, ' ', false, json::error_handler_t::replace);
}

Time earliest(Time a, Time b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}
Time latest(Time a, Time b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

// --- the objects read -------------------------------------------------------

struct Condition {
  std::string type, status, reason, message;
  Time when;  // lastTransitionTime (or lastProbeTime / lastUpdateTime)
};

std::vector<Condition> conditions_of(const json& obj) {
  std::vector<Condition> out;
  const json& list = at(obj, {"status", "conditions"});
  if (!list.is_array()) return out;
  for (const auto& c : list) {
    Condition x{str(c, {"type"}), str(c, {"status"}), str(c, {"reason"}), str(c, {"message"}),
                time_of(c, {"lastTransitionTime"})};
    if (!x.when) x.when = time_of(c, {"lastUpdateTime"});  // JobSet, Kubeflow conditions
    if (!x.when) x.when = time_of(c, {"lastProbeTime"});
    out.push_back(std::move(x));
  }
  return out;
}

const Condition* find_condition(const std::vector<Condition>& cs, const std::string& type) {
  for (const auto& c : cs)
    if (c.type == type) return &c;
  return nullptr;
}

bool is_true(const Condition* c) {
  return c && c->status == "True";
}

struct Termination {
  std::string reason, message;
  long long exit_code = 0, signal = 0;
  Time started, finished;
};

std::optional<Termination> termination_of(const json& state) {
  const json& t = at(state, {"terminated"});
  if (!t.is_object()) return std::nullopt;
  Termination x;
  x.reason = str(t, {"reason"});
  x.message = str(t, {"message"});
  x.exit_code = num(t, {"exitCode"}, 0);
  x.signal = num(t, {"signal"}, 0);
  x.started = time_of(t, {"startedAt"});
  x.finished = time_of(t, {"finishedAt"});
  return x;
}

struct Container {
  std::string name;
  bool init = false;
  long long restarts = 0;
  bool running = false;
  std::string waiting_reason;
  std::optional<Termination> current, previous;
  bool ran() const { return running || current || previous; }
};

struct Pod {
  std::string name, uid, node, phase, reason, message;
  Time created, started, deleted;
  int group = 0, index = -1, rank = -1;
  std::vector<Container> containers;
  std::vector<Condition> conditions;
};

Pod pod_of(const json& p) {
  Pod x;
  x.name = str(p, {"metadata", "name"});
  x.uid = str(p, {"metadata", "uid"});
  x.node = str(p, {"spec", "nodeName"});
  x.phase = str(p, {"status", "phase"});
  x.reason = str(p, {"status", "reason"});
  x.message = str(p, {"status", "message"});
  x.created = time_of(p, {"metadata", "creationTimestamp"});
  x.started = time_of(p, {"status", "startTime"});
  x.deleted = time_of(p, {"metadata", "deletionTimestamp"});
  x.conditions = conditions_of(p);
  // The pod's index: Indexed Jobs (and JobSet's child Jobs) annotate and, since
  // 1.28, label the completion index; Kubeflow labels the replica index.
  const json& ann = at(p, {"metadata", "annotations"});
  const json& lab = at(p, {"metadata", "labels"});
  for (const json* src : {&ann, &lab}) {
    if (x.index >= 0) break;
    x.index = static_cast<int>(num(*src, {"batch.kubernetes.io/job-completion-index"}, -1));
  }
  if (x.index < 0)
    x.index = static_cast<int>(num(lab, {"training.kubeflow.org/replica-index"}, -1));
  // JobSet: replicated child Jobs are groups; Kubeflow: master before workers.
  x.group = static_cast<int>(num(lab, {"jobset.sigs.k8s.io/job-global-index"}, -1));
  if (x.group < 0) x.group = static_cast<int>(num(lab, {"jobset.sigs.k8s.io/job-index"}, -1));
  if (x.group < 0) {
    std::string rt = str(lab, {"training.kubeflow.org/replica-type"});
    std::transform(rt.begin(), rt.end(), rt.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    x.group = rt == "master" || rt == "launcher" ? 0 : rt.empty() ? 0 : 1;
  }
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    const json& cs = at(p, {"status", list});
    if (!cs.is_array()) continue;
    for (const auto& c : cs) {
      Container k;
      k.name = str(c, {"name"});
      k.init = std::string(list) == "initContainerStatuses";
      k.restarts = num(c, {"restartCount"}, 0);
      k.running = at(c, {"state", "running"}).is_object();
      k.waiting_reason = str(c, {"state", "waiting", "reason"});
      k.current = termination_of(at(c, {"state"}));
      k.previous = termination_of(at(c, {"lastState"}));
      x.containers.push_back(std::move(k));
    }
  }
  return x;
}

// Ranks from the pods' indices: groups (JobSet child Jobs, Kubeflow replica
// types) in order, each taking as many ranks as its highest index + 1.
void assign_ranks(std::vector<Pod>& pods) {
  std::map<int, int> group_size;
  for (const auto& p : pods)
    if (p.index >= 0) group_size[p.group] = std::max(group_size[p.group], p.index + 1);
  std::map<int, int> offset;
  int next = 0;
  for (const auto& [g, n] : group_size) {
    offset[g] = next;
    next += n;
  }
  for (auto& p : pods)
    if (p.index >= 0) p.rank = offset[p.group] + p.index;
}

// --- the kubernetes.log lines -------------------------------------------------

class ClusterLog {
 public:
  void add(Time t, const std::string& text) {
    if (!t) return;  // a line the engine cannot place in time is of no use here
    lines_.push_back({*t, lines_.size(), format_time_micros(*t) + " kubernetes: " + text});
  }
  std::size_t size() const { return lines_.size(); }
  void write(const fs::path& file) {
    std::stable_sort(lines_.begin(), lines_.end(), [](const Line& a, const Line& b) {
      return a.t != b.t ? a.t < b.t : a.seq < b.seq;
    });
    fs::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    for (const auto& l : lines_) out << l.text << '\n';
    if (!out) throw std::runtime_error("cannot write " + file.string());
  }

 private:
  struct Line {
    long long t;
    std::size_t seq;
    std::string text;
  };
  std::vector<Line> lines_;
};

std::string condition_text(const std::string& what, const std::string& who, const Condition& c) {
  return what + " condition " + who + " type=" + token(c.type) + " status=" + token(c.status) +
         " reason=" + token(c.reason) + " message=" + quoted(c.message);
}

// --- owners and their pods --------------------------------------------------

struct Owner {
  std::string api_version, kind, name, uid;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The REST path of a namespaced object from its apiVersion and kind.
std::string object_path(const Owner& o, const std::string& ns) {
  std::string base = o.api_version.find('/') == std::string::npos ? "/api/" + o.api_version
                                                                  : "/apis/" + o.api_version;
  return base + "/namespaces/" + ns + "/" + lower(o.kind) + "s/" + o.name;
}

// Label selectors that find the pods of an owner, most specific first.
std::vector<http::QueryParams> pod_selectors(const Owner& o) {
  if (o.kind == "Job")
    return {{{"labelSelector", "batch.kubernetes.io/job-name=" + o.name}},
            {{"labelSelector", "job-name=" + o.name}}};  // before Kubernetes 1.27
  if (o.kind == "JobSet") return {{{"labelSelector", "jobset.sigs.k8s.io/jobset-name=" + o.name}}};
  if (o.kind == "PyTorchJob" || o.kind == "MPIJob" || o.kind == "TFJob" || o.kind == "XGBoostJob" ||
      o.kind == "PaddleJob" || o.kind == "JAXJob")
    return {{{"labelSelector", "training.kubeflow.org/job-name=" + o.name}}};
  if (o.kind == "Pod") return {{{"fieldSelector", "metadata.name=" + o.name}}};
  return {};
}

Owner owner_for_job_kind(const std::string& job_kind, const std::string& name) {
  std::string k = lower(job_kind);
  if (k == "jobset") return {"jobset.x-k8s.io/v1alpha2", "JobSet", name, ""};
  if (k == "pytorchjob") return {"kubeflow.org/v1", "PyTorchJob", name, ""};
  if (k == "mpijob") return {"kubeflow.org/v2beta1", "MPIJob", name, ""};
  return {"batch/v1", "Job", name, ""};
}

std::string state_from_failure(const std::string& state) {
  return state.empty() ? "FAILED" : state;
}

// --- the collection ---------------------------------------------------------

class Collector {
 public:
  Collector(const KubeClient& c, const CollectOptions& o) : client_(c), o_(o) {}

  CollectResult run();

 private:
  void cover(const std::string& part, CoverageStatus status, const std::string& detail,
             const std::string& node = "") {
    // Per-node entries use the engine's source name ("app"); the rest are ours.
    Coverage c;
    c.collector = node.empty() ? "kubernetes:" + part : part;
    c.node = node;
    c.status = status;
    c.detail = detail;
    r_.coverage.push_back(std::move(c));
  }
  void read_workload_object(const json& wl);
  bool read_owner(Owner owner);
  void find_workload_of_job();
  void read_pods();
  void read_events();
  void read_nodes();
  void read_logs();
  void decide_state();
  void write_job_json();

  const KubeClient& client_;
  const CollectOptions& o_;
  CollectResult r_;
  ClusterLog log_;
  std::string ns_;

  json workload_;  // the Workload object, or null
  std::vector<Condition> wl_conditions_;
  std::string wl_name_, wl_uid_;
  long long requeues_ = 0;
  Owner owner_;
  json owner_obj_;
  std::vector<Condition> owner_conditions_;
  Time owner_start_, owner_end_;
  std::vector<Pod> pods_;
  std::vector<std::string> excluded_pods_;
  std::string exit_code_;
  Time end_;
};

void Collector::read_workload_object(const json& wl) {
  workload_ = wl;
  wl_name_ = str(wl, {"metadata", "name"});
  wl_uid_ = str(wl, {"metadata", "uid"});
  wl_conditions_ = conditions_of(wl);
  requeues_ = num(wl, {"status", "requeueState", "count"}, 0);
  r_.attempt = static_cast<int>(requeues_);
  for (const auto& c : wl_conditions_)
    log_.add(c.when, condition_text("workload", "workload=" + ns_ + "/" + wl_name_, c));
  std::string cq = str(wl, {"status", "admission", "clusterQueue"});
  cover("workload", CoverageStatus::kOk,
        "workload " + wl_name_ + (cq.empty() ? "" : " in ClusterQueue " + cq) + ", requeued " +
            std::to_string(requeues_) + " time(s), " + std::to_string(wl_conditions_.size()) +
            " condition(s)");
}

bool Collector::read_owner(Owner owner) {
  owner_ = owner;
  ApiReply r = client_.get_json(object_path(owner, ns_));
  if (!r.ok()) {
    cover("job", coverage_status(r.status),
          owner.kind + " " + owner.name + ": " + r.detail +
              (r.status == ApiStatus::kNotFound ? " (deleted?)" : ""));
    return false;
  }
  owner_obj_ = r.body;
  if (owner_.uid.empty()) owner_.uid = str(r.body, {"metadata", "uid"});
  owner_conditions_ = conditions_of(r.body);
  owner_start_ = time_of(r.body, {"status", "startTime"});
  owner_end_ = time_of(r.body, {"status", "completionTime"});
  std::string who = "job=" + ns_ + "/" + lower(owner.kind) + "/" + owner.name;
  for (const auto& c : owner_conditions_) log_.add(c.when, condition_text("job", who, c));
  cover("job", CoverageStatus::kOk,
        owner.kind + " " + owner.name + ", " + std::to_string(owner_conditions_.size()) +
            " condition(s)");
  return true;
}

// A Job queued by Kueue has a Workload labelled with the Job's uid.
void Collector::find_workload_of_job() {
  if (owner_.uid.empty()) return;
  ApiReply r = client_.get_json("/apis/kueue.x-k8s.io/v1beta1/namespaces/" + ns_ + "/workloads",
                                {{"labelSelector", "kueue.x-k8s.io/job-uid=" + owner_.uid}});
  if (!r.ok()) {
    cover("workload",
          r.status == ApiStatus::kNotFound ? CoverageStatus::kEmpty : coverage_status(r.status),
          r.status == ApiStatus::kNotFound ? "Kueue's Workload API is not served by this cluster"
                                           : r.detail);
    return;
  }
  const json& items = at(r.body, {"items"});
  if (!items.is_array() || items.empty()) {
    cover("workload", CoverageStatus::kEmpty,
          "no Kueue workload carries kueue.x-k8s.io/job-uid=" + owner_.uid);
    return;
  }
  read_workload_object(items[0]);
}

void Collector::read_pods() {
  std::vector<http::QueryParams> selectors;
  if (o_.target.kind == Target::Kind::kPods)
    selectors.push_back({{"labelSelector", o_.target.name}});
  else
    selectors = pod_selectors(owner_);
  if (selectors.empty()) {
    cover("pods", CoverageStatus::kError, "no known pod label for owner kind " + owner_.kind);
    return;
  }
  ApiReply r;
  std::string used;
  for (const auto& sel : selectors) {
    r = client_.list("/api/v1/namespaces/" + ns_ + "/pods", sel, o_.max_pods);
    used = sel.front().first + " " + sel.front().second;
    if (!r.ok() || !at(r.body, {"items"}).empty()) break;
  }
  if (!r.ok()) {
    cover("pods", coverage_status(r.status), r.detail);
    return;
  }
  // The attempt: after an eviction the workload is admitted again and a new
  // set of pods starts; pods created before that admission belong to the
  // earlier attempt (they are normally gone already).
  Time admitted;
  if (const Condition* a = find_condition(wl_conditions_, "Admitted"); is_true(a))
    admitted = a->when;
  for (const auto& item : at(r.body, {"items"})) {
    Pod p = pod_of(item);
    if (requeues_ > 0 && admitted && p.created && *p.created < *admitted) {
      excluded_pods_.push_back(p.name);
      continue;
    }
    pods_.push_back(std::move(p));
  }
  std::sort(pods_.begin(), pods_.end(), [](const Pod& a, const Pod& b) { return a.name < b.name; });
  assign_ranks(pods_);
  bool truncated = at(r.body, {"truncated"}) == true;
  std::string detail = std::to_string(pods_.size()) + " pod(s) (" + used + ")";
  if (!excluded_pods_.empty())
    detail +=
        "; " + std::to_string(excluded_pods_.size()) + " pod(s) of an earlier attempt left out";
  if (truncated)
    detail += "; list cut at " + std::to_string(o_.max_pods) + " pods" +
              (r.detail.empty() ? "" : ": " + r.detail);
  cover("pods",
        pods_.empty() ? CoverageStatus::kEmpty
        : truncated   ? CoverageStatus::kPartial
                      : CoverageStatus::kOk,
        detail);

  for (const auto& p : pods_) {
    std::string who = "pod=" + ns_ + "/" + p.name + " node=" + token(p.node);
    log_.add(p.started,
             "pod started " + who + " rank=" + (p.rank >= 0 ? std::to_string(p.rank) : "-"));
    Time last_finish;
    for (const auto& c : p.containers) {
      for (const auto* t : {&c.previous, &c.current}) {
        if (!*t) continue;
        const Termination& x = **t;
        last_finish = latest(last_finish, x.finished);
        log_.add(x.finished,
                 "container terminated pod=" + ns_ + "/" + p.name + " container=" + token(c.name) +
                     " node=" + token(p.node) + " reason=" + token(x.reason) + " exit_code=" +
                     std::to_string(x.exit_code) + " signal=" + std::to_string(x.signal) +
                     " restarts=" + std::to_string(c.restarts) +
                     " instance=" + (t == &c.previous ? "previous" : "current") +
                     (c.init ? " init=true" : "") + " message=" + quoted(x.message));
      }
    }
    const Condition* ready = find_condition(p.conditions, "Ready");
    Time pod_end = last_finish ? last_finish : ready ? ready->when : std::nullopt;
    for (const auto& c : p.conditions)
      if (c.type == "DisruptionTarget" && c.status == "True") {
        log_.add(c.when, "pod disruption " + who + " reason=" + token(c.reason) +
                             " message=" + quoted(c.message));
        pod_end = earliest(pod_end, c.when);
      }
    if (p.reason == "Evicted")
      log_.add(pod_end, "pod evicted " + who + " reason=Evicted message=" + quoted(p.message));
    else if (p.phase == "Failed" || !p.reason.empty())
      log_.add(pod_end, "pod failed " + who + " phase=" + token(p.phase) +
                            " reason=" + token(p.reason) + " message=" + quoted(p.message));
    if (p.deleted) log_.add(p.deleted, "pod deleted " + who);
  }
}

void Collector::read_events() {
  std::set<std::string> uids, names;
  for (const auto& p : pods_) {
    uids.insert(p.uid);
    names.insert("Pod/" + p.name);
  }
  if (!wl_uid_.empty()) uids.insert(wl_uid_);
  if (!wl_name_.empty()) names.insert("Workload/" + wl_name_);
  if (!owner_.uid.empty()) uids.insert(owner_.uid);
  if (!owner_.name.empty()) names.insert(owner_.kind + "/" + owner_.name);
  std::map<std::string, std::string> pod_node;
  for (const auto& p : pods_) pod_node[p.name] = p.node;

  auto add_event = [&](const json& e, const std::string& node) {
    std::string kind = str(e, {"involvedObject", "kind"});
    std::string name = str(e, {"involvedObject", "name"});
    std::string obj_ns = str(e, {"involvedObject", "namespace"});
    Time t = time_of(e, {"firstTimestamp"});
    if (!t) t = time_of(e, {"eventTime"});
    if (!t) t = time_of(e, {"lastTimestamp"});
    if (!t) t = time_of(e, {"metadata", "creationTimestamp"});
    std::string source = str(e, {"source", "component"});
    if (source.empty()) source = str(e, {"reportingComponent"});
    long long count = num(e, {"count"}, 1);
    if (count == 1) count = num(e, {"series", "count"}, 1);
    log_.add(t, "event type=" + token(str(e, {"type"})) + " reason=" + token(str(e, {"reason"})) +
                    " object=" + token(kind) + "/" + (obj_ns.empty() ? "" : obj_ns + "/") +
                    token(name) + " node=" + token(node) + " count=" + std::to_string(count) +
                    " source=" + token(source) + " message=" + quoted(str(e, {"message"})));
  };

  ApiReply r = client_.list("/api/v1/namespaces/" + ns_ + "/events", {}, o_.max_events);
  if (!r.ok()) {
    cover("events", coverage_status(r.status), r.detail);
  } else {
    std::size_t kept = 0;
    for (const auto& e : at(r.body, {"items"})) {
      std::string uid = str(e, {"involvedObject", "uid"});
      std::string key =
          str(e, {"involvedObject", "kind"}) + "/" + str(e, {"involvedObject", "name"});
      if (!(uid.size() && uids.count(uid)) && !names.count(key)) continue;
      std::string node;
      if (str(e, {"involvedObject", "kind"}) == "Pod")
        node = pod_node[str(e, {"involvedObject", "name"})];
      add_event(e, node);
      ++kept;
    }
    bool truncated = at(r.body, {"truncated"}) == true;
    // Events live about an hour (the API server's --event-ttl): none is not "nothing happened".
    cover("events",
          truncated ? CoverageStatus::kPartial
          : kept    ? CoverageStatus::kOk
                    : CoverageStatus::kEmpty,
          std::to_string(kept) + " event(s) about the job's objects" +
              (truncated ? "; namespace event list cut at " + std::to_string(o_.max_events) : "") +
              (kept ? "" : " (events expire after the API server's --event-ttl, 1 h by default)"));
  }
}

void Collector::read_nodes() {
  if (r_.nodes.empty()) {
    cover("nodes", CoverageStatus::kEmpty, "no pod was bound to a node");
    return;
  }
  std::size_t ok = 0, conds = 0;
  ApiReply first_fail;
  std::string failed;
  for (const auto& n : r_.nodes) {
    ApiReply r = client_.get_json("/api/v1/nodes/" + n);
    if (!r.ok()) {
      if (failed.empty()) first_fail = r;
      failed += (failed.empty() ? "" : ", ") + n;
      continue;
    }
    ++ok;
    for (const auto& c : conditions_of(r.body)) {
      // Only what is wrong now: Ready not True, or a problem condition
      // (pressure, node-problem-detector's KernelDeadlock, ...) True.
      bool bad = c.type == "Ready" ? c.status != "True" : c.status == "True";
      if (!bad) continue;
      log_.add(c.when, condition_text("node", "node=" + n, c));
      ++conds;
    }
  }
  // Node events (NodeNotReady, Rebooted, SystemOOM) are in the default namespace.
  ApiReply ev = client_.list("/api/v1/namespaces/default/events",
                             {{"fieldSelector", "involvedObject.kind=Node"}}, o_.max_events);
  std::size_t node_events = 0;
  std::set<std::string> nodes(r_.nodes.begin(), r_.nodes.end());
  if (ev.ok())
    for (const auto& e : at(ev.body, {"items"})) {
      std::string name = str(e, {"involvedObject", "name"});
      if (!nodes.count(name)) continue;
      Time t = time_of(e, {"firstTimestamp"});
      if (!t) t = time_of(e, {"eventTime"});
      if (!t) t = time_of(e, {"lastTimestamp"});
      std::string source = str(e, {"source", "component"});
      if (source.empty()) source = str(e, {"reportingComponent"});
      log_.add(t, "event type=" + token(str(e, {"type"})) + " reason=" + token(str(e, {"reason"})) +
                      " object=Node/" + token(name) + " node=" + token(name) +
                      " count=" + std::to_string(num(e, {"count"}, 1)) +
                      " source=" + token(source) + " message=" + quoted(str(e, {"message"})));
      ++node_events;
    }
  std::string detail = std::to_string(ok) + " of " + std::to_string(r_.nodes.size()) +
                       " node(s) read, " + std::to_string(conds) + " abnormal condition(s), " +
                       std::to_string(node_events) + " node event(s)";
  if (!failed.empty()) detail += "; not read: " + failed + ": " + first_fail.detail;
  if (!ev.ok()) detail += "; node events not read: " + ev.detail;
  CoverageStatus status = ok == r_.nodes.size() && ev.ok() ? CoverageStatus::kOk
                          : ok == 0 && !ev.ok()            ? coverage_status(first_fail.status)
                                                           : CoverageStatus::kPartial;
  cover("nodes", status, detail);
}

void Collector::read_logs() {
  if (!o_.pod_logs) {
    cover("logs", CoverageStatus::kEmpty, "pod logs not requested (--no-logs)");
    return;
  }
  std::size_t ok = 0, failed = 0, truncated = 0;
  std::string first_failure;
  ApiStatus first_status = ApiStatus::kError;
  std::map<std::string, std::pair<int, std::string>> per_node;  // node → (files ok, a failure)
  for (const auto& p : pods_) {
    for (const auto& c : p.containers) {
      if (!c.ran() || p.node.empty()) continue;  // never started: no log to ask for
      std::vector<bool> instances;
      if (c.running || c.current) instances.push_back(false);
      if (c.previous || c.restarts > 0) instances.push_back(true);
      for (bool previous : instances) {
        PodLogResult res =
            fetch_pod_log(client_, {ns_, p.name, c.name, p.node, previous}, o_.logs, o_.out);
        auto& node = per_node[p.node];
        if (res.status == ApiStatus::kOk) {
          ++ok;
          ++node.first;
          ++r_.log_files;
          if (res.truncated) ++truncated;
        } else {
          if (!failed) {
            first_failure = res.detail;
            first_status = res.status;
          }
          ++failed;
          if (node.second.empty()) node.second = res.detail;
        }
      }
    }
  }
  std::string detail = std::to_string(ok) + " container log(s) written";
  if (truncated) detail += ", " + std::to_string(truncated) + " cut at the byte or line limit";
  if (failed) detail += "; " + std::to_string(failed) + " not read, first: " + first_failure;
  CoverageStatus status = failed == 0
                              ? (ok ? (truncated ? CoverageStatus::kPartial : CoverageStatus::kOk)
                                    : CoverageStatus::kEmpty)
                          : ok ? CoverageStatus::kPartial
                               : coverage_status(first_status);
  cover("logs", status, detail);
  // A node none of whose logs could be read: said under the engine's own
  // source name so the diagnosis lists it as missing, not as quiet.
  for (const auto& [node, v] : per_node)
    if (v.first == 0)
      cover("app", ok ? CoverageStatus::kError : coverage_status(first_status),
            "kubernetes pod log: " + v.second, node);
}

void Collector::decide_state() {
  auto failed_cond = [](const std::vector<Condition>& cs) -> const Condition* {
    const Condition* f = find_condition(cs, "Failed");
    return is_true(f) ? f : nullptr;
  };
  const Condition* wl_finished = find_condition(wl_conditions_, "Finished");
  bool succeeded = (is_true(wl_finished) && wl_finished->reason == "Succeeded") ||
                   is_true(find_condition(owner_conditions_, "Complete")) ||
                   is_true(find_condition(owner_conditions_, "Completed")) ||
                   is_true(find_condition(owner_conditions_, "Succeeded"));
  std::string state;
  Time end = latest(owner_end_, is_true(wl_finished) ? wl_finished->when : std::nullopt);
  if (const Condition* f = failed_cond(owner_conditions_)) end = latest(end, f->when);

  // 1. What Kueue decided about this attempt.
  const Condition* evicted = find_condition(wl_conditions_, "Evicted");
  const Condition* preempted = find_condition(wl_conditions_, "Preempted");
  const Condition* admitted = find_condition(wl_conditions_, "Admitted");
  auto current = [&](const Condition* c) {
    // Evicted and then admitted again: the eviction ended an earlier attempt.
    return is_true(c) &&
           !(is_true(admitted) && admitted->when && c->when && *admitted->when > *c->when);
  };
  if (!succeeded && (current(evicted) || current(preempted))) {
    const Condition* c = current(evicted) ? evicted : preempted;
    bool time_limit = c->reason == "MaximumExecutionTimeExceeded" ||
                      c->message.find("maximum execution time") != std::string::npos;
    state = time_limit ? "TIMEOUT" : "PREEMPTED";
    end = latest(end, c->when);
  }
  // 2. The job controller's deadline.
  if (state.empty() && !succeeded)
    if (const Condition* f = failed_cond(owner_conditions_); f && f->reason == "DeadlineExceeded")
      state = "TIMEOUT";
  // 3. The earliest pod-level end: OOM kill, eviction, preemption, deadline.
  Time first_cause;
  std::string cause_state;
  std::string exit_code;
  Time first_exit;
  for (const auto& p : pods_) {
    for (const auto& c : p.containers)
      for (const auto* t : {&c.previous, &c.current}) {
        if (!*t) continue;
        end = latest(end, (*t)->finished);
        if ((*t)->reason == "OOMKilled" && (*t)->finished &&
            (!first_cause || *(*t)->finished < *first_cause)) {
          first_cause = (*t)->finished;
          cause_state = "OUT_OF_MEMORY";
        }
        if ((*t)->exit_code != 0 && (*t)->finished &&
            (!first_exit || *(*t)->finished < *first_exit)) {
          first_exit = (*t)->finished;
          exit_code = std::to_string((*t)->exit_code) + ":" + std::to_string((*t)->signal);
        }
      }
    Time disrupted;
    for (const auto& c : p.conditions)
      if (c.type == "DisruptionTarget" && c.status == "True")
        disrupted = earliest(disrupted, c.when);
    if (p.reason == "Evicted" && !disrupted) disrupted = p.deleted ? p.deleted : end;
    if (disrupted && (!first_cause || *disrupted < *first_cause)) {
      first_cause = disrupted;
      cause_state = "PREEMPTED";
    }
    if (p.reason == "DeadlineExceeded" && cause_state.empty()) cause_state = "TIMEOUT";
  }
  if (state.empty() && !succeeded) state = cause_state;
  // 4. Done, or failed for a reason the logs must tell.
  bool any_failed = false, all_succeeded = !pods_.empty();
  for (const auto& p : pods_) {
    if (p.phase == "Failed") any_failed = true;
    if (p.phase != "Succeeded") all_succeeded = false;
  }
  if (state.empty()) {
    if (succeeded || (all_succeeded && !failed_cond(owner_conditions_)))
      state = "COMPLETED";
    else if (failed_cond(owner_conditions_) ||
             (is_true(wl_finished) && wl_finished->reason != "Succeeded") || any_failed ||
             first_exit)
      state = state_from_failure(state);
  }
  r_.state = state;
  if (state == "COMPLETED") exit_code = "0:0";
  exit_code_ = exit_code;
  end_ = end;
}

void Collector::write_job_json() {
  JobInfo job;
  job.schema = kIncidentSchema;
  job.cluster = o_.cluster.empty() ? client_.access().cluster_name : o_.cluster;
  job.job_id = r_.job_id;
  job.attempt = r_.attempt;
  job.state = r_.state;
  job.exit_code = exit_code_;
  Time start = owner_start_;
  for (const auto& p : pods_) start = earliest(start, p.started);
  if (!start)
    if (const Condition* a = find_condition(wl_conditions_, "Admitted"); is_true(a))
      start = a->when;
  job.start_time = start;
  // A running job has no end; the engine then applies no end of window.
  if (end_ && !r_.state.empty()) job.end_time = end_;
  job.timezone = "UTC";
  job.nodes = r_.nodes;
  std::vector<const Pod*> ranked;
  for (const auto& p : pods_)
    if (p.rank >= 0 && !p.node.empty()) ranked.push_back(&p);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Pod* a, const Pod* b) {
    if (a->rank != b->rank) return a->rank < b->rank;
    return a->created.value_or(0) < b->created.value_or(0);
  });
  // One entry per pod: its index is the rank torchrun calls the node rank.
  // A pod says nothing of its GPUs, and without an index no rank is invented.
  job.ranks_known = !ranked.empty();
  for (const Pod* p : ranked) {
    RankInfo rank;
    rank.rank = p->rank;
    rank.node = p->node;
    rank.local_rank = 0;
    rank.gpus_known = false;
    for (const auto& c : p->containers)
      if (!c.init && c.current && c.current->exit_code != 0) {
        rank.exit_code =
            std::to_string(c.current->exit_code) + ":" + std::to_string(c.current->signal);
        break;
      }
    job.ranks.push_back(std::move(rank));
  }
  job.coverage = r_.coverage;
  json j = to_json(job);
  // Beyond the model: which scheduler ran it, each rank's pod, and below,
  // what was read.
  j["scheduler"] = "kubernetes";
  for (std::size_t i = 0; i < ranked.size(); ++i) j["ranks"][i]["pod"] = ranked[i]->name;

  // What was read, for a person looking at the incident (the engine ignores it).
  json k = json::object();
  k["namespace"] = ns_;
  k["api_server"] = client_.access().server;
  if (!wl_name_.empty()) {
    json wl = {{"name", wl_name_}, {"uid", wl_uid_}, {"requeue_count", requeues_}};
    std::string cq = str(workload_, {"status", "admission", "clusterQueue"});
    if (!cq.empty()) wl["cluster_queue"] = cq;
    std::string queue = str(workload_, {"spec", "queueName"});
    if (!queue.empty()) wl["queue"] = queue;
    json cs = json::array();
    for (const auto& c : wl_conditions_)
      cs.push_back({{"type", c.type},
                    {"status", c.status},
                    {"reason", c.reason},
                    {"message", c.message},
                    {"time", c.when ? format_time_micros(*c.when) : ""}});
    wl["conditions"] = cs;
    k["workload"] = wl;
  }
  if (!owner_.name.empty())
    k["owner"] = {{"kind", owner_.kind}, {"name", owner_.name}, {"uid", owner_.uid}};
  if (o_.target.kind == Target::Kind::kPods) k["selector"] = o_.target.name;
  json pods = json::array();
  for (const auto& p : pods_) {
    json pj = {{"name", p.name}, {"uid", p.uid}, {"node", p.node}, {"phase", p.phase}};
    if (!p.reason.empty()) pj["reason"] = p.reason;
    if (p.rank >= 0) pj["rank"] = p.rank;
    if (p.started) pj["start_time"] = format_time_micros(*p.started);
    json cs = json::array();
    for (const auto& c : p.containers) {
      json cj = {{"name", c.name}, {"restart_count", c.restarts}};
      if (c.init) cj["init"] = true;
      auto term = [](const Termination& t) {
        json tj = {{"reason", t.reason}, {"exit_code", t.exit_code}, {"signal", t.signal}};
        if (t.finished) tj["finished_at"] = format_time_micros(*t.finished);
        return tj;
      };
      if (c.current) cj["terminated"] = term(*c.current);
      if (c.previous) cj["last_terminated"] = term(*c.previous);
      if (c.running) cj["running"] = true;
      if (!c.waiting_reason.empty()) cj["waiting"] = c.waiting_reason;
      cs.push_back(cj);
    }
    pj["containers"] = cs;
    pods.push_back(pj);
  }
  k["pods"] = pods;
  if (!excluded_pods_.empty()) k["earlier_attempt_pods"] = excluded_pods_;
  j["kubernetes"] = k;

  fs::path file = o_.out / "job.json";
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << job_json_text(j, InvalidUtf8::kReplace);
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

CollectResult Collector::run() {
  ns_ = o_.target.ns;
  std::error_code ec;
  fs::create_directories(o_.out, ec);
  if (ec) throw std::runtime_error("cannot create " + o_.out.string() + ": " + ec.message());

  bool found = false;
  if (o_.target.kind == Target::Kind::kWorkload) {
    ApiReply r = client_.get_json("/apis/kueue.x-k8s.io/v1beta1/namespaces/" + ns_ + "/workloads/" +
                                  o_.target.name);
    if (!r.ok()) {
      cover("workload", coverage_status(r.status), r.detail);
      r_.problem = "workload " + ns_ + "/" + o_.target.name + ": " + r.detail;
      r_.job_id = ns_ + "/" + o_.target.name;
    } else {
      found = true;
      read_workload_object(r.body);
      // The job Kueue admitted: the workload's controller owner.
      const json& refs = at(r.body, {"metadata", "ownerReferences"});
      const json* ref = nullptr;
      if (refs.is_array())
        for (const auto& x : refs)
          if (!ref || at(x, {"controller"}) == true) ref = &x;
      if (ref) {
        Owner o{str(*ref, {"apiVersion"}), str(*ref, {"kind"}), str(*ref, {"name"}),
                str(*ref, {"uid"})};
        read_owner(o);
        owner_.uid = owner_.uid.empty() ? o.uid : owner_.uid;
        r_.job_id = ns_ + "/" + o.name + "/" + owner_.uid;
      } else {
        cover("job", CoverageStatus::kEmpty,
              "the workload has no owner job (ownerReferences empty)");
        r_.job_id = ns_ + "/" + wl_name_ + "/" + wl_uid_;
      }
    }
  } else if (o_.target.kind == Target::Kind::kJob) {
    Owner o = owner_for_job_kind(o_.target.job_kind, o_.target.name);
    found = read_owner(o);
    r_.job_id = ns_ + "/" + o_.target.name + (owner_.uid.empty() ? "" : "/" + owner_.uid);
    if (!found)
      r_.problem = o.kind + " " + ns_ + "/" + o_.target.name + ": " + r_.coverage.back().detail;
    else
      find_workload_of_job();
  } else {
    r_.job_id = ns_ + "/" + o_.target.name;
  }

  if (found || o_.target.kind == Target::Kind::kPods) {
    read_pods();
    if (o_.target.kind == Target::Kind::kPods) {
      found = !pods_.empty();
      if (!found)
        r_.problem = "no pods match " + o_.target.name + " in namespace " + ns_ + ": " +
                     r_.coverage.back().detail;
    }
    std::set<std::string> nodes;
    for (const auto& p : pods_)
      if (!p.node.empty()) nodes.insert(p.node);
    r_.nodes.assign(nodes.begin(), nodes.end());
    r_.pods = pods_.size();
    read_events();
    read_nodes();
    read_logs();
    decide_state();
  }
  r_.target_found = found;
  r_.log_lines = log_.size();
  if (log_.size()) log_.write(o_.out / "cluster" / "kubernetes.log");
  write_job_json();
  return r_;
}

}  // namespace

Target parse_target(Target::Kind kind, const std::string& spec, const std::string& job_kind) {
  auto slash = spec.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= spec.size())
    throw std::invalid_argument("'" + spec + "' is not NAMESPACE/" +
                                (kind == Target::Kind::kPods ? "SELECTOR" : "NAME"));
  Target t;
  t.kind = kind;
  t.ns = spec.substr(0, slash);
  t.name = spec.substr(slash + 1);
  t.job_kind = job_kind;
  // Names go into URL paths: refuse anything that is not a Kubernetes name.
  auto dns_ok = [](const std::string& s) {
    return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
      return std::islower(c) || std::isdigit(c) || c == '-' || c == '.';
    });
  };
  if (!dns_ok(t.ns)) throw std::invalid_argument("'" + t.ns + "' is not a namespace name");
  if (kind != Target::Kind::kPods && !dns_ok(t.name))
    throw std::invalid_argument("'" + t.name + "' is not a Kubernetes object name");
  std::string k = lower(job_kind);
  if (kind == Target::Kind::kJob && k != "job" && k != "jobset" && k != "pytorchjob" &&
      k != "mpijob")
    throw std::invalid_argument("job kind '" + job_kind +
                                "' is not one of job, jobset, pytorchjob, mpijob");
  return t;
}

CollectResult collect_incident(const KubeClient& client, const CollectOptions& options) {
  Collector c(client, options);
  return c.run();
}

}  // namespace ff::sources::k8s
