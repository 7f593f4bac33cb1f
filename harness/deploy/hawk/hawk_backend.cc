#include "harness/deploy/hawk/hawk_backend.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

#include "harness/common/error.h"
#include "harness/deploy/deploy_failed.h"
#include "harness/deploy/hawk/one_item_config.h"
#include "harness/deploy/hawk/platform_text.h"
#include "harness/policy/chart_values.h"
#include "harness/scenario/backend_kind.h"
#include "harness/transport/host_key.h"
#include "harness/transport/ssh_line.h"

namespace isoharness::deploy::hawk {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string read_bounded(const std::string& path, std::size_t max) {
  std::ifstream in(path, std::ios::binary);
  std::string text(max, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max));
  text.resize(in ? max : static_cast<std::size_t>(in.gcount()));
  return text;
}

// Under `pinned`, the sandbox's key must be listed in the known_hosts file the ssh line names.
std::string pinned_sandbox_key(const transport::SshLine& line) {
  const auto& sb = line.route.sandbox;
  if (line.known_hosts.empty())
    throw InfraError(
        "hawk.sandbox_host_keys is pinned, but the ssh-command line names no UserKnownHostsFile "
        "holding the sandbox's key");
  auto keys = transport::known_hosts_keys(read_bounded(transport::expand_home(line.known_hosts), 1 << 20),
                                          line.known_hosts, sb.host, sb.port);
  if (!keys || keys->empty() || keys->front().revoked)
    throw InfraError(fmt::format("hawk.sandbox_host_keys is pinned, but {} holds no key for {}:{}{}",
                                 line.known_hosts, sb.host, sb.port,
                                 keys ? "" : ": " + keys.error().message));
  return keys->front().line();
}

std::vector<SandboxFacts> sibling_facts(const nlohmann::json& values,
                                        const std::optional<EvalStatus>& status) {
  std::vector<SandboxFacts> out;
  if (!status) return out;
  const auto running = running_services(*status);
  for (const auto& service : policy::sibling_services(values))
    if (std::find(running.begin(), running.end(), service) != running.end())
      out.push_back(sibling_by_name(service, "hawk status"));
  return out;
}

// The node's runtime cannot be seen from inside the sandbox: the profile declares it
// (node_image:), for runtime_version.
void add_node_image_fact(const scenario::DeploymentProfile& profile, SandboxFacts& facts) {
  if (!profile.node_image) return;
  const auto& n = *profile.node_image;
  facts.node_image = NodeImageFacts{n.name,
                                    n.runc_version,
                                    n.runc_package,
                                    n.containerd_version,
                                    n.containerd_package,
                                    n.crun_version,
                                    n.crun_package,
                                    n.runsc_version,
                                    n.runsc_package,
                                    n.nvidia_container_toolkit_version,
                                    n.nvidia_container_toolkit_package};
}

// A CLI that waits for a person stops everything at once: no later call can do better.
void throw_if_needs_login(const Error& e) {
  if (e.code == kNeedsLogin) throw RunStoppingError(e.message);
}

// What `hawk status` says of a started sandbox: which sibling services run, and the node
// its pod is on where the status names one.
void add_status_facts(const HawkCli& cli, const std::string& id, const nlohmann::json& values,
                      SandboxFacts& facts) {
  auto status = cli.status(id);
  if (!status) throw_if_needs_login(status.error());
  if (status) facts.node_name = sandbox_node_name(*status);
  if (const Pod* pod = status ? agent_sandbox_pod(*status) : nullptr)
    facts.sandbox_pod = PodRef{pod->name, pod->namespace_};
  facts.siblings = sibling_facts(values, status ? std::optional<EvalStatus>(*status) : std::nullopt);
}

// The end of `hawk logs ID`, framed and marked as the platform's words, for the error of a
// sandbox that failed to start; a failing `hawk logs` says so in one line instead.
std::string platform_log_tail(const HawkCli& cli, const std::string& id) {
  auto logs = cli.logs(id);
  if (!logs) return fmt::format("\n(hawk logs {} gave nothing: {})", id, logs.error().message);
  const std::string tail = platform_tail(*logs);
  if (tail.empty()) return fmt::format("\n(hawk logs {} printed nothing)", id);
  return fmt::format(
      "\n--- platform output: the end of `hawk logs {}` (at most {} lines and {} bytes; bytes outside "
      "printable ASCII shown as '?') ---\n{}\n--- end of platform output ---",
      id, kLogTailLines, kLogTailBytes, tail);
}

}  // namespace

