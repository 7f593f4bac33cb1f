#include "harness/runner/check_run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "harness/common/subprocess.h"
#include "harness/deploy/factory/backend_factory.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/up_record.h"
#include "harness/policy/chart_values.h"
#include "harness/runner/matrix.h"
#include "harness/runner/session.h"
#include "harness/transport/host_key.h"
#include "harness/transport/ssh_line.h"

namespace isoharness::runner {
namespace {

std::string read_bounded(const std::string& path, std::size_t max, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("cannot read {} {}", what, path));
  std::string text(max, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// The first value of `Key value` in an ssh config file (only the two keys check needs).
std::string config_value(const std::string& text, std::string_view key) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    auto space = line.find_first_of(" \t=", first);
    if (space == std::string::npos) continue;
    std::string k = line.substr(first, space - first);
    if (k.size() != key.size() || !std::equal(k.begin(), k.end(), key.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        }))
      continue;
    auto v = line.find_first_not_of(" \t=", space);
    if (v != std::string::npos) return line.substr(v, line.find_last_not_of(" \t\r") + 1 - v);
  }
  return "";
}

// What `check` found of a `local up` sandbox in the run state: its containers (the node's
// view is read from them after the probe ran, as the local backend does in `run`) and,
// when the profile's targets are the local world's own, the world's witnesses.
struct LocalUpSandbox {
  std::string state_root;
  deploy::local::UpRecord record;
  bool witnessed = false;
};

// A sandbox that was there before and stays: deploy hands back its route, destroy does nothing.
class ExistingSandbox final : public deploy::Backend {
  static constexpr scenario::BackendKind kBackend = scenario::BackendKind::existing;

 public:
  ExistingSandbox(transport::SshRoute route, std::vector<deploy::EgressTarget> targets,
                  deploy::SandboxFacts facts, std::optional<LocalUpSandbox> local)
      : route_(std::move(route)),
        targets_(std::move(targets)),
        facts_(std::move(facts)),
        local_(std::move(local)) {}
  std::string name() const override { return std::string(scenario::backend_name(kBackend)); }
  deploy::SandboxHandle deploy(const deploy::SandboxRequest& request) override {
    // The drop point's counts before the probe: what rises after is this probe's.
    if (local_ && local_->witnessed) {
      std::string why;
      const deploy::local::RunPaths paths{local_->state_root, local_->record.run_id};
      drops_before_ =
          deploy::local::world_drop_counts(paths, local_->record.world, why).value_or(drops_before_);
    }
    return {request.name, route_, facts_};
  }
  void destroy(const deploy::SandboxHandle&) noexcept override {}
  std::vector<deploy::EgressTarget> egress_targets() const override { return targets_; }
  std::optional<deploy::WitnessView> witness(const deploy::SandboxHandle&, const std::string& nonce,
                                             std::chrono::system_clock::time_point from,
                                             std::chrono::system_clock::time_point to) const override {
    if (!local_ || !local_->witnessed) return std::nullopt;
    return deploy::local::read_world_witness({local_->state_root, local_->record.run_id},
                                             local_->record.world, nonce, from, to, drops_before_);
  }
  std::optional<deploy::NodeView> node_view(const deploy::SandboxHandle&) const override {
    if (!local_) return std::nullopt;
    return deploy::local::observe_containers(
        deploy::local::container_refs(local_->state_root, local_->record));
  }
  nlohmann::json context() const override { return {{"backend", scenario::backend_name(kBackend)}}; }

 private:
  transport::SshRoute route_;
  std::vector<deploy::EgressTarget> targets_;
  deploy::SandboxFacts facts_;
  std::optional<LocalUpSandbox> local_;
  mutable std::vector<deploy::local::DropCount> drops_before_;
};

// The `local up` sandbox the route leads to, when --node-view names no view and the local
// state holds exactly one such sandbox; else none (its posture checks stay unwitnessed).
// Its world's witnesses judge its egress when the profile's targets are that world's (a
// local profile: no egress or witness section). Said on stderr either way.
std::optional<LocalUpSandbox> local_up_sandbox(const CheckConfig& config, const transport::SshRoute& route,
                                               const scenario::DeploymentProfile& profile) {
  if (!config.node_view.empty() || config.local_state_dir.empty()) return std::nullopt;
  auto found = deploy::local::find_up_sandbox(config.local_state_dir, route);
  if (!found.record) {
    std::fprintf(stderr, "isoharness check: %s; no node view is read\n", found.note.c_str());
    return std::nullopt;
  }
  LocalUpSandbox local{config.local_state_dir, std::move(*found.record)};
  local.witnessed = !profile.egress && !profile.witness && !local.record.world.address.empty() &&
                    local.record.world.egress_index.has_value();
  std::fprintf(stderr, "isoharness check: %s: the node's view is read from its containers%s\n",
               found.note.c_str(),
               local.witnessed ? ", and its egress from its world's witness and drop point"
                               : " (its world's witnesses do not judge this profile's targets)");
  return local;
}

