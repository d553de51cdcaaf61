// The dashboard's embedded files and the read token, without a daemon:
// the bytes served are the files in agent/dashboard/, the page can load
// nothing from another origin (no http(s) URL, no inline script or handler,
// no markup built from strings), and the token file is refused when others
// may read it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "agent/dashboard/dashboard_assets.h"
#include "agent/server/agent_config.h"
#include "agent/server/read_token.h"
#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace {

namespace fs = std::filesystem;
using ff::agent::bearer_token_matches;
using ff::agent::ConfigError;
using ff::agent::load_read_token;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string source_file(const std::string& name) {
  return ff::test_support::read_file(fs::path(FF_SOURCE_DIR) / "agent" / "dashboard" / name);
}

std::string asset(const std::string& name) {
  const auto* a = ff::dashboard::find_asset(name);
  return a ? std::string(a->bytes) : std::string();
}

TEST(DashboardAssets, EmbedsTheSourceFilesByteForByte) {
  std::vector<std::string> names;
  for (const auto& a : ff::dashboard::assets()) names.emplace_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"index.html", "dashboard.js", "dashboard.css"}));
  for (const auto& name : names) {
    std::string bytes = asset(name);
    EXPECT_FALSE(bytes.empty()) << name;
    EXPECT_EQ(bytes, source_file(name)) << name;
  }
}

TEST(DashboardAssets, NamesAreNeverResolvedAsPaths) {
  EXPECT_NE(ff::dashboard::find_asset("dashboard.js"), nullptr);
  EXPECT_EQ(ff::dashboard::find_asset("../dashboard.js"), nullptr);
  EXPECT_EQ(ff::dashboard::find_asset("./dashboard.js"), nullptr);
  EXPECT_EQ(ff::dashboard::find_asset("CMakeLists.txt"), nullptr);
  EXPECT_EQ(ff::dashboard::find_asset(""), nullptr);
  EXPECT_EQ(ff::dashboard::content_type("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(ff::dashboard::content_type("dashboard.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ff::dashboard::content_type("dashboard.css"), "text/css; charset=utf-8");
}

// Offline, and nothing leaves for another origin: no absolute URL of any
// scheme that fetches, no protocol-relative URL, no CSS import.
TEST(DashboardAssets, ReferenceNothingOutsideTheAgent) {
  for (const auto& a : ff::dashboard::assets()) {
    std::string text = lower(a.bytes);
    std::smatch m;
    EXPECT_FALSE(std::regex_search(text, m, std::regex(R"(\b(https?|wss?|ftp):)")))
        << a.name << " contains " << m.str();
    for (const char* needle : {"@import", "url("})
      EXPECT_EQ(text.find(needle), std::string::npos) << a.name << " contains " << needle;
    EXPECT_FALSE(std::regex_search(text, std::regex(R"((src|href|action)\s*=\s*["']?//)")))
        << a.name << ": protocol-relative URL";
  }
}

// Content-Security-Policy default-src 'self' would block inline code: the
// page must not need any. And data is text: no markup from strings.
TEST(DashboardAssets, NoInlineCodeAndNoMarkupFromStrings) {
  std::string html = lower(asset("index.html"));
  std::smatch m;
  std::string rest = html;
  int scripts = 0;
  while (std::regex_search(rest, m, std::regex(R"(<script([^>]*)>([\s\S]*?)</script>)"))) {
    ++scripts;
    EXPECT_NE(m[1].str().find("src="), std::string::npos) << "inline <script>";
    EXPECT_EQ(m[2].str(), "") << "inline script text";
    rest = m.suffix();
  }
  EXPECT_EQ(scripts, 1);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(\son[a-z]+\s*=)"))) << "inline handler";
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(\sstyle\s*=)"))) << "inline style";
  EXPECT_EQ(html.find("<style"), std::string::npos);

  std::string js = asset("dashboard.js");
  for (const char* needle : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                             "eval(", "new Function", "setAttribute('on", "srcdoc"})
    EXPECT_EQ(js.find(needle), std::string::npos) << "dashboard.js uses " << needle;
}

class TokenFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text, mode_t mode) {
    fs::path p = dir_ / "read.token";
    ff::test_support::write_file(p, text);
    EXPECT_EQ(::chmod(p.c_str(), mode), 0);
    return p.string();
  }
  ff::test_support::ScratchDirectory dir_{"token"};
};

TEST_F(TokenFile, LoadsTheTokenWithoutTheNewline) {
  EXPECT_EQ(load_read_token(write("0123456789abcdefXYZ\n", 0600)), "0123456789abcdefXYZ");
  EXPECT_EQ(load_read_token(write("0123456789abcdef+/=\r\n", 0640)), "0123456789abcdef+/=");
}

TEST_F(TokenFile, RefusesAFileOthersMayRead) {
  for (mode_t mode : {0644, 0604, 0602, 0666}) {
    std::string path = write("0123456789abcdefXYZ\n", mode);
    try {
      load_read_token(path);
      ADD_FAILURE() << "mode " << std::oct << mode << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("readable or writable by other users"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

TEST_F(TokenFile, RefusesUnfitTokens) {
  EXPECT_THROW(load_read_token(write("short\n", 0600)), ConfigError);
  EXPECT_THROW(load_read_token(write("\n", 0600)), ConfigError);
  EXPECT_THROW(load_read_token(write("0123456789 abcdef\n", 0600)), ConfigError);
  EXPECT_THROW(load_read_token(write("0123456789abcdef\nsecond line\n", 0600)), ConfigError);
  EXPECT_THROW(load_read_token((dir_ / "missing").string()), ConfigError);
  EXPECT_THROW(load_read_token(dir_.path().string()), ConfigError);  // a directory
}

TEST(ReadToken, BearerMatchesOnlyTheExactToken) {
  const std::string token = "0123456789abcdefXYZ";
  EXPECT_TRUE(bearer_token_matches("Bearer " + token, token));
  EXPECT_FALSE(bearer_token_matches("Bearer " + token + "x", token));
  EXPECT_FALSE(bearer_token_matches("Bearer " + token.substr(1), token));
  EXPECT_FALSE(bearer_token_matches("Bearer " + token.substr(0, token.size() - 1), token));
  EXPECT_FALSE(bearer_token_matches("Bearer 0123456789abcdefXYz", token));
  EXPECT_FALSE(bearer_token_matches("Bearer ", token));
  EXPECT_FALSE(bearer_token_matches("Basic " + token, token));
  EXPECT_FALSE(bearer_token_matches(token, token));
  EXPECT_FALSE(bearer_token_matches("Bearer ", ""));  // no token configured: nothing matches
}

TEST(ReadToken, ConfigTakesAnAbsolutePath) {
  EXPECT_EQ(ff::agent::parse_agent_config("read_token_file: /etc/firstfault/read.token\n", "t")
                .read_token_file,
            "/etc/firstfault/read.token");
  EXPECT_EQ(ff::agent::parse_agent_config("", "t").read_token_file, "");
  EXPECT_THROW(ff::agent::parse_agent_config("read_token_file: read.token\n", "t"), ConfigError);
}

}  // namespace