HawkBackend::HawkBackend(scenario::DeploymentProfile profile, HawkOptions options)
    : profile_(std::move(profile)), options_(std::move(options)) {
  ISOHARNESS_CHECK(profile_.hawk.has_value());
  settings_ = *profile_.hawk;
  if (!options_.runner)
    options_.runner = [](const auto& argv, const auto& o) { return run_command(argv, o); };
  ::mkdir(options_.work_dir.c_str(), 0700);
}

HawkBackend::~HawkBackend() {
  std::set<std::pair<std::string, std::string>> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(live_);
  }
  for (const auto& [id, node_class] : left) remove(cli_for(node_class), id);
}

HawkCli HawkBackend::cli_for(const std::string& node_class) const {
  const auto* nc = profile_.node_class(node_class);
  return HawkCli(settings_.cli, nc ? nc->env : Env{}, options_.runner);
}

void HawkBackend::require_login(const std::string& node_class, const HawkCli& cli) {
  std::lock_guard lock(login_mutex_);
  auto it = login_checked_.find(node_class);
  if (it == login_checked_.end()) {
    auto check = cli.check_login();
    std::string why = check ? "" : check.error().message;
    if (check && *check == LoginCheck::no_such_command)
      std::fprintf(stderr,
                   "hawk: %s has no `auth access-token` command, so its login cannot be checked before "
                   "the first start; a call that starts a login is stopped instead\n",
                   settings_.cli.c_str());
    it = login_checked_.emplace(node_class, std::move(why)).first;
  }
  if (!it->second.empty()) throw RunStoppingError("the login pre-flight failed: " + it->second);
}

std::string HawkBackend::write_config(const SandboxRequest& request) const {
  const auto* nc = profile_.node_class(request.node_class);
  nlohmann::json config = one_item_config(request.eval_set,
                                          {request.task_index, request.item_index, request.add_runtime_class,
                                           settings_.human_agent ? &*settings_.human_agent : nullptr},
                                          nc ? nc->config_overrides : nlohmann::json::object());
  if (nc)
    if (auto placement = sandbox_placement(nc->node_selector, nc->tolerations); !placement.is_null())
      config[scenario::kSandboxPlacementKey] = std::move(placement);
  // JSON is YAML: every string stays quoted, so no YAML reader turns "no" into false.
  std::string path = options_.work_dir + "/" + options_.run_id + "-" + request.name + ".yaml";
  std::ofstream out(path, std::ios::trunc);
  out << config.dump(2) << "\n";
  if (!out) throw InfraError("cannot write the eval-set config " + path);
  return path;
}

void HawkBackend::pause_between_tries(std::chrono::milliseconds pause) const {
  if (options_.pause) return options_.pause(pause);
  const auto until = Clock::now() + pause;
  while (Clock::now() < until) {
    if (options_.interrupted && options_.interrupted->load())
      throw InfraError("interrupted while waiting to start");
    std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), 200ms));
  }
}

// `human eval start`, tried again as start_retry.h says: the quota is back-pressure, other
// failures are tried a bounded number of times, a login prompt stops the run.
Started HawkBackend::start_eval(const HawkCli& cli, const std::string& config, const std::string& name,
                                StartTally& tally) const {
  thread_local std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  const auto began = Clock::now();
  for (;;) {
    ++tally.tries;
    auto started = cli.start(config, settings_.human, settings_.start_args);
    if (started) return *started;
    const Error& e = started.error();
    if (e.code == kNeedsLogin) throw RunStoppingError(e.message);
    const StartFailure kind = classify_start_failure(e);
    std::chrono::milliseconds pause{0};
    if (kind == StartFailure::quota) {
      if (seconds_since(began) >= settings_.quota_wait_s)
        throw InfraError(
            fmt::format("the platform's live-eval quota kept refusing the start for {:.0f} s "
                        "(hawk.quota_wait_s, {} tries): {}",
                        seconds_since(began), tally.tries, e.message));
      pause = retry_pause(std::min(++tally.quota_waits, 5), options_.retry_base, jitter(rng));
    } else if (kind == StartFailure::final || tally.other_retries >= settings_.start_retries) {
      throw InfraError(fmt::format("the platform did not start the eval ({} tr{}): {}", tally.tries,
                                   tally.tries == 1 ? "y" : "ies", e.message));
    } else {
      pause = retry_pause(++tally.other_retries, options_.retry_base, jitter(rng));
    }
    std::fprintf(stderr, "hawk: %s: %s; trying again in %.1f s\n", name.c_str(),
                 kind == StartFailure::quota ? "the platform's live-eval quota is full" : e.message.c_str(),
                 static_cast<double>(pause.count()) / 1000.0);
    pause_between_tries(pause);
    tally.waited_s += static_cast<double>(pause.count()) / 1000.0;
  }
}