struct Login {
  transport::SshRoute route;
  std::string identity;
  bool accept_new = false;
  bool jump_must_be_pinned = false;
};

// The first key known_hosts text lists for host:port, or "".
std::string known_key(const std::string& text, const std::string& source, const transport::SshEndpoint& e) {
  auto keys = transport::known_hosts_keys(text, source, e.host, e.port);
  if (!keys) throw UserError(keys.error().message);
  for (const auto& k : *keys)
    if (!k.revoked) return k.line();
  return "";
}

// Route, key and host-key pins from the ssh line, the flags and the deployment profile.
Login login_for(const CheckConfig& config, const scenario::DeploymentProfile& profile) {
  // A host named without a user takes the profile's user, else ours, as OpenSSH would.
  transport::SshLineRules rules{.allow_config_file = true, .local_user = transport::local_user_name()};
  if (profile.hawk) {
    rules.jump_user = profile.hawk->jumphost_user;
    rules.sandbox_user = profile.hawk->sandbox_user;
    rules.jump_user_setting = "hawk.jumphost_user";
    rules.sandbox_user_setting = "hawk.sandbox_user";
  }
  auto line = transport::parse_ssh_line(config.ssh_line, rules);
  if (!line) throw UserError("--ssh: " + line.error().message);
  std::string ssh_config;
  if (!line->config_file.empty())
    ssh_config = read_bounded(transport::expand_home(line->config_file), std::size_t{64} * 1024,
                              "the ssh config (-F)");
  Login login{line->route, config.identity_file};
  if (login.identity.empty()) login.identity = line->identity_file;
  if (login.identity.empty()) login.identity = config_value(ssh_config, "IdentityFile");
  if (login.identity.empty()) login.identity = "~/.ssh/id_ed25519";
  login.identity = transport::expand_home(login.identity);

  std::string known_hosts = config.known_hosts;
  if (known_hosts.empty()) known_hosts = line->known_hosts;
  if (known_hosts.empty()) known_hosts = config_value(ssh_config, "UserKnownHostsFile");
  if (!known_hosts.empty()) {
    const std::string path = transport::expand_home(known_hosts);
    const std::string text = read_bounded(path, 1 << 20, "the known_hosts file");
    login.route.jump.host_key = known_key(text, path, login.route.jump);
    login.route.sandbox.host_key = known_key(text, path, login.route.sandbox);
  }
  if (login.route.jump.host_key.empty() && profile.hawk)
    login.route.jump.host_key = profile.hawk->jumphost_host_key;
  const bool first_use = profile.hawk && profile.hawk->sandbox_host_keys == "first-use";
  if (config.command.accept_new_host_keys) {
    login.accept_new = true;
  } else if (login.route.jump.host_key.empty()) {
    throw UserError(
        "no pinned key for the jumphost " + login.route.jump.host +
        ": pass --known-hosts FILE (or a deployment with hawk.jumphost_host_key), or --accept-new-host-keys");
  } else if (login.route.sandbox.host_key.empty()) {
    if (!first_use)
      throw UserError("no pinned key for the sandbox " + login.route.sandbox.host +
                      ": pass --known-hosts FILE, a deployment whose hawk.sandbox_host_keys is first-use, or "
                      "--accept-new-host-keys");
    login.accept_new = true;
    login.jump_must_be_pinned = true;
  }
  return login;
}

// The plan item the sandbox is judged against, under the runtime asked for.
Job job_for(const CheckConfig& config, const Planned& p, const scenario::DeploymentProfile& profile) {
  const auto classes = gvisor_runtime_classes(profile);
  for (const auto& item : p.items) {
    if (item->id != config.item_id) continue;
    std::vector<Job> jobs;
    std::vector<Skipped> skipped;
    const std::string runtime = config.runtime.empty() ? runtime_label(*item, classes) : config.runtime;
    expand_jobs(p.scenario.name, {item}, p.gvisor_items, {runtime}, {"existing"}, 1, classes, jobs, skipped);
    if (jobs.empty())
      throw UserError("item " + config.item_id + " under " + runtime + ": " + skipped.front().reason);
    return jobs.front();
  }
  std::string ids;
  for (const auto& item : p.items) ids += "\n  " + item->id;
  throw UserError(config.scenario_path + ": no item '" + config.item_id + "'; its items are:" + ids);
}

