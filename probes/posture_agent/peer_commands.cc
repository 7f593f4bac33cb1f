#include "probes/posture_agent/peer_commands.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "probes/core/peer_serve.h"

namespace isoprobe {
namespace {

nlohmann::json reach_json(const std::vector<ReachOutcome>& outcomes, const std::string& nonce) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& o : outcomes)
    results.push_back({{"name", o.name},
                       {"address", o.address},
                       {"port", o.port},
                       {"result", o.result},
                       {"errno", o.err},
                       {"banner", o.banner},
                       {"started_unix_ms", o.started_unix_ms},
                       {"ended_unix_ms", o.ended_unix_ms}});
  return {{"schema", kReachSchema}, {"nonce", nonce}, {"results", results}};
}

}  // namespace

int peer_serve_main(int argc, char** argv) {
  CLI::App app{"isoprobe peer-serve: record, for a bounded window, who connects to a port",
               "isoprobe peer-serve"};
  PeerServeOptions o;
  app.add_option("--port", o.port, "TCP port (IPv4 and IPv6)")->check(CLI::Range(1, 65535));
  app.add_option("--window-ms", o.window_ms, "how long to listen")->check(CLI::Range(1000L, 3600000L));
  app.add_option("--max-connections", o.max_connections, "connections recorded")->check(CLI::Range(1, 1024));
  app.add_option("--record", o.record, "the record file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return start_peer_serve(o);
}

int peer_record_main(int argc, char** argv) {
  CLI::App app{"isoprobe peer-record: print peer-serve's record once it has looked past a time",
               "isoprobe peer-record"};
  std::string record = PeerServeOptions{}.record;
  std::int64_t after = 0;
  long wait_ms = 3000;
  app.add_option("--record", record, "the record file");
  app.add_option("--after-unix-ms", after, "wait until the server has looked at its port after this");
  app.add_option("--wait-ms", wait_ms, "how long to wait for that")->check(CLI::Range(0L, 60000L));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return print_peer_record(record, after, wait_ms);
}

int reach_main(int argc, char** argv) {
  CLI::App app{"isoprobe reach: connect to peers, send the nonce line, report what answered",
               "isoprobe reach"};
  std::vector<std::string> raw;
  std::string nonce;
  long deadline_ms = 3000;
  app.add_option("--target", raw, "NAME=ADDR:PORT (an IPv4 or [IPv6] literal), repeatable, at most 64");
  app.add_option("--nonce", nonce, "8-32 lower-case hex digits")->required();
  app.add_option("--deadline-ms", deadline_ms, "for every target together")->check(CLI::Range(100L, 60000L));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::vector<TargetSpec> targets;
  for (const auto& t : raw) {
    std::string error;
    auto spec = parse_target_spec(t, &error);
    if (!spec || spec->proto != TargetProto::tcp || (!spec->ipv4 && !spec->ipv6)) {
      std::fprintf(stderr, "isoprobe reach: --target %s: %s\n", t.c_str(),
                   error.empty() ? "a tcp target with a literal address" : error.c_str());
      return 2;
    }
    targets.push_back(std::move(*spec));
  }
  if (!is_valid_nonce(nonce) || targets.size() > 64) {
    std::fprintf(stderr, "isoprobe reach: --nonce must be 8-32 lower-case hex digits, at most 64 targets\n");
    return 2;
  }
  std::printf("%s\n", reach_json(run_reach(targets, nonce, deadline_ms), nonce).dump().c_str());
  return 0;
}

}  // namespace isoprobe
