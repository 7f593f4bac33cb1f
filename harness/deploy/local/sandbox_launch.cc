#include "harness/deploy/local/sandbox_launch.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <mutex>
#include <sstream>

#include "harness/common/error.h"
#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/capabilities.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/host_path_bind.h"
#include "harness/deploy/local/image_builder.h"
#include "harness/deploy/local/oci_spec.h"
#include "harness/deploy/local/pod_controls.h"
#include "harness/deploy/local/seccomp_profile.h"
#include "harness/deploy/local/sshd_config.h"
#include "harness/deploy/local/weakenings.h"
#include "harness/deploy/local/world.h"
#include "harness/scenario/backend_kind.h"

namespace isoharness::deploy::local {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string key_type_and_blob(const std::string& line) {
  auto first = line.find(' ');
  auto second = first == std::string::npos ? std::string::npos : line.find(' ', first + 1);
  return line.substr(0, second);
}

// `<runtime> --version`'s first line, and its "commit:" line when it has one (a
// distribution's package version, which says whether a fix was backported), asked once
// per binary and process (one run): the binary does not change under a run, and every
// deploy would otherwise start it again.
std::string runtime_version(const std::string& bin) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  {
    std::lock_guard lock(mutex);
    if (auto it = known.find(bin); it != known.end()) return it->second;
  }
  RunOptions opts;
  opts.deadline = 10s;
  auto r = run_command({bin, "--version"}, opts);
  std::string version = r && r->ok() ? r->out.substr(0, r->out.find('\n')) : "unknown";
  if (const auto commit = r && r->ok() ? r->out.find("\ncommit: ") : std::string::npos;
      commit != std::string::npos)
    version += "; " + r->out.substr(commit + 1, r->out.find('\n', commit + 1) - commit - 1);
  std::lock_guard lock(mutex);
  return known.emplace(bin, version).first->second;
}

// The commands of one `ip -batch -`, a line each.
std::string ip_batch(std::initializer_list<std::string> commands) {
  std::string text;
  for (const auto& c : commands) text += c + "\n";
  return text;
}

}  // namespace

bool egress_wants_everything(const SandboxSpec& spec) {
  if (std::find(spec.allow_domains.begin(), spec.allow_domains.end(), "*") != spec.allow_domains.end())
    return true;
  if (std::find(spec.allow_entities.begin(), spec.allow_entities.end(), "world") != spec.allow_entities.end())
    return true;
  return std::any_of(spec.allow_cidr.begin(), spec.allow_cidr.end(),
                     [](const std::string& c) { return parse_cidr(c) && parse_cidr(c)->prefix == 0; });
}

SandboxEgress egress_for(const SandboxSpec& spec, int index, const std::string& veth,
                         const std::string& address) {
  SandboxEgress e;
  e.index = index;
  e.veth = veth;
  e.address = address;
  e.address6 = sandbox_address6(index);
  if (spec.network_mode == "none") return e;  // deny-all, whatever the lists say
  e.addresses = resolve_allowed_domains(spec.allow_domains);
  e.dns = !spec.allow_domains.empty();
  for (const auto& c : spec.allow_cidr) {
    auto parsed = parse_cidr(c);
    if (parsed && parsed->prefix > 0) e.cidrs.push_back(parsed->to_string());
  }
  if (egress_wants_everything(spec)) {
    e.dns = true;
    for (const auto& r : world_internet_ranges()) e.cidrs.push_back(r);
    e.cidrs6.emplace_back(world_addr::kInternet6);
  }
  // Listed addresses no opened range covers go through the name proxy on 80/443.
  e.name_patterns = spec.allow_domains;
  for (const auto& a : e.addresses) {
    const auto ip = parse_ipv4(a);
    const bool covered = std::any_of(e.cidrs.begin(), e.cidrs.end(), [&ip](const std::string& c) {
      const auto range = parse_cidr(c);
      return ip && range && range->contains(*ip);
    });
    if (ip && !covered) e.proxied.push_back(a);
  }
  // allowDomainsPorts: each entry on the addresses of the domains it applies to (every
  // allowed domain, or the one it names), nothing else ("*" opened every port already).
  if (!egress_wants_everything(spec))
    for (const auto& d : spec.allow_domains)
      for (const auto& entry : spec.allow_domains_ports) {
        if (!entry.domain.empty() && entry.domain != d) continue;
        std::string proto = entry.protocol == "TCP" ? "tcp" : entry.protocol == "UDP" ? "udp" : "any";
        for (const auto& a : resolve_allowed_domains({d})) {
          AddressPort open{a, proto, entry.port};
          if (parse_ipv4(a) &&
              std::find(e.domain_ports.begin(), e.domain_ports.end(), open) == e.domain_ports.end())
            e.domain_ports.push_back(std::move(open));
        }
      }
  return e;
}

