#include "harness/deploy/local/local_backend.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "harness/common/error.h"
#include "harness/common/install_paths.h"
#include "harness/deploy/egress_target.h"
#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/image_builder.h"
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/node_observer.h"
#include "harness/deploy/local/proxy_decisions.h"
#include "harness/deploy/local/sandbox_launch.h"
#include "harness/deploy/local/weakenings.h"
#include "harness/deploy/local/world.h"
#include "harness/deploy/witness_log.h"
#include "harness/scenario/backend_kind.h"

namespace isoharness::deploy::local {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string kernel_release() {
  utsname u{};
  return ::uname(&u) == 0 ? u.release : "";
}

// A service name becomes a DNS name in the item's resolver and part of a sandbox name.
bool valid_service_name(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

std::string sibling_sandbox_name(const std::string& base, const std::string& service, std::size_t i) {
  std::string n = base + "-" + service;
  return valid_sandbox_name(n) ? n : base + "-svc" + std::to_string(i + 1);
}

// Whether the request leaves its `none` siblings reachable (a named weakening; every name
// was checked against weakenings.cc before).
bool want_weakening(const SandboxRequest& request) {
  const auto& w = request.test_weakenings;
  return std::find(w.begin(), w.end(), kWeakenNoneSiblingReachable) != w.end();
}

std::string first_line_of(const std::vector<std::string>& argv) {
  RunOptions opts;
  opts.deadline = 10s;
  auto r = run_command(argv, opts);
  if (!r || !r->ok()) return "unavailable";
  return r->out.substr(0, r->out.find('\n'));
}

// Each sibling service's spec; a service name that is no DNS label is bad input.
std::vector<SandboxSpec> sibling_specs_of(const SandboxSpec& spec, const json& values,
                                          const std::string& source) {
  std::vector<SandboxSpec> out;
  for (const auto& service : spec.other_services) {
    if (!valid_service_name(service))
      throw UserError(
          source + ": values.services." + service +
          ": a service name must be a DNS label (1-63 of [a-z0-9-]), its siblings find it by that name");
    out.push_back(parse_sandbox_values(values, source, service));
  }
  return out;
}

// What the agent's sandbox record says about the item around it.
void add_item_facts(DeployedSandbox& sb, const SandboxRequest& request, std::size_t answers,
                    std::vector<SandboxFacts> siblings) {
  SandboxFacts& f = sb.handle.facts;
  f.item_id = request.item_id;
  f.extra["attempt"] = request.attempt;
  f.service = "default";
  f.siblings = std::move(siblings);
  f.item_resolver = ItemResolverFacts{sb.resolver.address, kResolverInstanceName, sb.resolver.instance,
                                      static_cast<long long>(answers), !sb.egress.item_resolver.empty()};
  f.test_weakenings = request.test_weakenings;
}

// The targets the probe tries today (TCP connects, HTTP, name resolution).
std::vector<EgressTarget> classic_world_targets() {
  using A = EgressTarget;
  return {
      A{"target", "target.example.com", 80, "http", "target.example.com", "internet"},
      A{"target-tls", "target.example.com", 443, "tcp", "target.example.com", "internet"},
      A{"target-addr", world_addr::kTarget, 80, "tcp", "target.example.com", "internet"},
      A{"blocked", "blocked.example.com", 80, "http", "blocked.example.com", "internet"},
      A{"blocked-addr", world_addr::kBlocked, 80, "tcp", "blocked.example.com", "internet"},
      A{"cidr-host", world_addr::kCidrHost, 80, "http", "", "internet"},
      A{"dns", "target.example.com", 53, "dns", "target.example.com", "resolver"},
      A{"resolver", world_addr::kResolver, 53, "tcp", "", "resolver"},
      A{"metadata", world_addr::kMetadata, 80, "http", "", "metadata"},
      A{"cluster-api", world_addr::kClusterApi, 443, "tcp", "kubernetes.default.svc", "cluster"},
      A{"jumphost", world_addr::kJumpNodeSide, 22, "tcp", "", "cluster"},
  };
}

// The allow list's scope (ports, protocols and names, as the chart's): the listed domain
// target.example.com on a port and a protocol allow_domains does not open, its address
// under a forbidden TLS server name and HTTP Host; the CIDR host on a port other than
// 80/443; cloud metadata asked as Google's and AWS's servers want to be asked.
std::vector<EgressTarget> scope_world_targets() {
  using A = EgressTarget;
  auto out = domain_scope_targets("target.example.com", [](std::string_view, std::string_view suffix) {
    return "target" + std::string(suffix);
  });
  out.push_back(A{"target-udp", world_addr::kTarget, 53, "udp", "target.example.com", "internet"});
  out.push_back(A{"cidr-host-port", world_addr::kCidrHost, kCidrHostExtraPort, "tcp", "", "internet"});
  out.push_back(A{"metadata-google", world_addr::kMetadata, 80, "http-google", "", "metadata"});
  out.push_back(A{"metadata-imds-token", world_addr::kMetadata, 80, "http-imds-token", "", "metadata"});
  return out;
}

// The datagram and raw ways out, each aimed at the world's canary, which no allow list opens
// but "everything" (or an allowCIDR around it): UDP, ICMP echo, TCP, and a DNS query in the
// canary zone through the sandbox's own resolver. Every one is judged on the witness.
std::vector<EgressTarget> witnessed_world_targets() {
  using A = EgressTarget;
  const std::string canary = world_addr::kCanary;
  const std::string canary6 = world_addr::kCanary6;
  return {
      A{"canary-tcp", canary, 443, "tcp", "", "internet", canary},
      A{"canary-udp", canary, 53, "udp", "", "internet", canary},
      A{"canary-udp-443", canary, 443, "udp", "", "internet", canary},
      A{"canary-icmp", canary, 0, "icmp", "", "internet", canary},
      A{"dns-exfil", kWitnessZone, 53, "exfil", kWitnessZoneProbeName, "internet", kWitnessZone},
      A{"metadata-udp", world_addr::kMetadata, 53, "udp", "", "metadata", world_addr::kMetadata},
      A{"cluster-api-udp", world_addr::kClusterApi, 53, "udp", "", "cluster", world_addr::kClusterApi},
      // IPv6 (documentation prefix): the canary, the cluster API and a metadata stand-in.
      A{"canary6-tcp", canary6, 443, "tcp", "", "internet", canary6},
      A{"canary6-udp", canary6, 53, "udp", "", "internet", canary6},
      A{"canary6-icmp", canary6, 0, "icmp", "", "internet", canary6},
      A{"cluster-api6", world_addr::kClusterApi6, 443, "tcp", "", "cluster", world_addr::kClusterApi6},
      A{"metadata6", world_addr::kMetadata6, 80, "http", "", "metadata", world_addr::kMetadata6},
  };
}

// What the item's resolver sends on to the canary zone: the zone when the policy lets
// names out (an allowDomains pattern that matches it, or everything), every name under the
// selftest weakening, else nothing.
ResolverForwarding resolver_forwarding(const SandboxSpec& spec, const SandboxEgress& egress,
                                       const std::vector<std::string>& weakenings) {
  if (std::find(weakenings.begin(), weakenings.end(), kWeakenForwardEveryName) != weakenings.end())
    return ResolverForwarding::every_name;
  if (spec.network_mode == "none" || !egress.dns) return ResolverForwarding::none;
  return witness_zone_forwarded(spec.allow_domains) || egress_wants_everything(spec)
             ? ResolverForwarding::witness_zone
             : ResolverForwarding::none;
}

}  // namespace

std::string default_helper_path() {
  ResolvedPath helper = resolve_path(kWorldHelper);
  return helper.found() ? helper.path : "";
}

std::string default_isoprobe_bundle() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (fs::path dir = ec ? fs::path() : exe.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path())
    if (::access((dir / "probes" / "isoprobe-bundle" / "isoprobe").c_str(), X_OK) == 0)
      return (dir / "probes" / "isoprobe-bundle").string();
#ifdef ISOHARNESS_ISOPROBE_BUNDLE
  if (::access(ISOHARNESS_ISOPROBE_BUNDLE "/isoprobe", X_OK) == 0) return ISOHARNESS_ISOPROBE_BUNDLE;
#endif
  return "";
}