namespace {

// How long a sandbox pod has been held for one reason, across status rounds: the reason's
// first sighting is its clock, reset when the reason changes or goes.
class StuckClock {
 public:
  explicit StuckClock(const scenario::HawkSettings& s) : settings_(s) {}

  // The item's error when the pod has been held past its reason's bound, else "".
  std::string judge(const Stuck& stuck) {
    if (stuck.reason != reason_) {
      reason_ = stuck.reason;
      since_ = Clock::now();
    }
    const double held = seconds_since(since_);
    switch (stuck.reason) {
      case StuckReason::none:
        return "";
      case StuckReason::crash_loop:
        if (stuck.restarts < settings_.crash_loop_restarts) return "";
        return fmt::format("after {} restarts (hawk.crash_loop_restarts {})", stuck.restarts,
                           settings_.crash_loop_restarts);
      case StuckReason::unschedulable:
        if (held < settings_.unschedulable_grace_s) return "";
        return fmt::format("for {:.0f} s (hawk.unschedulable_grace_s {})", held,
                           settings_.unschedulable_grace_s);
      case StuckReason::image_pull:
      case StuckReason::config_error:
        if (held < settings_.stuck_grace_s) return "";
        return fmt::format("for {:.0f} s (hawk.stuck_grace_s {})", held, settings_.stuck_grace_s);
    }
    return "";
  }
  double held_s() const { return reason_ == StuckReason::none ? 0.0 : seconds_since(since_); }
  // Seconds until the current reason's bound passes (none for no reason, or a crash loop,
  // whose bound is its restarts): the next round waits no longer than this.
  std::optional<double> left() const {
    if (reason_ == StuckReason::unschedulable) return settings_.unschedulable_grace_s - held_s();
    if (reason_ == StuckReason::image_pull || reason_ == StuckReason::config_error)
      return settings_.stuck_grace_s - held_s();
    return std::nullopt;
  }

 private:
  const scenario::HawkSettings& settings_;
  StuckReason reason_ = StuckReason::none;
  Clock::time_point since_ = Clock::now();
};

// The wait for one sandbox: when it began, the stuck clock, what status said last.
struct WaitState {
  StuckClock clock;
  Clock::time_point began = Clock::now();
  std::optional<EvalStatus> last_status;
  std::string last_status_note;  // why the last status round gave no pods

  // For the item's record: how long the platform held it, and how long in its stuck state.
  nlohmann::json timings() const {
    return {{"hawk_held_s", seconds_since(began)}, {"hawk_stuck_s", clock.held_s()}};
  }
};

// What one `hawk status` round says of a sandbox not yet answering: nothing (keep waiting),
// or throws the item's error (a Failed pod, a pod held past its bound). A 404 before the
// first pod exists is "not yet".
void judge_status(const HawkCli& cli, const std::string& id, WaitState& w) {
  auto st = cli.status(id);
  if (!st) {
    throw_if_needs_login(st.error());
    w.last_status_note = is_job_not_found(st.error().message)
                             ? "hawk status: the platform has no pod for it yet (Job not found)"
                             : st.error().message;
    return;
  }
  w.last_status = *st;
  w.last_status_note.clear();
  for (const auto& p : st->pods)
    if (p.component == "sandbox" && p.phase == "Failed")
      throw DeployFailed(fmt::format("eval {}: the sandbox pod failed: {}{}", id, describe_sandbox_pods(*st),
                                     platform_log_tail(cli, id)),
                         w.timings());
  const Stuck stuck = stuck_sandbox(*st);
  const std::string bound = w.clock.judge(stuck);
  if (bound.empty()) return;
  throw DeployFailed(fmt::format("eval {}: the platform held its sandbox pod: {}, {}{}", id,
                                 describe_stuck(stuck), bound, platform_log_tail(cli, id)),
                     w.timings());
}

// How the platform's ssh line is read: a host it names without a user takes the profile's
// user for it, else ours, and a refusal names the profile's setting.
transport::SshLineRules ssh_line_rules(const scenario::HawkSettings& settings) {
  return {.jump_user = settings.jumphost_user,
          .sandbox_user = settings.sandbox_user,
          .local_user = transport::local_user_name(),
          .jump_user_setting = "hawk.jumphost_user",
          .sandbox_user_setting = "hawk.sandbox_user"};
}

}  // namespace