void link_item_egress(std::vector<ItemMember>& members, const std::string& item_resolver, bool weaken_none) {
  auto open = [&](const ItemMember& m) { return !m.none || weaken_none; };
  for (auto& m : members) {
    m.egress->peers.clear();
    m.egress->sealed = m.none && !weaken_none && m.service != "default";
    m.egress->item_resolver = open(m) ? item_resolver : "";
    if (!open(m)) continue;
    for (const auto& other : members)
      if (&other != &m && open(other)) m.egress->peers.push_back(other.egress->address);
  }
}

namespace {

// Controls that need files come first: nothing is created if one cannot be applied.
json load_seccomp(const SandboxSpec& spec, const LaunchContext& ctx) {
  if (spec.seccomp != "RuntimeDefault") return nullptr;
  auto s = load_default_seccomp(ctx.seccomp_profile,
                                SeccompTarget{"amd64", ctx.kernel_release, spec.capabilities});
  if (!s) throw InfraError("control seccompProfile RuntimeDefault cannot be applied: " + s.error().message);
  return *s;
}

// The sandbox's own namespace, a veth to the node, its egress chain.
void create_network(DeployedSandbox& sb, const LaunchContext& ctx) {
  const RunPaths& paths = *ctx.paths;
  World& world = *ctx.world;
  std::error_code ec;
  fs::create_directories(sb.dir, ec);
  if (ec) throw InfraError("sandbox " + sb.name + ": cannot create " + sb.dir + ": " + ec.message());
  sb.netns_created = true;
  run_checked({"ip", "netns", "add", sb.netns}, "control network namespace: create " + sb.netns);
  // ICMP datagram sockets for every group, as Docker (20.10+) and containerd (2.0,
  // enable_unprivileged_icmp) set in a pod's namespace: an unprivileged agent can ping, and
  // the node's policy, seen by the world's witness, decides whether the echo gets out.
  // IPv6 as on a dual-stack cluster: an address of the documentation prefix, the node as
  // gateway; the node's policy decides what of it gets out (nft_rules.h).
  run_checked(in_netns(sb.netns, {"sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=0",
                                  "net.ipv6.conf.default.disable_ipv6=0", "net.ipv6.conf.all.accept_ra=0",
                                  "net.ipv6.conf.default.accept_ra=0", "net.ipv6.conf.default.accept_dad=0",
                                  "net.ipv4.ping_group_range=0 2147483647"}),
              "control network namespace: IPv6, unprivileged ICMP sockets");
  // One `ip -batch` per side instead of a process per step; a failing line is named in
  // the error (`Command failed -:N`). The names and addresses are the harness's own.
  const std::string veth = sb.egress.veth;
  sb.veth_created = true;
  run_checked(
      {"ip", "-n", world.node_ns(), "-batch", "-"},
      "control network namespace: veth " + veth + " to the node, its route", 30s,
      ip_batch({"link add " + veth + " type veth peer name eth0 netns " + sb.netns,
                "link set " + veth + " up", "route add " + sb.address + "/32 dev " + veth,
                "addr add " + std::string(world_addr::kSandboxGateway6) + "/64 dev " + veth + " nodad",
                "route add " + sb.egress.address6 + "/128 dev " + veth}));
  const std::string gateway = world_addr::kNodeJumpSide;
  run_checked({"ip", "-n", sb.netns, "-batch", "-"},
              "control network namespace: loopback, address, eth0 and routes of " + sb.netns, 30s,
              ip_batch({"link set lo up", "addr add " + sb.address + "/32 dev eth0", "link set eth0 up",
                        "route add " + gateway + " dev eth0 scope link",
                        "route add default via " + gateway + " dev eth0",
                        "addr add " + sb.egress.address6 + "/128 dev eth0 nodad",
                        "route add default via " + std::string(world_addr::kSandboxGateway6) + " dev eth0"}));
  sb.egress_added = true;
  write_file(world.name_proxy_rules_dir() + "/" + sb.address, name_proxy_rules(sb.egress));
  nft_apply(world.node_ns(), sandbox_egress_add(paths.run_id, sb.egress),
            "egress policy of sandbox " + sb.name);
}

// The image's resolver: the item's own when it has one, none for a sealed service.
std::string resolver_of(const DeployedSandbox& sb) {
  if (sb.egress.sealed) return "";
  return sb.egress.item_resolver.empty() ? world_addr::kResolver : sb.egress.item_resolver;
}

// The image of one sandbox: its user, its resolver, a host key of its own.
ImageSpec image_of(const DeployedSandbox& sb, const SandboxSpec& spec, const std::string& hostname) {
  ImageSpec image;
  image.rootfs = sb.dir + "/rootfs";
  image.hostname = hostname;
  image.uid = spec.uid;
  image.gid = spec.gid;
  image.sshd_config = sandbox_sshd_config("agent", 2222, weakened_sshd_serves_sftp(sb.weakenings));
  image.resolver = resolver_of(sb);
  image.key_comment = sb.container;
  image.workdir = spec.settings.working_dir;
  return image;
}

// The container. runsc's netstack cannot start here: it runs --network=host inside the
// sandbox's namespace (entered with nsenter, not `ip netns exec`, which remounts /sys).
void start_container(DeployedSandbox& sb, const LaunchContext& ctx) {
  const std::string root = ctx.paths->runtime_root(sb.runtime);
  std::error_code ec;
  fs::create_directories(root, ec);
  std::vector<std::string> argv;
  if (sb.runtime == OciRuntime::runc) {
    argv = {sb.runtime_bin, "--root", root, "run", "--detach", "--bundle", sb.dir, sb.container};
  } else {
    argv = in_netns(sb.netns, {sb.runtime_bin, "--root", root, "--platform=ptrace", "--network=host", "run",
                               "--detach", "--bundle", sb.dir, sb.container});
  }
  sb.container_started = true;
  run_detaching(ctx.helper_path, argv, sb.dir + "/container.log",
                std::string("runtime ") + oci_runtime_name(sb.runtime) + ": start sandbox " + sb.name,
                sb.adopter_pid, 60s);
}

json capability_facts(const DeployedSandbox& sb, const SandboxSpec& spec) {
  std::uint64_t mask = capability_mask(spec.capabilities);
  if (sb.runtime == OciRuntime::runsc) mask &= ~(std::uint64_t{1} << *capability_number("CAP_NET_RAW"));
  return {{"capabilities", spec.capabilities}, {"expected_cap_eff", capability_hex(mask)}};
}

// What every container of a sandbox has in its bundle: runtime, namespace, cgroup and CPUs
// of the node class, and the converted seccomp profile; the caller adds its process.
BundleInputs bundle_inputs(const DeployedSandbox& sb, const NodeClass& node_class,
                           const std::string& hostname, const json& seccomp) {
  BundleInputs in;
  in.runtime = sb.runtime;
  in.hostname = hostname;
  in.netns_path = netns_path(sb.netns);
  in.cgroups_path = "/" + sb.container;
  in.cpuset = node_class.cpuset;
  in.seccomp = seccomp;
  if (!std::filesystem::is_directory("/etc/alternatives")) in.host_alternatives.clear();
  return in;
}

// The agent sandbox's node class: a bounded noisy neighbour on its CPUs when the class
// asks for one.
void start_noisy_neighbour(DeployedSandbox& sb, const NodeClass& node_class,
                           const std::string& node_class_name, const LaunchContext& ctx) {
  if (!node_class.noisy_neighbour) return;
  auto pid = spawn_detached(
      in_netns(sb.netns, {ctx.helper_path, "noise", "--tag", sb.container, "--cpus", node_class.cpuset,
                          "--duty-percent", std::to_string(ctx.noisy_duty_percent), "--max-seconds", "7200"}),
      sb.dir + "/noise.log");
  if (!pid) throw InfraError("node class " + node_class_name + ": noisy neighbour: " + pid.error().message);
  sb.noise_pid = *pid;
}

json host_path_facts(const SandboxSpec& spec) {
  json out = json::array();
  for (const auto& h : spec.host_paths)
    out.push_back({{"source", h.host_path}, {"path", h.path}, {"read_only", h.read_only}});
  return out;
}

// What the result records about an agent sandbox (docs/CONTRACTS.md, sandbox facts).
json agent_sandbox_facts(const DeployedSandbox& sb, const SandboxSpec& spec, const NodeClass& node_class,
                         const std::string& node_class_name, const std::string& run_id,
                         std::size_t seccomp_rules) {
  json egress = {{"dns", sb.egress.dns},
                 {"addresses", sb.egress.addresses},
                 {"cidrs", sb.egress.cidrs},
                 {"enforced_by", "nftables in the node namespace"}};
  json scratch = json::array();
  for (const auto& s : spec.scratch) scratch.push_back(s.path);
  return {
      {"backend", scenario::backend_name(scenario::BackendKind::local)},
      {"run_id", run_id},
      {"container_id", sb.container},
      {"runtime", oci_runtime_name(sb.runtime)},
      {"runtime_class", spec.runtime_class.empty() ? json(nullptr) : json(spec.runtime_class)},
      {"runtime_binary", sb.runtime_bin},
      {"runtime_version", runtime_version(sb.runtime_bin)},
      {"platform", sb.runtime == OciRuntime::runsc ? "ptrace" : "native"},
      {"network_mode", sb.runtime == OciRuntime::runsc ? "host-in-netns" : "netns"},
      {"oci_seccomp_inside_gvisor", false},
      {"node_class", node_class_name},
      {"cpus", node_class.cpuset},
      {"noisy_neighbour", node_class.noisy_neighbour},
      {"address", sb.address},
      {"address6", sb.egress.address6},
      {"egress_index", sb.egress.index},
      {"netns", sb.netns},
      {"image", "host-os-view"},
      {"requested_image", spec.image},
      {"uid", spec.uid},
      {"gid", spec.gid},
      {"no_new_privileges", spec.no_new_privileges},
      {"seccomp", spec.seccomp},
      {"seccomp_rules", seccomp_rules},
      {"read_only_root", spec.read_only_root},
      {"scratch", scratch},
      {"host_paths", host_path_facts(spec)},
      {"service_account_token", spec.service_account_token},
      {"proc_unmasked", spec.proc_unmasked},
      {"gpu_requested", spec.gpu},
      {"service_settings", service_settings_facts(spec.settings)},
      {"gpu_available", false},
      {"egress", egress},
  };
}

}  // namespace