LocalBackend::LocalBackend(const json& profile, LocalOptions options)
    : profile_(parse_local_profile(profile)), options_(std::move(options)) {
  if (::geteuid() != 0)
    throw InfraError("the local backend needs root (namespaces, nftables, runc); run as root");
  if (options_.run_id.empty()) options_.run_id = new_run_id();
  if (!valid_run_id(options_.run_id)) throw UserError("run id must be 1-8 of [a-z0-9]: " + options_.run_id);
  if (options_.helper_path.empty()) options_.helper_path = default_helper_path();
  if (options_.isoprobe_bundle.empty()) options_.isoprobe_bundle = default_isoprobe_bundle();
  if (options_.helper_path.empty() || ::access(options_.helper_path.c_str(), X_OK) != 0)
    throw InfraError("isoharness-world-helper: " + (options_.helper_path.empty()
                                                        ? resolve_path(kWorldHelper).problem
                                                        : options_.helper_path + " is not executable"));
  for (const char* p : {"ip", "nsenter", "nft", "dnsmasq", "runc", "ssh-keygen", "sysctl"})
    if (find_program(p).empty())
      throw InfraError(std::string("the local backend needs ") + p +
                       "; `isoharness local doctor` says how to install it");
  if (::access("/usr/sbin/sshd", X_OK) != 0)
    throw InfraError("the local backend needs /usr/sbin/sshd (apt-get install openssh-server)");
  paths_ = RunPaths{options_.state_root, options_.run_id};
  kernel_release_ = kernel_release();
  index_in_use_.assign(kMaxSandboxes, false);
  claim_run(paths_);
  try {
    world_ = std::make_unique<World>(
        paths_,
        WorldOptions{options_.helper_path, options_.seccomp_profile, kernel_release_,
                     LinkShape{profile_.link_rtt_ms, profile_.link_loss_percent}, options_.platform_ingress});
  } catch (...) {
    world_.reset();
    cleanup_run(paths_.state_root, paths_.run_id);
    throw;
  }
}

