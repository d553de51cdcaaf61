#include "agent/server/dashboard_routes.h"
#include "agent/server/json_reply.h"

#include <spdlog/spdlog.h>

#include <string>

#include "agent/dashboard/dashboard_assets.h"

namespace ff::agent {

namespace {

void security_headers(httplib::Response& res) {
  res.set_header("Content-Security-Policy", kDashboardCsp);
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
}

void serve(const std::string& name, httplib::Response& res) {
  security_headers(res);
  const dashboard::Asset* asset = dashboard::find_asset(name);
  if (asset == nullptr) {
    res.status = 404;
    res.set_content("{\"error\":\"no such dashboard file\"}\n", kJsonType);
    return;
  }
  res.status = 200;
  res.set_content(std::string(asset->bytes), std::string(dashboard::content_type(name)));
}

void redirect(httplib::Response& res) {
  security_headers(res);
  res.set_redirect("/dashboard/", 303);
}

// As the API's handlers: no exception leaves (500 and a log line).
template <typename F>
httplib::Server::Handler guarded(F&& f) {
  return [f = std::forward<F>(f)](const httplib::Request& req, httplib::Response& res) {
    try {
      f(req, res);
    } catch (const std::exception& e) {
      spdlog::error("dashboard {}: {}", req.path, e.what());
      res.status = 500;
      res.set_content("{\"error\":\"internal error\"}\n", kJsonType);
    } catch (...) {
      spdlog::error("dashboard {}: unknown exception", req.path);
      res.status = 500;
      res.set_content("{\"error\":\"internal error\"}\n", kJsonType);
    }
  };
}

}  // namespace

void add_dashboard_routes(httplib::Server& server) {
  server.Get("/", guarded([](const httplib::Request&, httplib::Response& res) { redirect(res); }));
  server.Get("/dashboard",
             guarded([](const httplib::Request&, httplib::Response& res) { redirect(res); }));
  server.Get("/dashboard/", guarded([](const httplib::Request&, httplib::Response& res) {
               serve("index.html", res);
             }));
  // One path segment: the name is looked up among the embedded files, never
  // resolved on disk.
  server.Get(R"(/dashboard/([^/]+))",
             guarded([](const httplib::Request& req, httplib::Response& res) {
               serve(req.matches[1], res);
             }));
}

}  // namespace ff::agent