std::vector<std::string> exec_prefix(const DeployedSandbox& sb, const RunPaths& paths) {
  std::vector<std::string> argv = {sb.runtime_bin, "--root", paths.runtime_root(sb.runtime), "exec",
                                   sb.container};
  // runsc reaches its sandbox over an abstract unix socket, which lives in the network
  // namespace it was started in: from anywhere else the container reads as "stopped".
  return sb.runtime == OciRuntime::runsc ? in_netns(sb.netns, argv) : argv;
}

void launch_sandbox(DeployedSandbox& sb, const SandboxSpec& spec, const NodeClass& node_class,
                    const std::string& node_class_name, const std::string& authorized_key,
                    const LaunchContext& ctx) {
  const RunPaths& paths = *ctx.paths;
  World& world = *ctx.world;
  refuse_capabilities_unknown_to(sb.runtime, spec);
  json seccomp = load_seccomp(spec, ctx);
  std::size_t seccomp_rules = seccomp.is_null() ? 0 : seccomp["syscalls"].size();
  create_network(sb, ctx);

  // Image and bundle.
  ImageSpec image = image_of(sb, spec, sb.name);
  image.authorized_keys = authorized_key;
  std::string host_key = key_type_and_blob(build_image(image));

  BundleInputs in = bundle_inputs(sb, node_class, sb.name, seccomp);
  PodMounts pod = prepare_pod_mounts(spec, sb.dir, image.rootfs);
  in.service_account_dir = std::move(pod.service_account_dir);
  in.host_path_sources = std::move(pod.host_path_sources);
  in.args = {"/usr/sbin/sshd", "-D", "-e", "-f", "/etc/ssh/sshd_config"};
  json config = make_oci_config(spec, in);
  weaken_oci_config(sb.weakenings, config,
                    {sb.dir, sb.weakened_shared_dir, "/home/agent", spec.uid, spec.gid});
  write_file(sb.dir + "/config.json", config.dump(2));

  start_noisy_neighbour(sb, node_class, node_class_name, ctx);

  start_container(sb, ctx);
  try {
    world.wait_ssh_from_jumphost(sb.address, 2222, ctx.ssh_ready_ms);
  } catch (const InfraError& e) {
    throw InfraError(std::string(e.what()) + "\nsandbox log:\n" + log_tail(sb.dir + "/container.log"));
  }
  world.authorize(authorized_key);

  SandboxHandle& h = sb.handle;
  h.name = sb.name;
  h.route.jump =
      SshEndpoint{world.host_link().jump_address, world.jump_port(), World::kJumpUser, world.jump_host_key()};
  h.route.sandbox = SshEndpoint{sb.address, 2222, "agent", host_key};
  json facts = agent_sandbox_facts(sb, spec, node_class, node_class_name, paths.run_id, seccomp_rules);
  if (!sb.weakenings.empty()) facts["weakenings"] = sb.weakenings;
  facts.update(capability_facts(sb, spec));
  h.facts = SandboxFacts::from_json(facts);
}

