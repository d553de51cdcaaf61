// The read-only dashboard's static files (agent/dashboard/):
//   GET /                      303 to /dashboard/
//   GET /dashboard             303 to /dashboard/
//   GET /dashboard/            index.html
//   GET /dashboard/<file>      dashboard.js, dashboard.css
// Public: the files hold no job data; the page reads the API with the
// visitor's read token (or munge-free when read_access is open). Every
// answer carries Content-Security-Policy default-src 'self', so the page
// can run no inline script and load nothing from another origin.
#pragma once

#include <httplib.h>

namespace ff::agent {

inline constexpr const char* kDashboardCsp =
    "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void add_dashboard_routes(httplib::Server& server);

}  // namespace ff::agent
