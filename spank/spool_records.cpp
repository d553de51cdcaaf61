#include "spank/spool_records.h"

#include <nlohmann/json.hpp>

#include "spank/exit_status.h"

namespace firstfault::spank {
namespace {

std::string Dump(const nlohmann::ordered_json& record) {
  return record.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string AllocRecordPath(const std::string& job_id, const std::string& step) {
  return "jobs/" + job_id + "/alloc-" + step + ".json";
}

std::string RankRecordPath(const std::string& job_id, const std::string& step, uint32_t rank) {
  return "jobs/" + job_id + "/rank-" + step + "-" + std::to_string(rank) + ".json";
}

std::string FormatRfc3339Utc(std::time_t time) {
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[32];
  size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(text, length);
}

std::string AllocRecordJson(const AllocRecord& record) {
  nlohmann::ordered_json json;
  json["job_id"] = record.job_id;
  json["step"] = record.step;
  json["node"] = record.node;
  json["node_index"] = record.node_index;
  json["node_count"] = record.node_count;
  json["local_task_count"] = record.local_task_count;
  json["total_task_count"] = record.total_task_count;
  json["restart_count"] = record.restart_count;
  json["start_time"] = FormatRfc3339Utc(record.start_time);
  json["uid"] = record.uid;
  json["cuda_visible_devices"] = record.cuda_visible_devices;
  json["slurm_job_gpus"] = record.slurm_job_gpus;
  json["nodelist"] = record.nodelist;
  return Dump(json);
}

std::string RankRecordJson(const RankRecord& record) {
  nlohmann::ordered_json json;
  json["job_id"] = record.job_id;
  json["step"] = record.step;
  json["node"] = record.node;
  json["rank"] = record.rank;
  json["local_rank"] = record.local_rank;
  json["pid"] = record.pid;
  json["gpus"] = record.gpus;
  json["gpu_pci"] = record.gpu_pci;
  if (record.exit_status) {
    json["exit_status"] = *record.exit_status;
    json["exit_code"] = FormatExitCode(*record.exit_status);
  }
  return Dump(json);
}

}  // namespace firstfault::spank