LocalBackend::~LocalBackend() {
  std::map<std::string, std::unique_ptr<DeployedSandbox>> left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    left.swap(sandboxes_);
  }
  for (auto& [name, sb] : left)
    if (sb) release(*sb);
  world_.reset();
  cleanup_run(paths_.state_root, paths_.run_id);
}

std::vector<UpContainer> LocalBackend::containers(const SandboxHandle& handle) const {
  std::vector<UpContainer> out;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sandboxes_.find(handle.name);
  if (it == sandboxes_.end() || !it->second) return out;
  out.push_back({"default", it->second->container});
  for (const auto& sib : it->second->siblings)
    if (sib) out.push_back({sib->handle.facts.service, sib->container});
  return out;
}

std::optional<NodeView> LocalBackend::node_view(const SandboxHandle& handle) const {
  const std::vector<UpContainer> found = containers(handle);
  if (found.empty()) return std::nullopt;
  std::vector<ContainerRef> refs;
  refs.reserve(found.size());
  for (const auto& c : found) refs.push_back(run_container_ref(paths_, c.id, c.service));
  return observe_containers(refs);
}

SshEndpoint LocalBackend::jump_endpoint() const {
  return SshEndpoint{world_->host_link().jump_address, world_->jump_port(), World::kJumpUser,
                     world_->jump_host_key()};
}