// ssh-command in short rounds, hawk status between them, until the line comes or time is up.
std::string HawkBackend::wait_for_ssh_line(const HawkCli& cli, const std::string& id) const {
  const auto until = Clock::now() + std::chrono::seconds(settings_.start_timeout_s);
  WaitState w{StuckClock(settings_)};
  std::string last_error;
  while (Clock::now() < until) {
    if (options_.interrupted && options_.interrupted->load())
      throw InfraError("interrupted while waiting for eval " + id);
    auto left = std::chrono::duration_cast<std::chrono::seconds>(until - Clock::now());
    long step_s = std::min(left.count(), options_.poll_step.count());
    if (auto grace = w.clock.left()) step_s = std::min(step_s, static_cast<long>(std::ceil(*grace)));
    const int step = static_cast<int>(std::max<long>(1, step_s));
    auto round = Clock::now();
    auto out = cli.ssh_command(id, step);
    if (out && out->find("ssh ") != std::string::npos) return *out;
    if (!out) throw_if_needs_login(out.error());
    last_error = out ? "ssh-command printed no ssh line" : out.error().message;
    judge_status(cli, id, w);
    if (Clock::now() - round < 1s) std::this_thread::sleep_for(1s);
  }
  throw DeployFailed(
      fmt::format("eval {}: no sandbox answered within {} s (hawk.start_timeout_s); last: {}; {}{}", id,
                  settings_.start_timeout_s, last_error,
                  w.last_status
                      ? describe_sandbox_pods(*w.last_status)
                      : (w.last_status_note.empty() ? "hawk status gave nothing" : w.last_status_note),
                  platform_log_tail(cli, id)),
      w.timings());
}

SandboxHandle HawkBackend::deploy(const SandboxRequest& request) {
  const HawkCli cli = cli_for(request.node_class);
  require_login(request.node_class, cli);
  const std::string config = write_config(request);
  const auto t0 = Clock::now();
  StartTally tally;
  const Started started = start_eval(cli, config, request.name, tally);
  const std::string id = started.eval_set_id;
  {
    std::lock_guard lock(mutex_);
    live_.insert({id, request.node_class});
  }
  try {
    const double start_s = seconds_since(t0);
    const std::string text = wait_for_ssh_line(cli, id);
    auto line = transport::parse_ssh_line(text, ssh_line_rules(settings_));
    if (!line) throw InfraError(fmt::format("eval {}: {}", id, line.error().message));
    SandboxHandle h;
    h.name = id;
    h.route = line->route;
    h.route.jump.host_key = settings_.jumphost_host_key;
    if (settings_.sandbox_host_keys == "pinned") h.route.sandbox.host_key = pinned_sandbox_key(*line);
    nlohmann::json findings = nlohmann::json::array();
    if (started.unknown_config_keys)
      findings.push_back({{"code", "platform_unknown_config_keys"},
                          {"message",
                           "the platform warned about config keys it does not know (so it may not "
                           "apply them; verification shows what the sandbox got): " +
                               started.warning}});
    nlohmann::json facts = {
        {"backend", scenario::backend_name(scenario::BackendKind::hawk)},
        {"eval_set_id", id},
        {"node_class", request.node_class},
        {"runtime_requested", request.add_runtime_class.empty() ? "as written" : request.add_runtime_class},
        {"config", config},
        {"jumphost", fmt::format("{}@{}:{}", h.route.jump.user, h.route.jump.host, h.route.jump.port)},
        {"sandbox",
         fmt::format("{}@{}:{}", h.route.sandbox.user, h.route.sandbox.host, h.route.sandbox.port)},
        {"sandbox_host_keys", settings_.sandbox_host_keys},
        {"hawk_start_s", start_s},
        {"hawk_start_tries", tally.tries},
        {"hawk_quota_waits", tally.quota_waits},
        {"hawk_start_retries", tally.other_retries},
        {"hawk_start_wait_s", tally.waited_s},
        {"hawk_ready_s", seconds_since(t0)},
        {"platform_findings", findings}};
    const auto* nc = profile_.node_class(request.node_class);
    facts["placement_requested"] = nc ? sandbox_placement(nc->node_selector, nc->tolerations) : nullptr;
    h.facts = SandboxFacts::from_json(facts);
    add_node_image_fact(profile_, h.facts);
    add_status_facts(cli, id, request.values, h.facts);
    return h;
  } catch (...) {
    remove(cli, id);
    throw;
  }
}

