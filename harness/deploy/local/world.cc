#include "harness/deploy/local/world.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <tuple>

#include "harness/common/error.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/image_builder.h"
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/oci_spec.h"
#include "harness/deploy/local/seccomp_profile.h"
#include "harness/deploy/local/sshd_config.h"

namespace isoharness::deploy::local {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Root-namespace addresses and routes, as CIDRs, from `ip -j`.
std::vector<Cidr> root_namespace_ranges() {
  std::vector<Cidr> out;
  auto addrs =
      json::parse(run_checked({"ip", "-j", "-4", "addr", "show"}, "scan host addresses").out, nullptr, false);
  for (const auto& link : addrs.is_array() ? addrs : json::array())
    for (const auto& a : link.value("addr_info", json::array())) {
      auto ip = parse_ipv4(a.value("local", ""));
      int prefix = a.value("prefixlen", 32);
      if (ip && prefix >= 0 && prefix <= 32) {
        std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
        out.push_back(Cidr{*ip & mask, prefix});
        out.push_back(Cidr{*ip, 32});
      }
    }
  auto routes =
      json::parse(run_checked({"ip", "-j", "-4", "route", "show", "table", "all"}, "scan host routes").out,
                  nullptr, false);
  for (const auto& r : routes.is_array() ? routes : json::array()) {
    auto c = parse_cidr(r.value("dst", ""));
    if (c) out.push_back(*c);
  }
  return out;
}

// Slots recorded by every world under the state root (live or crashed-but-not-cleaned).
std::vector<int> recorded_slots(const std::string& state_root) {
  std::vector<int> out;
  for (const auto& id : recorded_runs(state_root)) {
    auto j = json::parse(read_file_bounded(RunPaths{state_root, id}.world_dir() + "/world.json", 65536),
                         nullptr, false);
    if (!j.is_discarded() && j.contains("slot") && j["slot"].is_number_integer())
      out.push_back(j["slot"].get<int>());
  }
  return out;
}

std::string dnsmasq_config(const std::string& what, const std::string& listen,
                           const std::vector<std::pair<std::string, std::string>>& names,
                           ResolverForwarding forwarding = ResolverForwarding::none) {
  std::string c = "# isoharness " + what + ": answers these names, nothing else\n" +
                  "no-resolv\nno-hosts\nno-poll\nbind-interfaces\n";
  c += "listen-address=" + listen + "\nport=53\nuser=nobody\ngroup=nogroup\n";
  c += "log-facility=-\n";
  // No pid file: the default is one shared /var/run/dnsmasq.pid, which every resolver of
  // every run would race for (dnsmasq refuses to start when another one just created it).
  // The harness tracks each resolver by the PID it spawned.
  c += "pid-file=\n";
  // The canary zone goes to the witness only when the policy lets names out; a resolver
  // weakened to forward every name (selftest) sends everything it does not know there.
  if (forwarding == ResolverForwarding::witness_zone)
    c += fmt::format("server=/{}/{}\n", kWitnessZone, world_addr::kCanaryDns);
  if (forwarding == ResolverForwarding::every_name)
    c += fmt::format("server={}\n", world_addr::kCanaryDns);
  else
    c += "address=/#/\n";  // every other name: NXDOMAIN
  for (const auto& [name, address] : names) c += fmt::format("address=/{}/{}\n", name, address);
  return c;
}

std::vector<std::pair<std::string, std::string>> world_name_list() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& n : world_names()) out.emplace_back(n.name, n.address);
  return out;
}

std::string random_loopback_instance() {
  std::random_device rd;
  std::uniform_int_distribution<int> octet(1, 254);
  return "127." + std::to_string(octet(rd)) + "." + std::to_string(octet(rd)) + "." +
         std::to_string(octet(rd));
}

}  // namespace

World::World(const RunPaths& paths, const WorldOptions& options) : paths_(paths), options_(options) {
  try {
    build();
  } catch (...) {
    teardown();
    throw;
  }
}

World::~World() {
  teardown();
}

void World::build() {
  allocate_slot();
  build_namespaces();
  shape_jumphost_link();
  start_world_services();
  start_jumphost();
  start_link_relay();
}

