// isoprobe: the in-sandbox posture agent. `posture` prints one JSON document,
// `bench` runs the timing workloads (probes/workloads), `serve` answers TCP connections
// (the listener of a sibling service), `version` prints the version.
// Exit codes: 0 output printed; 2 bad usage; 3 isoprobe itself is broken.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>

#include "probes/core/listener.h"
#include "probes/posture_agent/peer_commands.h"
#include "probes/posture_agent/posture_command.h"
#include "workloads/bench.h"

namespace {

constexpr const char* kUsage =
    "       isoprobe bench [--benchmark_* flags]\n"
    "       isoprobe serve [--port P] [--name NAME] [--max-seconds N]\n"
    "       isoprobe version\n";

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
  if (auto rc = isoprobe::run_shared_command(argc, argv)) return *rc;
  if (argc >= 2 && std::strcmp(argv[1], "bench") == 0) return isoprobe::run_bench(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "serve") == 0) return serve_main(argc - 1, argv + 1);
  std::fputs(isoprobe::kPostureUsage, stderr);
  std::fputs(isoprobe::kPeerUsage, stderr);
  std::fputs(kUsage, stderr);
  return 2;
}
