// The dashboard's static files (index.html, dashboard.js, dashboard.css),
// embedded at build time by embed_dashboard.cmake. They hold no job data:
// the page reads the agent's API from the browser.
#pragma once

#include <string_view>
#include <vector>

namespace ff::dashboard {

struct Asset {
  std::string_view name;   // file name, no directory: "dashboard.js"
  std::string_view bytes;  // the file's content, byte for byte
};

// Every embedded file, in the order CMakeLists.txt lists them.
const std::vector<Asset>& assets();

// The file of exactly that name, nullptr when there is none. Names are
// compared, never resolved as paths, so "../x" or "a/b" find nothing.
const Asset* find_asset(std::string_view name);

// The Content-Type for a file name ("text/javascript; charset=utf-8").
std::string_view content_type(std::string_view name);

}  // namespace ff::dashboard
