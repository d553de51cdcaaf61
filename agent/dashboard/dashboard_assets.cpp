#include "agent/dashboard/dashboard_assets.h"

namespace ff::dashboard {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

const Asset* find_asset(std::string_view name) {
  for (const auto& a : assets())
    if (a.name == name) return &a;
  return nullptr;
}

std::string_view content_type(std::string_view name) {
  if (ends_with(name, ".html")) return "text/html; charset=utf-8";
  if (ends_with(name, ".js")) return "text/javascript; charset=utf-8";
  if (ends_with(name, ".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

}  // namespace ff::dashboard