SandboxHandle LocalBackend::deploy(const SandboxRequest& request) {
  if (!request.run_id.empty() && request.run_id != paths_.run_id)
    throw InfraError("sandbox " + request.name + ": request run id " + request.run_id +
                     " is not this backend's run " + paths_.run_id);
  if (!valid_sandbox_name(request.name))
    throw UserError("sandbox name must be 1-24 of [a-z0-9-]: " + request.name);
  std::string key_problem = check_public_key_line(request.authorized_key);
  if (!key_problem.empty()) throw UserError("sandbox " + request.name + ": authorized key: " + key_problem);
  check_weakenings(request.test_weakenings, request.name);
  const bool weaken_none = want_weakening(request);
  const std::string source = request.item_id.empty() ? request.name : request.item_id;
  SandboxSpec spec = parse_sandbox_values(request.values, source);
  std::vector<SandboxSpec> sibling_specs = sibling_specs_of(spec, request.values, source);
  if (!sibling_specs.empty() && options_.isoprobe_bundle.empty())
    throw InfraError(source +
                     ": sibling services run isoprobe's listener, and the isoprobe bundle was not found "
                     "(build the target isoprobe_bundle)");
  if (profile_.node_classes.find(request.node_class) == profile_.node_classes.end())
    throw UserError("sandbox " + request.name + ": node class `" + request.node_class +
                    "` is not in the deployment profile's node_classes");

  auto sb = std::make_unique<DeployedSandbox>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (sandboxes_.count(request.name)) throw UserError("sandbox " + request.name + " is already deployed");
    if (static_cast<std::size_t>(std::count(index_in_use_.begin(), index_in_use_.end(), false)) <
        1 + sibling_specs.size())
      throw InfraError("the local world holds at most " + std::to_string(kMaxSandboxes) +
                       " sandboxes at once");
    auto take = [&] {
      auto free = std::find(index_in_use_.begin(), index_in_use_.end(), false);
      *free = true;
      return static_cast<int>(free - index_in_use_.begin());
    };
    sb->index = take();
    sb->name = request.name;
    for (std::size_t i = 0; i < sibling_specs.size(); ++i) {
      auto sib = std::make_unique<DeployedSandbox>();
      sib->index = take();
      sib->name = sibling_sandbox_name(request.name, sibling_specs[i].service, i);
      sb->siblings.push_back(std::move(sib));
    }
    sandboxes_[request.name] = nullptr;  // reserves the name
  }
  try {
    launch_item(*sb, spec, sibling_specs, request, weaken_none);
  } catch (...) {
    release(*sb);
    std::lock_guard<std::mutex> lock(mutex_);
    sandboxes_.erase(request.name);
    throw;
  }
  SandboxHandle handle = sb->handle;
  std::lock_guard<std::mutex> lock(mutex_);
  sandboxes_[request.name] = std::move(sb);
  return handle;
}

