#include "collectors/bundle/bundle_meta.h"

#include <chrono>

namespace ff::collect {

std::string make_bundle_id(const std::string& node, const std::string& job_id,
                           const std::string& pass) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  return node + "-" + job_id + "-" + pass + "-" + std::to_string(ns);
}

nlohmann::json wire_meta(const BundleMeta& meta) {
  return {{"bundle_id", meta.bundle_id},
          {"job_id", meta.job_id},
          {"attempt", meta.attempt},
          {"node", meta.node},
          {"pass", meta.pass}};
}

nlohmann::json to_json(const BundleMeta& meta) {
  nlohmann::json j = wire_meta(meta);
  j["created_us"] = meta.created;
  return j;
}

BundleMeta meta_from_json(const nlohmann::json& j) {
  BundleMeta meta;
  meta.bundle_id = j.at("bundle_id").get<std::string>();
  meta.job_id = j.at("job_id").get<std::string>();
  meta.attempt = j.at("attempt").get<int>();
  meta.node = j.at("node").get<std::string>();
  meta.pass = j.at("pass").get<std::string>();
  meta.created = j.value("created_us", TimeUs{0});
  return meta;
}

}  // namespace ff::collect
