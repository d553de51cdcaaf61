#include "collectors/spool/pending_record.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace ff::collect {

std::optional<PendingRecord> read_pending_record(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto text = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  PendingRecord r{text("job_id"),    text("node"),       text("nodelist"),
                  text("exit_code"), text("derived_ec"), text("restart_count"),
                  text("stdout"),    text("stderr"),     text("uid")};
  if (r.job_id.empty() || r.node.empty()) return std::nullopt;
  return r;
}

}  // namespace ff::collect
