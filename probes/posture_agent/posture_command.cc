#include "probes/posture_agent/posture_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "probes/core/posture_runner.h"
#include "probes/core/registry.h"
#include "probes/core/sha256.h"
#include "probes/posture_agent/peer_commands.h"

namespace isoprobe {
namespace {

// What the harness compares with the file it uploaded: it skips reading the agent back
// over SSH (harness/transport, UploadCheck::size) and checks this digest instead.
nlohmann::json verified_file(const std::string& path) {
  constexpr std::uint64_t kMaxBytes = std::uint64_t{512} << 20;  // the harness's upload cap
  std::string error;
  auto digest = sha256_file(path, kMaxBytes, &error);
  if (!digest) return {{"path", path}, {"error", error}};
  return {{"path", path}, {"bytes", digest->bytes}, {"sha256", digest->sha256}};
}

// The targets, resolver and nonce given on the command line, into options; every problem.
std::vector<std::string> read_specs(const std::vector<std::string>& targets, const std::string& resolver,
                                    const std::string& nonce, PostureOptions& options) {
  std::vector<std::string> errors;
  for (const auto& t : targets) {
    std::string error;
    if (auto spec = parse_target_spec(t, &error))
      options.targets.push_back(std::move(*spec));
    else
      errors.push_back(error);
  }
  if (!resolver.empty()) {
    std::string error;
    options.resolver = parse_resolver_spec(resolver, &error);
    if (!options.resolver) errors.push_back(error);
  }
  if (!nonce.empty() && !is_valid_nonce(nonce)) errors.push_back("--nonce: 8-32 lower-case hex digits");
  options.nonce = nonce;
  return errors;
}

// `--blocked NAME`: the named targets get their own, shorter deadline. Every problem.
std::vector<std::string> apply_blocked(const std::vector<std::string>& blocked, long blocked_deadline_ms,
                                       PostureOptions& options) {
  std::vector<std::string> errors;
  if (!blocked.empty() && blocked_deadline_ms <= 0) errors.push_back("--blocked needs --blocked-deadline-ms");
  for (const auto& name : blocked) {
    auto it = std::find_if(options.targets.begin(), options.targets.end(),
                           [&name](const TargetSpec& t) { return t.name == name; });
    if (it == options.targets.end())
      errors.push_back("--blocked " + name + ": no --target of that name");
    else if (blocked_deadline_ms > 0)
      it->deadline = std::chrono::milliseconds(blocked_deadline_ms);
  }
  return errors;
}

}  // namespace

int posture_main(int argc, char** argv) {
  CLI::App app{"isoprobe posture: observe this sandbox's isolation and print it as JSON", "isoprobe posture"};
  std::vector<std::string> targets;
  std::string resolver;
  long deadline_ms = 10000;
  long egress_deadline_ms = 3000;
  bool compact = false;
  std::string verify_file;
  app.add_option("--target", targets, "NAME=HOST:PORT[/tcp|/dns|/http|/udp|/icmp|/exfil], repeatable");
  app.add_option("--resolver", resolver, "IPv4[:PORT] of the DNS resolver (default: /etc/resolv.conf)");
  app.add_option("--deadline-ms", deadline_ms, "deadline for the whole run")
      ->check(CLI::Range(100L, 600000L));
  app.add_option("--egress-deadline-ms", egress_deadline_ms, "deadline for all egress checks together")
      ->check(CLI::Range(10L, 600000L));
  std::vector<std::string> blocked;
  long blocked_deadline_ms = 0;
  app.add_option("--blocked", blocked,
                 "NAME of a --target the harness expects to be stopped: it gets --blocked-deadline-ms, "
                 "repeatable");
  app.add_option("--blocked-deadline-ms", blocked_deadline_ms,
                 "deadline of each --blocked target, from its start (capped by --egress-deadline-ms)")
      ->check(CLI::Range(10L, 600000L));
  std::string nonce;
  app.add_option("--nonce", nonce,
                 "8-32 lower-case hex digits the udp, icmp and exfil targets carry, for an outside witness");
  app.add_flag("--compact", compact, "one line of JSON instead of indented");
  app.add_option("--verify-file", verify_file,
                 "also report the size and SHA-256 of this file (the harness names the agent it uploaded)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  PostureOptions options;
  std::vector<std::string> errors = read_specs(targets, resolver, nonce, options);
  for (auto& e : apply_blocked(blocked, blocked_deadline_ms, options)) errors.push_back(std::move(e));
  if (!errors.empty()) {
    for (const auto& e : errors) std::fprintf(stderr, "isoprobe posture: %s\n", e.c_str());
    return 2;
  }
  options.deadline = std::chrono::milliseconds(deadline_ms);
  options.egress_deadline = std::chrono::milliseconds(egress_deadline_ms);

  // The digest is taken while the probes run (they mostly wait on egress deadlines).
  std::future<nlohmann::json> digest;
  if (!verify_file.empty()) digest = std::async(std::launch::async, verified_file, verify_file);
  PostureRun run = run_posture(options, all_probes());
  if (digest.valid()) run.document["context"]["verified_file"] = digest.get();
  std::string text =
      run.document.dump(compact ? -1 : 2, ' ', false, nlohmann::json::error_handler_t::replace);
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  // A probe that overran still runs on a detached thread: leave without destructors.
  if (run.abandoned > 0) ::_exit(0);
  return 0;
}

std::optional<int> run_shared_command(int argc, char** argv) {
  auto problems = check_registry(all_probes());
  if (!problems.empty()) {
    for (const auto& p : problems) std::fprintf(stderr, "isoprobe: broken probe registry: %s\n", p.c_str());
    return 3;
  }
  if (argc >= 2 && std::strcmp(argv[1], "version") == 0) {
    std::printf("isoprobe %s (%s)\n", isoprobe_version().c_str(), isoprobe_git_revision().c_str());
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "posture") == 0) return posture_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "peer-serve") == 0) return peer_serve_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "peer-record") == 0) return peer_record_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "reach") == 0) return reach_main(argc - 1, argv + 1);
  return std::nullopt;
}

}  // namespace isoprobe