namespace {

// Ready when the sibling's own listener answers inside its own namespace (no node policy
// between); else InfraError with its log.
void wait_for_sibling_listener(const DeployedSandbox& sb, const SandboxSpec& spec, const LaunchContext& ctx) {
  RunOptions wait;
  wait.deadline = std::chrono::milliseconds(ctx.ssh_ready_ms + 5000);
  auto banner =
      run_command(in_netns(sb.netns, {ctx.helper_path, "wait-banner", "--addr", sb.address, "--port",
                                      std::to_string(kSiblingPort), "--prefix", "isoprobe-serve",
                                      "--deadline-ms", std::to_string(ctx.ssh_ready_ms)}),
                  wait);
  if (!banner || !banner->ok())
    throw InfraError("sibling service " + spec.service + " (sandbox " + sb.name +
                     "): its listener did not answer " + "on port " + std::to_string(kSiblingPort) +
                     "; its log:\n" + log_tail(sb.dir + "/container.log"));
}

// The bundle directory, staged host paths unmounted first: removing it with one still
// bound would delete the host directory's own files, so it is kept then.
void remove_bundle(const std::string& dir) noexcept {
  try {
    const auto still_mounted = unmount_all_under(dir);
    for (const auto& m : still_mounted) log_teardown_step(false, "unmount " + m);
    if (!still_mounted.empty()) {
      log_teardown_step(false, "remove " + dir + ": kept, something is still mounted under it");
      return;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    log_teardown_step(!ec, "remove " + dir + (ec ? ": " + ec.message() : ""));
  } catch (...) {
    log_teardown_failure("remove " + dir);
  }
}

}  // namespace

void launch_sibling(DeployedSandbox& sb, const SandboxSpec& spec, const NodeClass& node_class,
                    const std::string& probe_bundle, const LaunchContext& ctx) {
  refuse_capabilities_unknown_to(sb.runtime, spec);
  json seccomp = load_seccomp(spec, ctx);
  create_network(sb, ctx);

  ImageSpec image = image_of(sb, spec, spec.service);  // sshd's files exist; sshd is not started
  build_image(image);
  std::error_code ec;
  fs::create_directories(image.rootfs + kSiblingProbeDir, ec);
  if (ec) throw InfraError("sandbox " + sb.name + ": cannot create the probe's mount point: " + ec.message());

  BundleInputs in = bundle_inputs(sb, node_class, spec.service, seccomp);
  PodMounts pod = prepare_pod_mounts(spec, sb.dir, image.rootfs);
  in.service_account_dir = std::move(pod.service_account_dir);
  in.host_path_sources = std::move(pod.host_path_sources);
  in.args = {std::string(kSiblingProbeDir) + "/isoprobe",
             "serve",
             "--port",
             std::to_string(kSiblingPort),
             "--name",
             spec.service,
             "--max-seconds",
             "7200"};
  in.ro_binds = {{probe_bundle, kSiblingProbeDir}};
  write_file(sb.dir + "/config.json", make_oci_config(spec, in).dump(2));
  start_container(sb, ctx);

  wait_for_sibling_listener(sb, spec, ctx);

  std::string mode = spec.network_mode.empty() ? "default" : spec.network_mode;
  sb.handle.name = sb.name;
  json facts = {
      {"service", spec.service},
      {"network_mode", mode},
      {"sandbox", sb.name},
      {"address", sb.address},
      {"port", kSiblingPort},
      {"runtime", oci_runtime_name(sb.runtime)},
      {"runtime_class", spec.runtime_class.empty() ? json(nullptr) : json(spec.runtime_class)},
      {"container_id", sb.container},
      {"netns", sb.netns},
      {"exec", exec_prefix(sb, *ctx.paths)},
      {"probe", std::string(kSiblingProbeDir) + "/isoprobe"},
      {"uid", spec.uid},
      {"no_new_privileges", spec.no_new_privileges},
      {"seccomp", spec.seccomp},
      {"read_only_root", spec.read_only_root},
      {"sealed", sb.egress.sealed},
      {"peers", sb.egress.peers},
      {"resolver", sb.egress.item_resolver.empty() ? json(nullptr) : json(sb.egress.item_resolver)},
  };
  facts.update(capability_facts(sb, spec));
  sb.handle.facts = SandboxFacts::from_json(facts);
}

void teardown_sandbox(DeployedSandbox& sb, const LaunchContext& ctx) noexcept {
  try {
    const RunPaths& paths = *ctx.paths;
    if (sb.container_started) {
      const std::string root = paths.runtime_root(sb.runtime);
      log_teardown_step(delete_container(sb.runtime, sb.runtime_bin, root, sb.container),
                        "delete container " + sb.container);
      sb.container_started = false;
    }
    reap_adopter(sb.adopter_pid);
    if (sb.noise_pid > 0) {
      terminate_process(sb.noise_pid, 500ms);
      sb.noise_pid = -1;
    }
    if (sb.egress_added) {
      nft_apply(ctx.world->node_ns(), sandbox_egress_remove(paths.run_id, sb.egress),
                "remove sandbox " + sb.name);
      std::error_code ec;
      fs::remove(ctx.world->name_proxy_rules_dir() + "/" + sb.address, ec);
      sb.egress_added = false;
    }
  } catch (...) {
    log_teardown_failure("sandbox " + sb.name + ": its container and egress rules");
  }
  try {
    // The veth pair goes now, by name. Deleting the namespace alone frees it only when the
    // last process holding the namespace is gone, and the next sandbox that gets this
    // index would find its node-side name still taken.
    if (sb.veth_created) {
      log_teardown_step(
          run_quietly({"ip", "-n", ctx.world->node_ns(), "link", "delete", sb.egress.veth}, 10s),
          "delete veth " + sb.egress.veth);
      sb.veth_created = false;
    }
    if (sb.netns_created) {
      RunOptions opts;
      opts.deadline = 10s;
      auto pids = run_command({"ip", "netns", "pids", sb.netns}, opts);
      if (pids && pids->ok()) {
        std::istringstream in(pids->out);
        long pid;
        while (in >> pid)
          if (pid > 1 && pid != ::getpid()) ::kill(static_cast<pid_t>(pid), SIGKILL);
      }
      log_teardown_step(run_quietly({"ip", "netns", "delete", sb.netns}, 10s), "delete netns " + sb.netns);
      sb.netns_created = false;
    }
    for (const char* ctl :
         {"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids", "systemd"}) {
      std::string cg = std::string("/sys/fs/cgroup/") + ctl + "/" + sb.container;
      ::rmdir(cg.c_str());
    }
    remove_bundle(sb.dir);
  } catch (...) {
    log_teardown_failure("sandbox " + sb.name + ": its network and files");
  }
}

}  // namespace isoharness::deploy::local
