#include "harness/common/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <memory>
#include <mutex>

#include "harness/common/error.h"

namespace isoharness::log {
namespace {

struct State {
  std::shared_ptr<spdlog::sinks::stderr_sink_mt> stderr_sink =
      std::make_shared<spdlog::sinks::stderr_sink_mt>();
  std::shared_ptr<spdlog::sinks::dist_sink_mt> sinks = std::make_shared<spdlog::sinks::dist_sink_mt>();
  std::shared_ptr<spdlog::sinks::sink> file_sink;
  std::shared_ptr<spdlog::logger> logger;
  std::mutex mutex;

  State() {
    stderr_sink->set_level(spdlog::level::warn);
    stderr_sink->set_pattern("isoharness: %l: %v");
    sinks->add_sink(stderr_sink);
    logger = std::make_shared<spdlog::logger>("isoharness", sinks);
    logger->set_level(spdlog::level::debug);  // the file takes debug; stderr filters itself
    logger->flush_on(spdlog::level::debug);
  }
};

State& state() {
  static State s;
  return s;
}

}  // namespace

void configure(const std::string& level) {
  std::string wanted = level;
  const char* from = "--log-level";
  if (wanted.empty()) {
    const char* env = std::getenv("ISOHARNESS_LOG");
    wanted = env ? env : "warn";
    from = "ISOHARNESS_LOG";
  }
  const auto parsed = spdlog::level::from_str(wanted);
  // from_str answers "off" for anything it does not know: only "off" itself means off.
  if (parsed == spdlog::level::off && wanted != "off")
    throw UserError(std::string(from) + ": unknown log level '" + wanted +
                    "' (trace, debug, info, warn, error, off)");
  auto& s = state();
  s.stderr_sink->set_level(parsed);
  s.logger->set_level(std::min(parsed, spdlog::level::debug));
}

void write_to_directory(const std::string& dir) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (s.file_sink) s.sinks->remove_sink(s.file_sink);
  try {
    s.file_sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(dir + "/isoharness.log");
  } catch (const spdlog::spdlog_ex& e) {
    throw InfraError("cannot write the diagnostic log in " + dir + ": " + e.what());
  }
  s.file_sink->set_level(spdlog::level::debug);
  s.file_sink->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  s.sinks->add_sink(s.file_sink);
}

spdlog::logger& get() {
  return *state().logger;
}

}  // namespace isoharness::log
