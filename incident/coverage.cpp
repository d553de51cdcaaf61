#include "incident/coverage.h"

#include <array>
#include <utility>

#include "incident/json_fields.h"

namespace ff {

namespace {

constexpr std::array<std::pair<CoverageStatus, std::string_view>, 8> kNames = {{
    {CoverageStatus::kOk, "ok"},
    {CoverageStatus::kEmpty, "empty"},
    {CoverageStatus::kPartial, "partial"},
    {CoverageStatus::kTruncated, "truncated"},
    {CoverageStatus::kMissing, "missing"},
    {CoverageStatus::kError, "error"},
    {CoverageStatus::kUnreachable, "unreachable"},
    {CoverageStatus::kUnauthorised, "unauthorised"},
}};

}  // namespace

std::string_view status_name(CoverageStatus status) {
  for (const auto& [s, name] : kNames)
    if (s == status) return name;
  return "";
}

CoverageStatus coverage_status_named(std::string_view name) {
  if (name.empty()) return CoverageStatus::kUnstated;
  for (const auto& [s, n] : kNames)
    if (n == name) return s;
  return CoverageStatus::kUnrecognised;
}

std::string Coverage::status_text() const {
  return status == CoverageStatus::kUnrecognised ? unrecognised_status
                                                 : std::string(status_name(status));
}

void Coverage::set_status_text(const std::string& text) {
  status = coverage_status_named(text);
  unrecognised_status = status == CoverageStatus::kUnrecognised ? text : "";
}

nlohmann::json to_json(const Coverage& c) {
  nlohmann::json j = {
      {"collector", c.collector}, {"status", c.status_text()}, {"detail", c.detail}};
  if (!c.node.empty()) j["node"] = c.node;
  if (c.lines) j["lines"] = *c.lines;
  if (c.covers_from) j["covers_from"] = format_time(*c.covers_from);
  if (c.covers_until) j["covers_until"] = format_time(*c.covers_until);
  return j;
}

Coverage coverage_from_json(const nlohmann::json& j, std::vector<ErrorItem>& errors) {
  Coverage c;
  c.collector = json_fields::text(j, "collector");
  c.node = json_fields::text(j, "node");
  c.set_status_text(json_fields::text(j, "status"));
  if (auto it = j.find("lines"); it != j.end() && it->is_number_unsigned())
    c.lines = it->get<std::uint64_t>();
  c.detail = json_fields::text(j, "detail");
  c.covers_from = json_fields::time(j, "covers_from", "job.json", errors);
  c.covers_until = json_fields::time(j, "covers_until", "job.json", errors);
  return c;
}

}  // namespace ff