// Each service gets its runtime, its sandbox and its egress chain; the siblings start
// first, so the agent never runs without the walls around them.
void LocalBackend::launch_item(DeployedSandbox& sb, const SandboxSpec& spec,
                               std::vector<SandboxSpec>& sibling_specs, const SandboxRequest& request,
                               bool weaken_none) {
  auto prepare = [&](DeployedSandbox& d, const SandboxSpec& sp) {
    d.runtime = runtime_for(sp, profile_);
    const std::string runtime = oci_runtime_name(d.runtime);
    d.runtime_bin = find_program(runtime);
    if (d.runtime_bin.empty())
      throw InfraError(
          "runtime " + runtime + " (runtime class " +
          (sp.runtime_class.empty() ? "default" : sp.runtime_class) + ", service " + sp.service +
          ") is not installed; the sandbox is not started and never falls back to another runtime "
          "(apt-get install " +
          runtime + ")");
    d.container = container_id(paths_.run_id, d.name);
    d.netns = netns_name(paths_.run_id, "s-" + d.name);
    d.address = sandbox_address(d.index);
    d.dir = paths_.sandbox_dir(d.name);
    d.egress = egress_for(sp, d.index, "sb" + std::to_string(d.index), d.address);
  };
  // Selftest weakenings apply to the agent's own sandbox (weakenings.h).
  sb.weakenings = request.test_weakenings;
  sb.weakened_shared_dir =
      weakened_shared_dir(paths_.dir(), request.item_id.empty() ? request.name : request.item_id);
  prepare(sb, spec);
  sb.egress.weakened_accepts = weakened_egress_accepts(request.test_weakenings);
  world_->serve_domain_ports(sb.egress.domain_ports);  // the listed ports only, not a weakening's
  weaken_allow_list_scope(request.test_weakenings, sb.egress);
  std::vector<ItemMember> members = {{"default", spec.network_mode == "none", &sb.egress}};
  for (std::size_t i = 0; i < sb.siblings.size(); ++i) {
    prepare(*sb.siblings[i], sibling_specs[i]);
    members.push_back(
        {sibling_specs[i].service, sibling_specs[i].network_mode == "none", &sb.siblings[i]->egress});
  }
  const std::string resolver_address = item_resolver_address(sb.index);
  link_item_egress(members, resolver_address, weaken_none);

  // The attempt's own resolver: its services by name, and the world's names only when
  // the item may resolve them (allowDomains).
  std::vector<std::pair<std::string, std::string>> names;
  for (std::size_t i = 0; i < sb.siblings.size(); ++i)
    names.emplace_back(sibling_specs[i].service, sb.siblings[i]->address);
  if (sb.egress.dns)
    for (const auto& n : world_names()) names.emplace_back(n.name, n.address);
  sb.resolver = world_->start_item_resolver(sb.name, resolver_address, names,
                                            resolver_forwarding(spec, sb.egress, request.test_weakenings));

  const NodeClass& nc = profile_.node_classes.at(request.node_class);
  LaunchContext ctx = launch_context(static_cast<int>(options_.ssh_ready_timeout.count()));
  std::vector<SandboxFacts> siblings;
  for (std::size_t i = 0; i < sb.siblings.size(); ++i) {
    launch_sibling(*sb.siblings[i], sibling_specs[i], nc, options_.isoprobe_bundle, ctx);
    siblings.push_back(sb.siblings[i]->handle.facts);
  }
  launch_sandbox(sb, spec, nc, request.node_class, request.authorized_key, ctx);
  add_item_facts(sb, request, names.size(), std::move(siblings));
  weaken_evidence(request.test_weakenings, {world_.get(), sb.netns, sb.address});
}

void LocalBackend::retire_if_quota_spent(const WitnessLog& log, const SandboxHandle& handle) const {
  const std::string& address = handle.facts.address;
  for (const auto& [source, at_ms] : log.quotas)
    if (!address.empty() && source == address) {
      std::lock_guard<std::mutex> lock(mutex_);
      spent_addresses_.insert(address);
      return;
    }
}

LaunchContext LocalBackend::launch_context(int ssh_ready_ms) const {
  return LaunchContext{&paths_,
                       world_.get(),
                       options_.helper_path,
                       options_.seccomp_profile,
                       kernel_release_,
                       options_.noisy_duty_percent,
                       ssh_ready_ms};
}

void LocalBackend::release(DeployedSandbox& sb) noexcept {
  LaunchContext ctx = launch_context(0);
  teardown_sandbox(sb, ctx);
  for (auto& sib : sb.siblings)
    if (sib) teardown_sandbox(*sib, ctx);
  world_->stop_item_resolver(sb.resolver);
  std::lock_guard<std::mutex> lock(mutex_);
  // An address the witness stopped logging is not handed out again in this run: no window
  // of a later sandbox there could be judged on.
  if (sb.index >= 0 && !spent_addresses_.count(sb.address))
    index_in_use_[static_cast<std::size_t>(sb.index)] = false;
  for (auto& sib : sb.siblings)
    if (sib && sib->index >= 0) index_in_use_[static_cast<std::size_t>(sib->index)] = false;
}

void LocalBackend::destroy(const SandboxHandle& handle) noexcept {
  std::unique_ptr<DeployedSandbox> sb;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sandboxes_.find(handle.name);
    if (it == sandboxes_.end() || !it->second) return;
    sb = std::move(it->second);
    sandboxes_.erase(it);
  }
  {
    std::lock_guard<std::mutex> lock(drops_mutex_);
    drops_seen_.erase(handle.name);
  }
  release(*sb);
  try {
    unweaken_evidence(sb->weakenings, *world_);
  } catch (const std::exception& e) {
    log_teardown_failure(std::string("restarting the world's witness: ") + e.what());
  }
}