std::optional<RefusalProbe> HawkBackend::submit_expecting_refusal(const SandboxRequest& request,
                                                                  std::chrono::seconds watch) {
  const HawkCli cli = cli_for(request.node_class);
  require_login(request.node_class, cli);
  auto started = cli.start(write_config(request), settings_.human, settings_.start_args);
  if (!started) {
    throw_if_needs_login(started.error());
    // Exit 1 with a message is the platform saying no; anything else (could not run,
    // timed out, a usage error) says nothing about the config.
    if (started.error().code < 1 || started.error().code == 2)
      throw InfraError("submitting a config that must be refused: " + started.error().message);
    return RefusalProbe{true, started.error().message, false, ""};
  }
  const std::string id = started->eval_set_id;
  {
    std::lock_guard lock(mutex_);
    live_.insert({id, request.node_class});
  }
  RefusalProbe probe{false, "eval " + id + " was started", false, ""};
  const auto until = Clock::now() + watch;
  do {
    auto st = cli.status(id);
    if (!st && st.error().code == kNeedsLogin) {
      remove(cli, id);
      throw RunStoppingError(st.error().message);
    }
    bool refused_by_kubelet = false;
    if (st) {
      probe.detail = describe_sandbox_pods(*st);
      probe.sandbox_ran = sandbox_running(*st);
      for (const auto& pod : st->pods)
        for (const auto& c : pod.containers) refused_by_kubelet |= c.reason == "CreateContainerConfigError";
    }
    if (probe.sandbox_ran || refused_by_kubelet || Clock::now() >= until) break;
    std::this_thread::sleep_for(2s);
  } while (!(options_.interrupted && options_.interrupted->load()));
  remove(cli, id);
  return probe;
}

void HawkBackend::remove(const HawkCli& cli, const std::string& id) noexcept {
  try {
    auto r = cli.remove(id);
    if (!r) r = cli.remove(id);
    if (!r)
      std::fprintf(stderr, "hawk: %s — delete eval %s by hand\n", r.error().message.c_str(), id.c_str());
    std::lock_guard lock(mutex_);
    for (auto it = live_.begin(); it != live_.end();) it = it->first == id ? live_.erase(it) : std::next(it);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hawk: deleting eval %s failed: %s\n", id.c_str(), e.what());
  }
}

void HawkBackend::destroy(const SandboxHandle& handle) noexcept {
  std::string node_class;
  try {
    node_class = handle.facts.node_class;
  } catch (...) {
  }
  remove(cli_for(node_class), handle.name);
}

nlohmann::json HawkBackend::context() const {
  return {{"backend", scenario::backend_name(scenario::BackendKind::hawk)},
          {"hawk_cli", settings_.cli},
          {"hawk_human", settings_.human},
          {"deployment", profile_.name},
          {"sandbox_host_keys", settings_.sandbox_host_keys},
          {"jumphost_host_key_pinned", !settings_.jumphost_host_key.empty()}};
}

}  // namespace isoharness::deploy::hawk
