// `isoharness local`: the local backend by hand.
//   doctor                      every prerequisite, with how to install what is missing
//   cleanup [--run ID | --all]  removes what a crashed run left (only runs recorded under
//                               the state directory; --all leaves runs whose owner lives)
//   up --values FILE.json ...   deploys one sandbox, prints the `ssh -J` command and the
//                               host keys, and tears everything down on SIGINT/SIGTERM
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/cli/commands.h"
#include "harness/common/error.h"
#include "harness/common/ssh_keygen.h"
#include "harness/common/subprocess.h"
#include "harness/common/text.h"
#include "harness/deploy/hawk/keyring_probe.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/ssh_client_files.h"

namespace isoharness::cli {
namespace {

namespace dl = deploy::local;
using nlohmann::json;

struct LocalArgs {
  std::string state_dir = dl::kDefaultStateRoot;
  // cleanup
  std::string run;
  bool all = false;
  bool include_live = false;
  // up
  std::string values_file;
  std::string node_class = "tier";
  std::string authorized_key_file;
  std::string identity_file;
  std::string profile_file;
  std::string run_id;
  std::string name = "manual";
  int hold_seconds = 0;
  bool json_out = false;
  std::vector<std::string> test_weakenings;  // test seam (deploy/local/weakenings.h)
};

// The hawk backend's prerequisite on this machine, beside the local ones and not counted
// with them: the keyring the hawk CLI would keep its login in.
void print_hawk_section() {
  const auto found = isoharness::deploy::hawk::hawk_keyring(
      "hawk", [](const auto& argv, const auto& o) { return run_command(argv, o); });
  std::printf("hawk backend (not needed by the local backend):\n");
  std::printf("%-4s keyring  %s%s%s\n", found.ok ? "ok" : "WARN",
              found.backend.empty() ? "" : (found.backend + ": ").c_str(), found.detail.c_str(),
              found.source.empty() ? "" : (" [from " + found.source + "]").c_str());
  if (!found.ok && found.source.empty())
    std::printf(
        "     fix: where the hawk backend runs, install the hawk CLI (uv pip install \"hawk[cli]\") "
        "and run `hawk login`\n");
  else if (!found.ok)
    std::printf(
        "     fix: give the hawk CLI a keyring backend that works without a desktop session "
        "(e.g. keyrings.alt's file backend, named with PYTHON_KEYRING_BACKEND), then run "
        "`hawk login`\n");
}

int do_doctor(const LocalArgs& a) {
  dl::LocalOptions opts;
  opts.state_root = a.state_dir;
  auto checks = dl::doctor(opts);
  std::size_t width = 0;
  for (const auto& c : checks) width = std::max(width, c.check.size());
  int missing = 0;
  for (const auto& c : checks) {
    std::printf("%-4s %-*s  %s\n", c.ok ? "ok" : "FAIL", static_cast<int>(width), c.check.c_str(),
                c.detail.c_str());
    if (!c.ok) {
      ++missing;
      std::printf("     %-*s  fix: %s\n", static_cast<int>(width), "", c.how_to_fix.c_str());
    }
  }
  std::printf("%s\n", missing ? (std::to_string(missing) + " prerequisite(s) missing").c_str()
                              : "local backend: every prerequisite is present");
  print_hawk_section();
  return missing ? kExitInfrastructure : kExitPass;
}

int do_cleanup(const LocalArgs& a) {
  if (a.all == !a.run.empty()) throw UserError("local cleanup: give exactly one of --run ID or --all");
  dl::CleanupReport r =
      a.all ? dl::cleanup_all(a.state_dir, a.include_live) : dl::cleanup_run(a.state_dir, a.run);
  for (const auto& x : r.removed) std::printf("removed %s\n", x.c_str());
  for (const auto& x : r.skipped) std::printf("left run %s alone: its owner is still running\n", x.c_str());
  for (const auto& x : r.problems) std::fprintf(stderr, "problem: %s\n", x.c_str());
  if (r.removed.empty() && r.problems.empty()) std::printf("nothing to clean up\n");
  return r.ok() ? kExitPass : kExitInfrastructure;
}

std::string read_small_file(const std::string& path, const char* what) {
  std::string text = dl::read_file_bounded(path, 4 << 20);
  if (text.empty())
    throw UserError(std::vector<Diagnostic>{{path, 0, 0, "", std::string("cannot read ") + what}});
  return text;
}

// Blocks SIGINT/SIGTERM in this thread (children get them unblocked by run_command and
// spawn_detached), so teardown runs in order instead of the process dying mid-way.
struct BlockStopSignals {
  sigset_t set{}, old{};
  BlockStopSignals() {
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old);
  }
  ~BlockStopSignals() { pthread_sigmask(SIG_SETMASK, &old, nullptr); }
  // Waits for a stop signal (or hold_seconds when > 0). Returns the signal, 0 on timeout.
  int wait(int hold_seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(hold_seconds);
    for (;;) {
      timespec ts{1, 0};
      int sig = sigtimedwait(&set, nullptr, &ts);
      if (sig > 0) return sig;
      if (hold_seconds > 0 && std::chrono::steady_clock::now() >= until) return 0;
    }
  }
  bool pending() {
    sigset_t p;
    sigpending(&p);
    return sigismember(&p, SIGINT) || sigismember(&p, SIGTERM);
  }
};

// How to log in to a sandbox `local up` made.
struct UpLogin {
  std::string command, config, known_hosts;
  double seconds = 0;  // deploy time
};

// What `local up` prints once the sandbox is up: one JSON line (--json) or lines for people.
void print_sandbox_up(const LocalArgs& a, const deploy::SandboxHandle& h, const UpLogin& up,
                      const std::string& run_id, const json& context) {
  if (a.json_out) {
    json out = {{"run_id", run_id},
                {"name", h.name},
                {"ssh_command", up.command},
                {"ssh_config", up.config},
                {"known_hosts", up.known_hosts},
                {"deploy_seconds", up.seconds},
                {"jump",
                 {{"host", h.route.jump.host},
                  {"port", h.route.jump.port},
                  {"user", h.route.jump.user},
                  {"host_key", h.route.jump.host_key}}},
                {"sandbox",
                 {{"host", h.route.sandbox.host},
                  {"port", h.route.sandbox.port},
                  {"user", h.route.sandbox.user},
                  {"host_key", h.route.sandbox.host_key}}},
                {"facts", h.facts.to_json()},
                {"context", context}};
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("sandbox %s is up in %.2f s: runtime %s, node class %s, run %s\n", h.name.c_str(), up.seconds,
                h.facts.runtime.c_str(), a.node_class.c_str(), run_id.c_str());
    std::printf("jumphost  %s@%s:%d  %s\n", h.route.jump.user.c_str(), h.route.jump.host.c_str(),
                h.route.jump.port, h.route.jump.host_key.c_str());
    std::printf("sandbox   %s@%s:%d  %s\n", h.route.sandbox.user.c_str(), h.route.sandbox.host.c_str(),
                h.route.sandbox.port, h.route.sandbox.host_key.c_str());
    std::printf("known_hosts %s\n\n  %s\n\n", up.known_hosts.c_str(), up.command.c_str());
    std::printf(
        "SIGINT (Ctrl-C) or SIGTERM tears it down%s.\n",
        a.hold_seconds > 0 ? (", or it goes after " + std::to_string(a.hold_seconds) + " s").c_str() : "");
  }
}

int do_up(const LocalArgs& a) {
  BlockStopSignals signals;
  json values = json::parse(read_small_file(a.values_file, "the sandbox values"), nullptr, false);
  if (values.is_discarded())
    throw UserError(
        std::vector<Diagnostic>{{a.values_file, 0, 0, "", "not valid JSON (docs/CONTRACTS.md §1)"}});
  json profile = a.profile_file.empty() ? dl::default_local_profile() : dl::load_profile_file(a.profile_file);

  dl::LocalOptions opts;
  opts.state_root = a.state_dir;
  opts.run_id = a.run_id;
  auto backend = dl::make_local_backend(profile, opts);
  const std::string dir = backend->paths().dir() + "/up";
  ::mkdir(dir.c_str(), 0700);

  std::string identity = a.identity_file;
  std::string key_line;
  if (!a.authorized_key_file.empty()) {
    key_line = std::string(common::trim(read_small_file(a.authorized_key_file, "the authorized key")));
  } else {
    identity = dir + "/id_ed25519";
    auto key = generate_ed25519_key(identity, "isoharness-local-up");
    if (!key) throw InfraError("generate a login key: " + key.error().message);
    key_line = *key;
  }

  deploy::SandboxRequest req;
  req.run_id = backend->run_id();
  req.name = a.name;
  req.item_id = a.values_file;
  req.values = values;
  req.node_class = a.node_class;
  req.authorized_key = key_line;
  req.test_weakenings = a.test_weakenings;
  auto t0 = std::chrono::steady_clock::now();
  deploy::SandboxHandle h = backend->deploy(req);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const std::string kh = dir + "/known_hosts", cfg = dir + "/ssh_config";
  dl::write_file(kh, dl::known_hosts_lines(h.route), 0644);
  dl::write_file(cfg, dl::ssh_client_config(kh, identity), 0644);
  std::string cmd = render_argv(dl::ssh_argv(h.route, cfg));

  print_sandbox_up(a, h, {cmd, cfg, kh, seconds}, backend->run_id(), backend->context());
  std::fflush(stdout);
  int sig = signals.wait(a.hold_seconds);
  std::fprintf(stderr, "isoharness local up: %s, tearing down run %s\n",
               sig ? (sig == SIGINT ? "SIGINT" : "SIGTERM") : "hold time over", backend->run_id().c_str());
  backend->destroy(h);
  backend.reset();
  return sig == 0 ? kExitPass : 128 + sig;
}

}  // namespace