void World::allocate_slot() {
  // One lock for every world on this machine that uses this state root: scan, choose,
  // record, and configure the host address before letting the next world scan.
  const std::string lock_path = paths_.state_root + "/.slots.lock";
  int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0) throw InfraError("world: cannot open " + lock_path);
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }
  } unlock{lock};
  bool locked = false;
  for (int i = 0; i < 300 && !locked; ++i) {
    locked = ::flock(lock, LOCK_EX | LOCK_NB) == 0;
    if (!locked) std::this_thread::sleep_for(100ms);
  }
  if (!locked) throw InfraError("world: " + lock_path + " stayed locked for 30 s");

  auto slot = free_world_slot(root_namespace_ranges(), recorded_slots(paths_.state_root));
  if (!slot)
    throw InfraError(
        "world: no free /30 for the host link in 198.51.100.128/25 (every slot is in use; "
        "`isoharness local cleanup --all` removes crashed runs)");
  link_ = local::host_link(*slot);
  write_file(
      paths_.world_dir() + "/world.json",
      json{{"slot", link_.slot}, {"host_address", link_.host_address}, {"jump_address", link_.jump_address}}
              .dump(2) +
          "\n");
  const std::string iface = host_iface_name(paths_.run_id);
  // The guard first: from here on, world addresses leave the host only through a host link.
  run_checked({"nft", "-f", "-"}, "world: host guard (nftables in the host namespace)", 20s,
              host_guard_ruleset(paths_.run_id));
  run_checked({"ip", "netns", "add", jump_ns()}, "world: create the jumphost namespace");
  run_checked({"ip", "link", "add", iface, "type", "veth", "peer", "name", "to-host", "netns", jump_ns()},
              "world: host link");
  run_checked({"ip", "addr", "add", link_.host_address + "/30", "dev", iface}, "world: host link address");
  run_checked({"ip", "link", "set", iface, "up"}, "world: host link up");
}

