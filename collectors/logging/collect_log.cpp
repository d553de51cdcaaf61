#include "collectors/logging/collect_log.h"

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <vector>

namespace ff::collect {

void setup_logging(const std::filesystem::path& log_dir) {
  std::vector<spdlog::sink_ptr> sinks;
  if (::isatty(STDERR_FILENO))
    sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  std::string file_error;
  try {
    std::filesystem::create_directories(log_dir);
    sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
        (log_dir / "collect.log").string(), 4 << 20, 3));
  } catch (const std::exception& e) {
    file_error = e.what();
  }
  auto logger = std::make_shared<spdlog::logger>("collect", sinks.begin(), sinks.end());
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%P] %v");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  if (!file_error.empty()) spdlog::warn("no log file: {}", file_error);
}

}  // namespace ff::collect