std::vector<EgressTarget> LocalBackend::egress_targets() const {
  return world_targets();
}

std::vector<EgressTarget> LocalBackend::item_egress_targets(const json& expect) const {
  return domain_port_targets(expect);
}

std::optional<WitnessView> LocalBackend::witness(const SandboxHandle& handle, const std::string& nonce,
                                                 std::chrono::system_clock::time_point from,
                                                 std::chrono::system_clock::time_point to) const {
  weaken_witness_log(handle.facts.test_weakenings, world_->witness_log_path());
  const WorldSandbox sb{handle.facts.address, handle.facts.address6, handle.facts.egress_index};
  std::vector<DropCount> before;
  {
    std::lock_guard<std::mutex> lock(drops_mutex_);
    before = drops_seen_[handle.name];
  }
  WitnessView view = read_world_witness(paths_, sb, nonce, from, to, before,
                                        [&](const WitnessLog& log) { retire_if_quota_spent(log, handle); });
  std::lock_guard<std::mutex> lock(drops_mutex_);
  drops_seen_[handle.name] = std::move(before);
  return view;
}

namespace {

// The drop point's nft counters of the sandbox: their rise since `before`, which becomes now.
DropView read_nft_drops(const RunPaths& paths, const WorldSandbox& sb, std::vector<DropCount>& before) {
  DropView drops;
  drops.witness = "the node's nftables drop point (per-sandbox counters at the policy's drop rules)";
  std::string why;
  auto now = world_drop_counts(paths, sb, why);
  if (!now) {
    drops.complete = false;
    drops.note = why;
    return drops;
  }
  drops.records = drop_increase(*now, before, sb.address, "dropped by the node's policy");
  before = std::move(*now);
  return drops;
}

// The drop point's records of the sandbox: the nft counters' rise since their last reading
// (drop_point.h) and the name proxy's decisions in the window (proxy_decisions.h).
DropView read_drop_point(const RunPaths& paths, const WorldSandbox& sb, long long from_ms, long long to_ms,
                         std::vector<DropCount>& before) {
  DropView drops = read_nft_drops(paths, sb, before);
  if (!drops.complete) return drops;
  // The name proxy's resets: the drop point of a request stopped for the name it presented.
  constexpr std::size_t kMaxDecisionLog = std::size_t{32} << 20;
  const std::string decisions = paths.world_dir() + "/name-proxy-decisions.log";  // World's
  const std::string text = read_file_bounded(decisions, kMaxDecisionLog);
  DropView proxy = proxy_decisions(text, sb.address, from_ms, to_ms);
  drops.witness += "; the node's name proxy (its decision on each allow-listed request)";
  if (text.size() >= kMaxDecisionLog || !fs::exists(decisions)) {
    proxy.complete = false;
    proxy.note = "the name proxy's decision log is missing or larger than the harness reads";
  }
  if (!proxy.complete) {
    drops.complete = false;
    drops.note = proxy.note;
  }
  for (auto& r : proxy.records) drops.records.push_back(std::move(r));
  return drops;
}

}  // namespace

std::optional<std::vector<DropCount>> world_drop_counts(const RunPaths& paths, const WorldSandbox& sb,
                                                        std::string& why) {
  if (!sb.egress_index) {
    why = "the sandbox's facts name no drop point";
    return std::nullopt;
  }
  return read_drop_sets(netns_name(paths.run_id, "node"), nft_table_name(paths.run_id), *sb.egress_index,
                        why);
}