Command local_command(CLI::App& app) {
  auto args = std::make_shared<LocalArgs>();
  CLI::App* sub = app.add_subcommand("local", "the local backend: doctor, cleanup, up");
  sub->require_subcommand(1);
  sub->add_option("--state-dir", args->state_dir, "where runs keep their state")->capture_default_str();

  CLI::App* doctor =
      sub->add_subcommand("doctor", "check every prerequisite and say how to install what is missing");
  CLI::App* cleanup = sub->add_subcommand("cleanup", "remove what a crashed run left behind");
  cleanup->add_option("--run", args->run, "the run id to remove");
  cleanup->add_flag("--all", args->all, "every recorded run whose owner is gone");
  cleanup->add_flag("--include-live", args->include_live,
                    "with --all: also runs whose owner is still running");

  CLI::App* up =
      sub->add_subcommand("up", "deploy one sandbox, print how to reach it, tear down on SIGINT/SIGTERM");
  up->add_option("--values", args->values_file, "the item's rendered sandbox values (JSON)")->required();
  up->add_option("--node-class", args->node_class, "a node class of the deployment profile")
      ->capture_default_str();
  up->add_option("--authorized-key", args->authorized_key_file,
                 "public key file to log in with (default: a new key)");
  up->add_option("--identity", args->identity_file, "private key to name in the printed ssh config");
  up->add_option("--profile", args->profile_file,
                 "deployment profile (YAML or JSON; default: built-in local profile)");
  up->add_option("--run-id", args->run_id, "run id ([a-z0-9]{1,8}; default: random)");
  up->add_option("--name", args->name, "sandbox name")->capture_default_str();
  up->add_option("--hold-seconds", args->hold_seconds,
                 "tear down after this many seconds (0: wait for a signal)");
  up->add_flag("--json", args->json_out, "print the route, host keys and facts as one JSON line");
  up->add_option("--test-weakening", args->test_weakenings,
                 "test seam: a named local weakening (e.g. sshd:no-sftp), recorded in the facts; repeatable");

  return {sub, [args, doctor, cleanup, up]() -> int {
            if (doctor->parsed()) return do_doctor(*args);
            if (cleanup->parsed()) return do_cleanup(*args);
            if (up->parsed()) return do_up(*args);
            throw UserError("local: choose doctor, cleanup or up");
          }};
}

}  // namespace isoharness::cli
