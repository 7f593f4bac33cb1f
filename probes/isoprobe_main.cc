// isoprobe: the in-sandbox posture agent. `posture` prints one JSON document,
// `bench` runs the timing workloads (probes/workloads), `version` prints the version.
// Exit codes: 0 output printed; 2 bad usage; 3 isoprobe itself is broken.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "probes/core/listener.h"
#include "probes/core/posture_runner.h"
#include "probes/core/registry.h"
#include "workloads/bench.h"

namespace {

constexpr const char* kUsage =
    "usage: isoprobe posture [--target NAME=HOST:PORT[/tcp|/dns|/http]]... [--resolver IP[:PORT]]\n"
    "                        [--deadline-ms N] [--egress-deadline-ms N] [--compact]\n"
    "       isoprobe bench [--benchmark_* flags]\n"
    "       isoprobe serve [--port P] [--name NAME] [--max-seconds N]\n"
    "       isoprobe version\n";

int posture_main(int argc, char** argv) {
  CLI::App app{"isoprobe posture: observe this sandbox's isolation and print it as JSON", "isoprobe posture"};
  std::vector<std::string> targets;
  std::string resolver;
  long deadline_ms = 10000;
  long egress_deadline_ms = 3000;
  bool compact = false;
  app.add_option("--target", targets, "NAME=HOST:PORT[/tcp|/dns|/http], repeatable");
  app.add_option("--resolver", resolver, "IPv4[:PORT] of the DNS resolver (default: /etc/resolv.conf)");
  app.add_option("--deadline-ms", deadline_ms, "deadline for the whole run")
      ->check(CLI::Range(100L, 600000L));
  app.add_option("--egress-deadline-ms", egress_deadline_ms, "deadline for all egress checks together")
      ->check(CLI::Range(10L, 600000L));
  app.add_flag("--compact", compact, "one line of JSON instead of indented");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  isoprobe::PostureOptions options;
  std::vector<std::string> errors;
  for (const auto& t : targets) {
    std::string error;
    if (auto spec = isoprobe::parse_target_spec(t, &error))
      options.targets.push_back(std::move(*spec));
    else
      errors.push_back(error);
  }
  if (!resolver.empty()) {
    std::string error;
    options.resolver = isoprobe::parse_resolver_spec(resolver, &error);
    if (!options.resolver) errors.push_back(error);
  }
  if (!errors.empty()) {
    for (const auto& e : errors) std::fprintf(stderr, "isoprobe posture: %s\n", e.c_str());
    return 2;
  }
  options.deadline = std::chrono::milliseconds(deadline_ms);
  options.egress_deadline = std::chrono::milliseconds(egress_deadline_ms);

  isoprobe::PostureRun run = isoprobe::run_posture(options, isoprobe::all_probes());
  std::string text =
      run.document.dump(compact ? -1 : 2, ' ', false, nlohmann::json::error_handler_t::replace);
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  // A probe that overran still runs on a detached thread: leave without destructors.
  if (run.abandoned > 0) ::_exit(0);
  return 0;
}

int serve_main(int argc, char** argv) {
  CLI::App app{"isoprobe serve: answer every TCP connection with one line naming this service",
               "isoprobe serve"};
  isoprobe::ServeOptions options;
  app.add_option("--port", options.port, "TCP port on every address")->check(CLI::Range(1, 65535));
  app.add_option("--name", options.name, "the name in the line each connection gets");
  app.add_option("--max-seconds", options.max_seconds, "stop serving after this long")
      ->check(CLI::Range(1L, 86400L));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!isoprobe::valid_serve_name(options.name)) {
    std::fprintf(stderr, "isoprobe serve: --name must be 1-63 of [A-Za-z0-9._-]\n");
    return 2;
  }
  return isoprobe::run_serve(options);
}

}  // namespace

int main(int argc, char** argv) {
  auto problems = isoprobe::check_registry(isoprobe::all_probes());
  if (!problems.empty()) {
    for (const auto& p : problems) std::fprintf(stderr, "isoprobe: broken probe registry: %s\n", p.c_str());
    return 3;
  }
  if (argc >= 2 && std::strcmp(argv[1], "version") == 0) {
    std::printf("isoprobe %s (%s)\n", isoprobe::isoprobe_version().c_str(),
                isoprobe::isoprobe_git_revision().c_str());
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "bench") == 0) return isoprobe::run_bench(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "posture") == 0) return posture_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "serve") == 0) return serve_main(argc - 1, argv + 1);
  std::fputs(kUsage, stderr);
  return 2;
}