WitnessView read_world_witness(const RunPaths& paths, const WorldSandbox& sb, const std::string& nonce,
                               std::chrono::system_clock::time_point from,
                               std::chrono::system_clock::time_point to, std::vector<DropCount>& drops_before,
                               const std::function<void(const WitnessLog&)>& each_log) {
  auto ms = [](std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  };
  // What the probe sent last is in the world already: once the witness writes a heartbeat
  // after this read began, everything that reached it before is logged (tools/witness.cc).
  // Then read until its heartbeats cover the probe's window (a witness that died does not
  // catch up: no fresh heartbeat, and the view stays incomplete, saying since when it was
  // silent).
  constexpr std::size_t kMaxLog = std::size_t{48} << 20;
  constexpr int kReads = 6;
  const std::string log_path = paths.world_dir() + "/witness.log";  // World::witness_log_path
  WitnessView view;
  std::string text;
  wait_for_fresh_heartbeat(
      [&] {
        text = read_file_bounded(log_path, kMaxLog);
        return static_cast<long long>(parse_witness_log(text).heartbeats.size());
      },
      std::chrono::milliseconds(50), std::chrono::milliseconds(kHeartbeatMs * 2));
  for (int read = 0; read < kReads; ++read) {
    if (read > 0) std::this_thread::sleep_for(std::chrono::milliseconds(kHeartbeatMs));
    text = read_file_bounded(log_path, kMaxLog);
    const WitnessLog log = parse_witness_log(text);
    if (each_log) each_log(log);
    view = select_covered_records(log, sb.address, sb.address6, nonce, ms(from) - 100, ms(to) + 1000,
                                  ms(from), ms(to));
    if (view.complete || text.size() >= kMaxLog) break;
  }
  view.witness = "the local world's witness (packet socket on the world's link; canary zone DNS server)";
  if (text.size() >= kMaxLog) {
    view.complete = false;
    view.note = "the witness log is larger than the harness reads";
  }
  view.drops = read_drop_point(paths, sb, ms(from) - 100, ms(to) + 1000, drops_before);
  return view;
}

std::vector<EgressTarget> world_targets() {
  auto out = classic_world_targets();
  for (auto& t : scope_world_targets()) out.push_back(std::move(t));
  // Where the outside witness sees each one arrive: every destination inside the world.
  for (auto& t : out) {
    for (const auto& n : world_names())
      if (t.host == n.name) t.witness_address = n.address;
    if (t.host.find_first_not_of("0123456789.") == std::string::npos && t.host != world_addr::kJumpNodeSide)
      t.witness_address = t.host;
    // Resolving only: nothing is sent to the target; the witness sees the query reach a
    // resolver in the world (the item's own or the world's), matched on port 53 alone.
    if (t.proto == "dns") t.witness_address = world_addr::kResolver;
  }
  for (auto& t : witnessed_world_targets()) out.push_back(std::move(t));
  return out;
}

std::vector<EgressTarget> domain_port_targets(const json& expect) {
  auto out = domain_port_scope_targets(
      "target.example.com", expect, unlisted_domain_port,
      [](std::string_view, std::string_view suffix) { return "target" + std::string(suffix); },
      world_addr::kTarget);
  for (auto& t : out) t.witness_address = world_addr::kTarget;
  return out;
}

json LocalBackend::context() const {
  return json{
      {"backend", scenario::backend_name(scenario::BackendKind::local)},
      {"run_id", paths_.run_id},
      {"state_dir", paths_.dir()},
      {"kernel", kernel_release_},
      {"runc", first_line_of({"runc", "--version"})},
      {"runsc", find_program("runsc").empty() ? "not installed" : first_line_of({"runsc", "--version"})},
      {"runsc_platform", "ptrace"},
      {"runsc_network", "host-in-netns"},
      {"oci_seccomp_inside_gvisor", false},
      {"jumphost", world_->host_link().jump_address},
      {"world_slot", world_->host_link().slot},
      {"jumphost_link",
       {{"rtt_ms", world_->jumphost_link().rtt_ms},
        {"loss_percent", world_->jumphost_link().loss_percent},
        {"delay",
         world_->jumphost_link().rtt_ms > 0 ? "userspace relay (isoharness-world-helper relay)" : "none"}}},
      {"egress_enforcement", "nftables in the node namespace"},
      {"platform_ingress", platform_ingress_name(world_->platform_ingress())},
  };
}

std::unique_ptr<LocalBackend> make_local_backend(const json& profile, LocalOptions options) {
  return std::make_unique<LocalBackend>(profile, std::move(options));
}

}  // namespace isoharness::deploy::local
