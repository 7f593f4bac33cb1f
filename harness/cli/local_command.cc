// `isoharness local`: the local backend by hand.
//   doctor                      every prerequisite, with how to install what is missing
//   cleanup [--run ID | --all]  removes what a crashed run left (only runs recorded under
//                               the state directory; --all leaves runs whose owner lives)
//   up --values FILE.json ...   deploys one sandbox (or one per --values, in one world),
//                               prints the `ssh -J` command and the host keys, and tears
//                               everything down on SIGINT/SIGTERM
//   up --serve                  also holds the world open for other `local up --join RUN_ID`
//                               (local_up_world.h): every sandbox on one network
//   up --join RUN_ID --values F adds one sandbox to that world; it goes on SIGINT/SIGTERM
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <tuple>

#include "harness/cli/commands.h"
#include "harness/cli/local_up_world.h"
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
  std::vector<std::string> values_files;
  bool serve = false;
  std::string join;                       // a run id whose owner serves joins
  std::string platform_ingress = "none";  // nft_rules.h PlatformIngress
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
  // Waits for a stop signal (or hold_seconds when > 0), calling tick every 200 ms when
  // given. Returns the signal, 0 on timeout.
  int wait(int hold_seconds, const std::function<void()>& tick = {}) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(hold_seconds);
    for (;;) {
      const int sig = poll(tick ? 200 : 1000);
      if (sig > 0) return sig;
      if (tick) tick();
      if (hold_seconds > 0 && std::chrono::steady_clock::now() >= until) return 0;
    }
  }
  // A stop signal within ms, else 0.
  int poll(int ms) {
    timespec ts{ms / 1000, static_cast<long>(ms % 1000) * 1000000L};
    const int sig = sigtimedwait(&set, nullptr, &ts);
    return sig > 0 ? sig : 0;
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

// The line `local up --json` prints for a sandbox (and a world's owner answers a join with).
json up_json(const deploy::SandboxHandle& h, const UpLogin& up, const std::string& run_id,
             const json& context) {
  return {{"run_id", run_id},
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
}

// What `local up` prints once the sandbox is up: one JSON line (--json) or lines for people.
void print_sandbox_up(const LocalArgs& a, const deploy::SandboxHandle& h, const UpLogin& up,
                      const std::string& run_id, const json& context) {
  if (a.json_out) {
    std::printf("%s\n", up_json(h, up, run_id, context).dump().c_str());
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

// The login key of `local up`: the given public key, or a new key pair in dir.
std::pair<std::string, std::string> up_login_key(const LocalArgs& a, const std::string& dir) {
  if (!a.authorized_key_file.empty())
    return {a.identity_file,
            std::string(common::trim(read_small_file(a.authorized_key_file, "the authorized key")))};
  const std::string identity = dir + "/id_ed25519";
  auto key = generate_ed25519_key(identity, "isoharness-local-up");
  if (!key) throw InfraError("generate a login key: " + key.error().message);
  return {identity, *key};
}

json read_values(const std::string& path) {
  json values = json::parse(read_small_file(path, "the sandbox values"), nullptr, false);
  if (values.is_discarded())
    throw UserError(std::vector<Diagnostic>{{path, 0, 0, "", "not valid JSON (docs/CONTRACTS.md §1)"}});
  return values;
}

// Writes the sandbox's known_hosts and ssh config under `prefix` and says how to log in.
UpLogin login_files(const deploy::SandboxHandle& h, const std::string& prefix, const std::string& identity,
                    double seconds) {
  const std::string kh = prefix + "known_hosts", cfg = prefix + "ssh_config";
  dl::write_file(kh, dl::known_hosts_lines(h.route), 0644);
  dl::write_file(cfg, dl::ssh_client_config(kh, identity), 0644);
  return {render_argv(dl::ssh_argv(h.route, cfg)), cfg, kh, seconds};
}

// Where `check` of the sandbox finds which run and containers it is (deploy/local/up_record.h).
void record_up(const dl::LocalBackend& backend, const deploy::SandboxHandle& h) {
  dl::write_up_record(backend.paths(), {backend.run_id(),
                                        h.name,
                                        h.route,
                                        backend.containers(h),
                                        {h.facts.address, h.facts.address6, h.facts.egress_index}});
}

// `local up --join RUN_ID`: one sandbox in the world another `local up --serve` owns.
int do_join(const LocalArgs& a, BlockStopSignals& signals) {
  if (a.values_files.size() != 1) throw UserError("local up --join: give exactly one --values FILE");
  if (!dl::valid_run_id(a.join))
    throw UserError("local up --join: '" + a.join + "' is not a run id ([a-z0-9]{1,8})");
  const std::string spool = local_up::spool_dir(a.state_dir, a.join);
  local_up::JoinRequest r;
  r.name = a.name;
  r.node_class = a.node_class;
  r.values = read_values(a.values_files[0]);
  r.test_weakenings = a.test_weakenings;
  r.pid = ::getpid();
  const std::string key_dir = spool + "/" + a.name + "-key";
  if (a.authorized_key_file.empty()) ::mkdir(key_dir.c_str(), 0700);
  std::tie(r.identity, r.authorized_key) = up_login_key(a, key_dir);
  return local_up::join_world(
      spool, r, a.json_out, [&](int ms) { return signals.poll(ms); }, a.hold_seconds);
}

// A world's owner under --serve: the line that says joins are served, and where.
void print_serving(const LocalArgs& a, const dl::LocalBackend& backend, const std::string& spool) {
  const auto jump = backend.jump_endpoint();
  if (a.json_out)
    std::printf("%s\n",
                json{{"run_id", backend.run_id()},
                     {"serving", true},
                     {"spool", spool},
                     {"jump", {{"host", jump.host}, {"port", jump.port}, {"host_key", jump.host_key}}},
                     {"context", backend.context()}}
                    .dump()
                    .c_str());
  else
    std::printf("world of run %s serves joins: isoharness local up --join %s --values FILE\n",
                backend.run_id().c_str(), backend.run_id().c_str());
  std::fflush(stdout);
}

// The request for the i-th of the --values files of one `local up`.
deploy::SandboxRequest up_request(const LocalArgs& a, const std::string& run_id,
                                  const std::vector<json>& values, std::size_t i,
                                  const std::string& key_line) {
  deploy::SandboxRequest req;
  req.run_id = run_id;
  req.name = values.size() == 1 ? a.name : a.name + "-" + std::to_string(i + 1);
  req.item_id = a.values_files[i];
  req.values = values[i];
  req.node_class = a.node_class;
  req.authorized_key = key_line;
  req.test_weakenings = a.test_weakenings;
  return req;
}

int do_up(const LocalArgs& a) {
  BlockStopSignals signals;
  if (!a.join.empty()) return do_join(a, signals);
  if (a.values_files.empty() && !a.serve)
    throw UserError("local up: give --values FILE (repeatable), or --serve");
  const auto ingress = dl::parse_platform_ingress(a.platform_ingress);
  if (!ingress)
    throw UserError("local up: --platform-ingress must be none, tcp-2222-from-all or allow-all, not '" +
                    a.platform_ingress + "'");
  std::vector<json> values;
  for (const auto& f : a.values_files) values.push_back(read_values(f));
  json profile = a.profile_file.empty() ? dl::default_local_profile() : dl::load_profile_file(a.profile_file);

  dl::LocalOptions opts;
  opts.state_root = a.state_dir;
  opts.run_id = a.run_id;
  opts.platform_ingress = *ingress;
  auto backend = dl::make_local_backend(profile, opts);
  const std::string dir = backend->paths().dir() + "/up";
  ::mkdir(dir.c_str(), 0700);
  const auto [identity, key_line] = up_login_key(a, dir);

  std::vector<deploy::SandboxHandle> handles;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const deploy::SandboxRequest req = up_request(a, backend->run_id(), values, i, key_line);
    auto t0 = std::chrono::steady_clock::now();
    handles.push_back(backend->deploy(req));
    record_up(*backend, handles.back());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string prefix = values.size() == 1 ? dir + "/" : dir + "/" + req.name + ".";
    print_sandbox_up(a, handles.back(), login_files(handles.back(), prefix, identity, seconds),
                     backend->run_id(), backend->context());
  }
  std::fflush(stdout);
  std::optional<local_up::JoinServer> server;
  if (a.serve) {
    const std::string spool = local_up::spool_dir(a.state_dir, backend->run_id());
    server.emplace(*backend, spool,
                   [&, spool](const deploy::SandboxHandle& h, const local_up::JoinRequest& r, double s) {
                     record_up(*backend, h);
                     return up_json(h, login_files(h, spool + "/" + r.name + ".", r.identity, s),
                                    backend->run_id(), backend->context());
                   });
    print_serving(a, *backend, spool);
  }
  int sig = signals.wait(a.hold_seconds, server ? std::function<void()>([&] { server->tick(); }) : nullptr);
  std::fprintf(stderr, "isoharness local up: %s, tearing down run %s\n",
               sig ? (sig == SIGINT ? "SIGINT" : "SIGTERM") : "hold time over", backend->run_id().c_str());
  server.reset();
  for (const auto& h : handles) {
    dl::remove_up_record(backend->paths(), h.name);
    backend->destroy(h);
  }
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

  CLI::App* up = sub->add_subcommand(
      "up", "deploy sandboxes in one world, print how to reach them, tear down on SIGINT/SIGTERM");
  up->add_option("--values", args->values_files,
                 "the item's rendered sandbox values (JSON); repeatable: one sandbox each, in one world");
  up->add_flag("--serve", args->serve,
               "hold the world open for `local up --join RUN_ID` (every joined sandbox on one network)");
  up->add_option("--join", args->join, "add one sandbox to the world of this run (its owner runs --serve)");
  up->add_option(
        "--platform-ingress", args->platform_ingress,
        "a stand-in platform's ingress rule over every sandbox: none, tcp-2222-from-all "
        "(fromEntities [all] on the sshd port) or allow-all (an ingress 'deny' written `ingress: - {}`)")
      ->capture_default_str();
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