void World::build_namespaces() {
  const std::string node = node_ns(), jump = jump_ns(), world = world_ns();
  run_checked({"ip", "netns", "add", node}, "world: create the node namespace");
  run_checked({"ip", "netns", "add", world}, "world: create the world namespace");
  for (const auto& ns : {node, jump, world})
    run_checked({"ip", "-n", ns, "link", "set", "lo", "up"}, "world: loopback in " + ns);
  // IPv6 (documentation prefix only) in the node and the world; the jumphost stays IPv4.
  run_checked(in_netns(jump, {"sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                              "net.ipv6.conf.default.disable_ipv6=1"}),
              "world: disable IPv6 in " + jump);
  run_checked(in_netns(node, {"sysctl", "-q", "-w", "net.ipv4.ip_forward=1"}),
              "world: forwarding in the node");
  run_checked(in_netns(jump, {"sysctl", "-q", "-w", "net.ipv4.ip_unprivileged_port_start=22"}),
              "world: let the unprivileged jumphost sshd bind port 22");

  auto ip = [](const std::string& ns, std::vector<std::string> args, const std::string& what) {
    std::vector<std::string> argv = {"ip", "-n", ns};
    argv.insert(argv.end(), args.begin(), args.end());
    run_checked(argv, "world: " + what);
  };
  ip(jump, {"addr", "add", link_.jump_address + "/30", "dev", "to-host"}, "jumphost host-side address");
  ip(jump, {"link", "set", "to-host", "up"}, "jumphost host link up");
  ip(jump, {"link", "add", "to-node", "type", "veth", "peer", "name", "to-jump", "netns", node},
     "jumphost-node link");
  ip(jump, {"addr", "add", std::string(world_addr::kJumpNodeSide) + "/30", "dev", "to-node"},
     "jumphost address");
  ip(jump, {"link", "set", "to-node", "up"}, "jumphost link up");
  ip(node, {"addr", "add", std::string(world_addr::kNodeJumpSide) + "/30", "dev", "to-jump"}, "node address");
  ip(node, {"link", "set", "to-jump", "up"}, "node link up");
  ip(jump, {"route", "add", world_addr::kSandboxRange, "via", world_addr::kNodeJumpSide},
     "jumphost route to sandboxes");

  ip(node, {"link", "add", "to-world", "type", "veth", "peer", "name", "to-node", "netns", world},
     "node-world link");
  ip(node, {"addr", "add", std::string(world_addr::kNodeWorldSide) + "/30", "dev", "to-world"},
     "node world address");
  ip(node, {"link", "set", "to-world", "up"}, "node world link up");
  ip(world, {"addr", "add", std::string(world_addr::kWorldNodeSide) + "/30", "dev", "to-node"},
     "world address");
  ip(world, {"link", "set", "to-node", "up"}, "world link up");
  for (const auto& range : world_ranges())
    ip(node, {"route", "add", range, "via", world_addr::kWorldNodeSide}, "node route to " + range);
  build_ipv6_links();
  ip(world, {"route", "add", world_addr::kSandboxRange, "via", world_addr::kNodeWorldSide},
     "world route back");
  for (const char* a :
       {world_addr::kTarget, world_addr::kBlocked, world_addr::kClusterApi, world_addr::kResolver,
        world_addr::kMetadata, world_addr::kCidrHost, world_addr::kCanary, world_addr::kCanaryDns})
    ip(world, {"addr", "add", std::string(a) + "/32", "dev", "lo"},
       std::string("world service address ") + a);

  // The name proxy's upstream replies (nft_rules.h): marked packets are for a local socket.
  ip(node, {"rule", "add", "fwmark", std::to_string(kProxyMark), "lookup", std::to_string(kProxyTable)},
     "node rule for the name proxy's replies");
  ip(node, {"route", "add", "local", "0.0.0.0/0", "dev", "lo", "table", std::to_string(kProxyTable)},
     "node local route for the name proxy's replies");
  nft_apply(node, node_ruleset(paths_.run_id, "to-jump", options_.platform_ingress), "node egress policy");
  nft_apply(jump, jumphost_ruleset(paths_.run_id, "to-host", jump_port() == 22 ? 0 : kRelayPort),
            "jumphost filter");
}

// The profile's jumphost_link loss on the host link, with nftables in the jumphost
// namespace. Its round trip is the link relay's (start_link_relay).
void World::shape_jumphost_link() {
  const LinkShape& link = options_.jumphost_link;
  if (link.loss_percent > 0)
    nft_apply(
        jump_ns(),
        link_loss_ruleset(paths_.run_id, "to-host", static_cast<int>(std::lround(link.loss_percent * 100))),
        "jumphost link loss");
}

// The far link's round trip: the relay (tools/relay.cc) listens on the jumphost's address
// at kRelayPort, inside the jumphost namespace, and forwards to its sshd on port 22,
// holding every byte rtt/2 each way. The harness's endpoint for the jumphost points at it
// (jump_port()); it is one of the world's children, stopped at teardown.
void World::start_link_relay() {
  const int rtt = options_.jumphost_link.rtt_ms;
  if (rtt <= 0) return;
  const std::string dir = paths_.world_dir();
  const std::string port = std::to_string(kRelayPort);
  spawn_in(jump_ns(),
           {options_.helper_path, "relay", "--tag", "ih-" + paths_.run_id, "--max-seconds", "86400",
            "--listen", link_.jump_address + ":" + port, "--to", link_.jump_address + ":22", "--delay-us",
            std::to_string(rtt * 500)},
           dir + "/relay.log", "jumphost link relay");
  RunOptions wait;
  wait.deadline = 20s;
  auto banner = run_command({options_.helper_path, "wait-banner", "--addr", link_.jump_address, "--port",
                             port, "--deadline-ms", "15000"},
                            wait);
  if (!banner || !banner->ok())
    throw InfraError("world: the jumphost sshd did not answer through the link relay on " +
                     link_.jump_address + ":" + port + " (" +
                     (banner ? banner->describe() : banner.error().message) + "); the relay's log:\n" +
                     log_tail(dir + "/relay.log"));
}

void World::build_ipv6_links() {
  const std::string node = node_ns(), world = world_ns();
  for (const auto& ns : {node, world})
    run_checked(in_netns(ns, {"sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=0",
                              "net.ipv6.conf.default.disable_ipv6=0", "net.ipv6.conf.all.accept_ra=0",
                              "net.ipv6.conf.default.accept_ra=0", "net.ipv6.conf.default.accept_dad=0"}),
                "world: IPv6 in " + ns);
  run_checked(in_netns(node, {"sysctl", "-q", "-w", "net.ipv6.conf.all.forwarding=1"}),
              "world: IPv6 forwarding in the node");
  auto ip = [](const std::string& ns, std::vector<std::string> args, const std::string& what) {
    std::vector<std::string> argv = {"ip", "-n", ns};
    argv.insert(argv.end(), args.begin(), args.end());
    run_checked(argv, "world: " + what);
  };
  ip(node, {"addr", "add", std::string(world_addr::kNodeWorldSide6) + "/64", "dev", "to-world", "nodad"},
     "node world IPv6 address");
  ip(world, {"addr", "add", std::string(world_addr::kWorldNodeSide6) + "/64", "dev", "to-node", "nodad"},
     "world IPv6 address");
  ip(node, {"route", "add", world_addr::kInternet6, "via", world_addr::kWorldNodeSide6}, "node IPv6 route");
  ip(world, {"route", "add", world_addr::kSandboxRange6, "via", world_addr::kNodeWorldSide6},
     "world IPv6 route back");
  for (const char* a : {world_addr::kCanary6, world_addr::kClusterApi6, world_addr::kMetadata6})
    ip(world, {"addr", "add", std::string(a) + "/128", "dev", "lo", "nodad"},
       std::string("world IPv6 service address ") + a);
}

pid_t World::spawn_in(const std::string& ns, const std::vector<std::string>& argv, const std::string& log,
                      const std::string& what) {
  auto pid = spawn_detached(in_netns(ns, argv), log);
  if (!pid) throw InfraError("world: " + what + ": " + pid.error().message);
  std::lock_guard<std::mutex> lock(children_mutex_);
  children_.push_back(*pid);
  return *pid;
}

namespace {

// The world's small servers (isoharness-world-helper serve): NAME=ADDR:PORT/PROTO each.
std::vector<std::string> world_server_listens() {
  const std::string cidr_port = std::to_string(kCidrHostExtraPort);
  return {std::string("target=") + world_addr::kTarget + ":80/http",
          std::string("target-tls=") + world_addr::kTarget + ":443/tcp",
          std::string("blocked=") + world_addr::kBlocked + ":80/http",
          std::string("cluster-api=") + world_addr::kClusterApi + ":443/tcp",
          std::string("metadata=") + world_addr::kMetadata + ":80/http",
          std::string("cidr-host=") + world_addr::kCidrHost + ":80/http",
          std::string("cidr-host-port=") + world_addr::kCidrHost + ":" + cidr_port + "/tcp",
          std::string("canary=") + world_addr::kCanary + ":443/tcp",
          std::string("canary6=[") + world_addr::kCanary6 + "]:443/tcp",
          std::string("cluster-api6=[") + world_addr::kClusterApi6 + "]:443/tcp",
          std::string("metadata6=[") + world_addr::kMetadata6 + "]:80/http"};
}

}  // namespace

void World::serve_domain_ports(const std::vector<AddressPort>& ports) {
  std::lock_guard<std::mutex> lock(served_mutex_);
  for (const auto& p : ports) {
    if (p.protocol == "udp") continue;  // the witness sees datagrams arrive; nothing answers UDP
    const std::string where = p.address + ":" + std::to_string(p.port);
    bool held = std::find(served_ports_.begin(), served_ports_.end(), where) != served_ports_.end();
    for (const auto& listen : world_server_listens())
      held = held || listen.find("=" + where + "/") != std::string::npos;
    if (held) continue;
    const std::string name = "domain-port-" + std::to_string(p.port);
    spawn_in(world_ns(),
             {options_.helper_path, "serve", "--tag", "ih-" + paths_.run_id, "--max-seconds", "86400",
              "--listen", name + "=" + where + "/tcp"},
             paths_.world_dir() + "/" + name + ".log", "allowDomainsPorts server " + where);
    served_ports_.push_back(where);
  }
}

void World::start_world_services() {
  const std::string dir = paths_.world_dir();
  write_file(dir + "/dnsmasq.conf",
             dnsmasq_config("world resolver", world_addr::kResolver, world_name_list()));
  pid_t dns = spawn_in(
      world_ns(), {find_program("dnsmasq"), "--keep-in-foreground", "--conf-file=" + dir + "/dnsmasq.conf"},
      dir + "/dnsmasq.log", "dnsmasq");
  const std::string tag = "ih-" + paths_.run_id;
  std::vector<std::string> serve = {options_.helper_path, "serve", "--tag", tag, "--max-seconds", "86400"};
  for (const auto& listen : world_server_listens()) {
    serve.emplace_back("--listen");
    serve.push_back(listen);
  }
  pid_t servers = spawn_in(world_ns(), serve, dir + "/servers.log", "world servers");
  pid_t witness = witness_pid_ = start_witness();
  pid_t name_proxy = start_name_proxy();
  // The witness's log over HTTP from the jumphost's host-link address, as an operator's
  // witness serves its own (hawk backend, docs/CONTRACTS.md §4.4).
  pid_t log_server =
      spawn_in(jump_ns(),
               {options_.helper_path, "serve-witness-log", "--tag", tag, "--max-seconds", "86400", "--listen",
                link_.jump_address + ":" + std::to_string(kWitnessLogPort), "--file", witness_log_path(),
                "--path", kWitnessLogPath, "--key-file", witness_key_file()},
               dir + "/witness-log-server.err", "witness log server");
  std::this_thread::sleep_for(150ms);
  for (auto [pid, name, log] :
       {std::tuple{dns, "dnsmasq", "/dnsmasq.log"}, std::tuple{servers, "world servers", "/servers.log"},
        std::tuple{witness, "witness", "/witness.err"},
        std::tuple{log_server, "witness log server", "/witness-log-server.err"},
        std::tuple{name_proxy, "name proxy", "/name-proxy.log"}}) {
    int status;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      children_.erase(std::remove(children_.begin(), children_.end(), pid), children_.end());
      throw InfraError(std::string("world: ") + name + " exited at start:\n" + log_tail(dir + log));
    }
  }
}

// The outside witness (tools/witness.cc) on the world's link to the node: what it logs
// arrived in the world, past every wall of the node.
pid_t World::start_witness() {
  const std::string dir = paths_.world_dir();
  return spawn_in(world_ns(),
                  {options_.helper_path,
                   "witness",
                   "--tag",
                   "ih-" + paths_.run_id,
                   "--max-seconds",
                   "86400",
                   "--log",
                   witness_log_path(),
                   "--iface",
                   "to-node",
                   "--zone",
                   kWitnessZone,
                   "--zone-address",
                   world_addr::kCanaryDns,
                   "--canary",
                   world_addr::kCanary,
                   "--canary6",
                   world_addr::kCanary6,
                   "--canary-udp-port",
                   "53",
                   "--canary-udp-port",
                   "443"},
                  dir + "/witness.err", "outside witness");
}

void World::kill_witness() {
  std::lock_guard<std::mutex> lock(children_mutex_);
  const auto it = std::find(children_.begin(), children_.end(), witness_pid_);
  if (witness_pid_ <= 0 || it == children_.end() || ::kill(witness_pid_, SIGKILL) != 0)
    throw InfraError("world: the witness to kill is not running");
  int status;
  (void)::waitpid(witness_pid_, &status, 0);
  children_.erase(it);
  witness_pid_ = -1;
}

void World::restart_witness() {
  if (witness_pid_ > 0) return;  // not killed
  const pid_t pid = start_witness();
  std::this_thread::sleep_for(150ms);
  int status;
  if (::waitpid(pid, &status, WNOHANG) == pid) {
    std::lock_guard<std::mutex> lock(children_mutex_);
    children_.erase(std::remove(children_.begin(), children_.end(), pid), children_.end());
    throw InfraError("world: the restarted witness exited at start:\n" +
                     log_tail(paths_.world_dir() + "/witness.err"));
  }
  witness_pid_ = pid;
}

// The node's name-checking proxy for allow-listed names (tools/name_proxy.cc).
pid_t World::start_name_proxy() {
  std::error_code ec;
  fs::create_directories(name_proxy_rules_dir(), ec);
  if (ec) throw InfraError("world: cannot create " + name_proxy_rules_dir() + ": " + ec.message());
  return spawn_in(
      node_ns(),
      {options_.helper_path, "name-proxy", "--tag", "ih-" + paths_.run_id, "--max-seconds", "86400",
       "--listen", std::string(world_addr::kNodeJumpSide) + ":" + std::to_string(world_addr::kNameProxyPort),
       "--rules", name_proxy_rules_dir(), "--decisions", name_proxy_decisions_path(), "--max-connections",
       "64"},
      paths_.world_dir() + "/name-proxy.log", "name proxy");
}

std::string World::witness_key_file() const {
  if (const char* given = std::getenv(kWitnessKeyEnv); given && *given) return given;
  std::string path = paths_.world_dir() + "/witness-log.key";
  std::random_device random;
  std::string token;
  for (int i = 0; i < 32; ++i) token += "0123456789abcdef"[random() % 16];
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const bool written =
      fd >= 0 && ::write(fd, token.data(), token.size()) == static_cast<ssize_t>(token.size());
  if (fd >= 0) ::close(fd);
  if (!written) throw InfraError("cannot write the witness log's token to " + path);
  return path;
}

std::string World::witness_log_path() const {
  return paths_.world_dir() + "/witness.log";
}

void World::start_jumphost() {
  const std::string dir = paths_.world_dir() + "/jump";
  fs::create_directories(dir);
  std::vector<std::string> permit;
  permit.reserve(kMaxSandboxes);
  for (int i = 0; i < kMaxSandboxes; ++i) permit.push_back(sandbox_address(i) + ":2222");
  ImageSpec image;
  image.rootfs = dir + "/rootfs";
  image.hostname = "jumphost";
  image.user = kJumpUser;
  image.home = "/home/jump";
  image.sshd_config = jumphost_sshd_config(kJumpUser, link_.jump_address, permit);
  image.key_comment = "ih-" + paths_.run_id + "-jumphost";
  std::string pub = build_image(image);
  jump_host_key_ = pub.substr(0, pub.find(' ', pub.find(' ') + 1));

  SandboxSpec spec;  // the jumphost gets the strict posture, read-only root
  spec.drop_all = true;
  spec.no_new_privileges = true;
  spec.read_only_root = true;
  auto seccomp =
      load_default_seccomp(options_.seccomp_profile, SeccompTarget{"amd64", options_.kernel_release, {}});
  if (!seccomp) throw InfraError("world: jumphost seccomp: " + seccomp.error().message);
  BundleInputs in;
  in.runtime = OciRuntime::runc;
  in.hostname = "jumphost";
  in.netns_path = netns_path(jump_ns());
  in.cgroups_path = "/" + container_id(paths_.run_id, "jumphost");
  in.args = {"/usr/sbin/sshd", "-D", "-e", "-f", "/etc/ssh/sshd_config"};
  in.seccomp = *seccomp;
  write_file(dir + "/config.json", make_oci_config(spec, in).dump(2));
  const std::string root = paths_.runtime_root(OciRuntime::runc);
  fs::create_directories(root);
  run_detaching(options_.helper_path,
                {find_program("runc"), "--root", root, "run", "--detach", "--bundle", dir,
                 container_id(paths_.run_id, "jumphost")},
                dir + "/container.log", "world: start the jumphost sshd (runc)", jump_adopter_);
  // From the host's own namespace: the jumphost is the one thing the host reaches.
  RunOptions wait;
  wait.deadline = 20s;
  auto banner = run_command({options_.helper_path, "wait-banner", "--addr", link_.jump_address, "--port",
                             "22", "--deadline-ms", "15000"},
                            wait);
  if (!banner || !banner->ok())
    throw InfraError("world: the jumphost sshd did not answer on " + link_.jump_address + ":22 (" +
                     (banner ? banner->describe() : banner.error().message) + "); its log:\n" +
                     log_tail(dir + "/container.log"));
}

void World::authorize(const std::string& key_line) {
  std::lock_guard<std::mutex> lock(keys_mutex_);
  add_authorized_key(paths_.world_dir() + "/jump/rootfs/etc/ssh/authorized_keys", key_line, 1000, 1000);
}

void World::wait_ssh_from_jumphost(const std::string& addr, int port, int deadline_ms) const {
  run_checked(in_netns(jump_ns(), {options_.helper_path, "wait-banner", "--addr", addr, "--port",
                                   std::to_string(port), "--deadline-ms", std::to_string(deadline_ms)}),
              "sandbox sshd on " + addr + ":" + std::to_string(port) + " as seen from the jumphost",
              std::chrono::milliseconds(deadline_ms + 5000));
}

ItemResolver World::start_item_resolver(const std::string& tag, const std::string& address,
                                        const std::vector<std::pair<std::string, std::string>>& names,
                                        ResolverForwarding forwarding) {
  ItemResolver r;
  r.instance = random_loopback_instance();
  r.config_path = paths_.world_dir() + "/resolver-" + tag + ".conf";
  auto all = names;
  all.emplace_back(kResolverInstanceName, r.instance);
  write_file(r.config_path, dnsmasq_config("resolver of " + tag, address, all, forwarding));
  run_checked({"ip", "-n", world_ns(), "addr", "add", address + "/32", "dev", "lo"},
              "item resolver " + tag + ": address " + address);
  r.address = address;
  const std::string log = paths_.world_dir() + "/resolver-" + tag + ".log";
  try {
    r.pid = spawn_in(world_ns(),
                     {find_program("dnsmasq"), "--keep-in-foreground", "--conf-file=" + r.config_path}, log,
                     "item resolver " + tag);
    // dnsmasq binds before it answers; a second look tells a bind failure from a start.
    for (int i = 0; i < 3; ++i) {
      std::this_thread::sleep_for(100ms);
      int status;
      if (::waitpid(r.pid, &status, WNOHANG) == r.pid) {
        r.pid = -1;
        throw InfraError(fmt::format("item resolver {} (dnsmasq on {}) exited at start:\n{}", tag, address,
                                     log_tail(log)));
      }
    }
  } catch (...) {
    stop_item_resolver(r);
    throw;
  }
  return r;
}

void World::stop_item_resolver(ItemResolver& r) noexcept {
  try {
    if (r.pid > 0) {
      terminate_process(r.pid, 1000ms);
      std::lock_guard<std::mutex> lock(children_mutex_);
      children_.erase(std::remove(children_.begin(), children_.end(), r.pid), children_.end());
    }
    r.pid = -1;
    if (!r.address.empty())
      log_teardown_step(
          run_quietly({"ip", "-n", world_ns(), "addr", "del", r.address + "/32", "dev", "lo"}, 10s),
          "remove the item resolver's address " + r.address);
    r.address.clear();
    std::error_code ec;
    if (!r.config_path.empty()) fs::remove(r.config_path, ec);
  } catch (...) {
    log_teardown_failure("item resolver");
  }
}

void World::teardown() noexcept {
  try {
    // The jumphost goes first, while its adopter still reaps its sshd; the run's cleanup
    // would find it otherwise, and wait for PID 1 to reap it.
    if (jump_adopter_ > 0) {
      log_teardown_step(
          delete_container(OciRuntime::runc, find_program("runc"), paths_.runtime_root(OciRuntime::runc),
                           container_id(paths_.run_id, "jumphost")),
          "delete the jumphost container");
      reap_adopter(jump_adopter_);
    }
  } catch (...) {
    log_teardown_failure("the jumphost");
  }
  try {
    std::lock_guard<std::mutex> lock(children_mutex_);
    for (pid_t pid : children_) terminate_process(pid, 1000ms);
    children_.clear();
  } catch (...) {
    log_teardown_failure("the world's processes");
  }
}

}  // namespace isoharness::deploy::local