// --deployment, else <scenarios_dir>/deployments/local.yaml, else deployments/local.yaml next
// to the scenario file (where `plan` looks too).
std::string deployment_for(const CheckConfig& config) {
  if (config.command.deployment_path.empty()) {
    auto beside = std::filesystem::path(config.scenario_path).parent_path() / "deployments" / "local.yaml";
    if (!std::filesystem::exists(config.command.scenarios_dir + "/deployments/local.yaml") &&
        std::filesystem::exists(beside))
      return beside.string();
  }
  return find_deployment(config.command.deployment_path, config.command.scenarios_dir,
                         scenario::BackendKind::local);
}

}  // namespace

std::optional<deploy::NodeView> given_node_view(const std::string& source,
                                                const std::vector<std::string>& args) {
  if (source.empty()) return std::nullopt;
  std::string text, problem;
  if (::access(source.c_str(), X_OK) == 0 && !std::filesystem::is_directory(source)) {
    RunOptions opts;
    opts.deadline = std::chrono::seconds(60);
    opts.max_output = deploy::kMaxNodeViewBytes + 1;
    std::vector<std::string> argv = {source};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_command(argv, opts);
    if (!r)
      problem = "--node-view " + source + ": " + r.error().message;
    else if (!r->ok())
      problem = "--node-view " + source + " exited " + std::to_string(r->exit_code);
    else
      text = r->out;
  } else {
    std::ifstream in(source, std::ios::binary);
    if (!in) problem = "--node-view " + source + ": cannot be read";
    std::string buf(deploy::kMaxNodeViewBytes + 1, '\0');
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    buf.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    text = std::move(buf);
  }
  deploy::NodeViewRead read;
  if (problem.empty()) read = deploy::read_node_view(text);
  if (problem.empty() && read.view) return read.view;
  deploy::NodeView unreadable;
  unreadable.witness = "--node-view " + source;
  unreadable.complete = false;
  unreadable.note = problem.empty() ? read.error : problem;
  return unreadable;
}

RunOutcome check(const CheckConfig& config) {
  const std::string deployment_path = deployment_for(config);
  scenario::DeploymentProfile profile = scenario::load_deployment(deployment_path);
  std::vector<Planned> planned = plan_scenarios({config.scenario_path}, profile, false);
  const Planned& p = planned.front();
  Job job = job_for(config, p, profile);
  Login login = login_for(config, profile);

  SandboxCommand command = config.command;
  command.backend = scenario::BackendKind::existing;  // nothing is deployed, whatever the config said
  command.accept_new_host_keys = login.accept_new;
  RunSession session({.command = command,
                      .profile = &profile,
                      .deployment_path = deployment_path,
                      .isoprobe_bundle = find_isoprobe_bundle(config.command.isoprobe_bundle)});
  HeaderParts header;
  header.scenario_names = {p.scenario.name};
  header.plans[p.scenario.name] = policy::to_json(p.plan);
  add_plan_findings(p.scenario.name, p.plan, header.findings);
  add_escape_table_findings(header.findings);
  session.open_journal(header);

  RunSettings& settings = session.settings();
  settings.credentials.private_key_path = login.identity;
  settings.existing_sandbox = true;
  settings.given_node_view = given_node_view(config.node_view, config.node_view_args);
  settings.jump_key_must_be_pinned = login.jump_must_be_pinned;
  const std::string jumphost =
      login.route.jump.user + "@" + login.route.jump.host + ":" + std::to_string(login.route.jump.port);
  deploy::SandboxFacts facts;
  facts.backend = scenario::BackendKind::existing;
  facts.extra = {{"ssh_command", config.ssh_line.substr(0, 4096)},
                 {"jumphost", jumphost},
                 {"sandbox", login.route.sandbox.user + "@" + login.route.sandbox.host + ":" +
                                 std::to_string(login.route.sandbox.port)}};
  // The item's other services, as the plan has them: reachable by name (an existing
  // sandbox's siblings have no addresses or exec that the harness could know).
  facts.siblings.emplace();
  for (const auto& service : policy::sibling_services(job.item->values.get()))
    facts.siblings->push_back(deploy::sibling_by_name(service, "the plan (an existing sandbox)"));
  std::fprintf(stderr, "isoharness check %s: item %s under %s, through %s\n", session.run_id().c_str(),
               config.item_id.c_str(), job.runtime.c_str(), jumphost.c_str());
  std::optional<LocalUpSandbox> local = local_up_sandbox(config, login.route, profile);
  if (local && local->witnessed)  // the witnesses judge closed ways out, as in `run`
    settings.blocked_deadline = std::chrono::milliseconds(profile.egress_blocked_deadline_ms);
  if (session.start_backend(std::make_unique<ExistingSandbox>(login.route, deploy::probe_targets(profile),
                                                              std::move(facts), std::move(local)))) {
    JobContext ctx = session.jobs();
    run_job(job, ctx);
  }
  return session.finish(1);
}

}  // namespace isoharness::runner
