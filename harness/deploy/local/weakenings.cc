#include "harness/deploy/local/weakenings.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <thread>

#include "harness/common/error.h"
#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/nft_rules.h"
#include "harness/deploy/local/world.h"

namespace isoharness::deploy::local {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

bool named(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void drop_namespace(json& config, const char* type) {
  auto& ns = config["linux"]["namespaces"];
  json kept = json::array();
  for (const auto& n : ns)
    if (n.value("type", std::string()) != type) kept.push_back(n);
  ns = kept;
}

// A directory holding a socket inode where containerd's API socket would be; nothing
// listens on it. The probe judges by the path, as it would a live one.
std::string make_socket_dir(const std::string& bundle_dir) {
  std::string dir = bundle_dir + "/containerd-run";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InfraError("weakening oci:runtime-socket: cannot create " + dir + ": " + ec.message());
  const std::string path = dir + "/containerd.sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw InfraError("weakening oci:runtime-socket: path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw InfraError("weakening oci:runtime-socket: socket(): " + std::string(std::strerror(errno)));
  ::unlink(path.c_str());
  int rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  int err = errno;
  ::close(fd);
  if (rc != 0) throw InfraError("weakening oci:runtime-socket: bind " + path + ": " + std::strerror(err));
  return dir;
}

// The home directory from a directory that outlives the sandbox, so the next attempt of
// the same item finds what this one left.
void reuse_home(json& config, const OciWeakeningTarget& t) {
  std::error_code ec;
  fs::create_directories(t.shared_dir, ec);
  if (ec || ::chown(t.shared_dir.c_str(), static_cast<uid_t>(t.uid), static_cast<gid_t>(t.gid)) != 0)
    throw InfraError("weakening oci:reused-home: cannot prepare " + t.shared_dir);
  json bind = {{"destination", t.home},
               {"type", "bind"},
               {"source", t.shared_dir},
               {"options", {"rbind", "rw", "nosuid", "nodev"}}};
  for (auto& m : config["mounts"]) {
    if (m.value("destination", std::string()) == t.home) {
      m = bind;
      return;
    }
  }
  config["mounts"].push_back(bind);
}

// /sys/fs/cgroup without "ro", as a privileged container has it: on a cgroup v1 host a
// root process could then write a hierarchy's release_agent.
void writable_cgroup_mount(json& config) {
  for (auto& m : config["mounts"]) {
    if (m.value("destination", std::string()) != "/sys/fs/cgroup") continue;
    json kept = json::array();
    for (const auto& o : m["options"])
      if (o != "ro") kept.push_back(o);
    kept.push_back("rw");
    m["options"] = kept;
  }
}

// Sends `count` UDP datagrams to the canary host from inside the network namespace (a
// thread joins it: a network namespace is a thread's own), paced so the witness's packet
// socket keeps up. Bounded by count; each send is non-blocking.
void flood_canary_from(const std::string& netns, long count) {
  using namespace std::chrono_literals;
  std::string error;
  std::thread sender([&] {
    const int ns = ::open(netns_path(netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0 || ::setns(ns, CLONE_NEWNET) != 0) {
      error = "cannot join " + netns + ": " + std::strerror(errno);
      if (ns >= 0) ::close(ns);
      return;
    }
    ::close(ns);
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = std::string("socket(): ") + std::strerror(errno);
      return;
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(443);
    ::inet_pton(AF_INET, world_addr::kCanary, &to.sin_addr);
    constexpr std::string_view kPayload = "isoharness selftest: flooding the witness";
    for (long i = 0; i < count; ++i) {
      (void)::sendto(fd, kPayload.data(), kPayload.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                     sizeof to);
      if (i % 100 == 99) std::this_thread::sleep_for(2ms);
    }
    ::close(fd);
  });
  sender.join();
  if (!error.empty()) throw InfraError("weakening witness:flooded: " + error);
}

// Floods until the witness's log has the "quota" line for the sandbox's address (a few
// rounds at most: the witness may miss datagrams under load).
void flood_witness(const EvidenceWeakeningTarget& t) {
  using namespace std::chrono_literals;
  const std::string marker = " quota " + t.address + " ";
  constexpr long kDatagrams = 12000;  // past the witness's 10,000 lines per source
  for (int round = 0; round < 3; ++round) {
    flood_canary_from(t.netns, kDatagrams);
    for (int wait = 0; wait < 30; ++wait) {
      std::this_thread::sleep_for(100ms);
      if (read_file_bounded(t.world->witness_log_path(), std::size_t{48} << 20).find(marker) !=
          std::string::npos)
        return;
    }
  }
  throw InfraError("weakening witness:flooded: the witness never stopped logging " + t.address +
                   " (no quota line after 3 floods of " + std::to_string(kDatagrams) + " datagrams)");
}

// Drops, in the sandbox's own namespace, everything it starts sending (replies to the
// harness's SSH still leave): its probe's attempts never reach the node.
void drop_own_output(const EvidenceWeakeningTarget& t) {
  nft_apply(t.netns,
            "table inet isoharness_sends_nothing {\n"
            "  chain output {\n"
            "    type filter hook output priority 0; policy accept;\n"
            "    ct state established,related accept\n"
            "    oifname \"lo\" accept\n"
            "    drop\n"
            "  }\n"
            "}\n",
            "weakening sandbox:sends-nothing");
}

}  // namespace

void weaken_evidence(const std::vector<std::string>& names, const EvidenceWeakeningTarget& t) {
  ISOHARNESS_CHECK(t.world != nullptr);
  if (named(names, kWeakenWitnessFlooded)) {
    if (!named(names, kWeakenAllowUdp))
      throw InfraError("weakening witness:flooded needs nft:allow-udp: its datagrams must reach the world");
    flood_witness(t);
  }
  if (named(names, kWeakenSendsNothing)) drop_own_output(t);
  if (named(names, kWeakenWitnessKilled)) t.world->kill_witness();
}

void unweaken_evidence(const std::vector<std::string>& names, World& world) {
  if (named(names, kWeakenWitnessKilled)) world.restart_witness();
}

void weaken_witness_log(const std::vector<std::string>& names, const std::string& log_path) {
  if (named(names, kWeakenWitnessLogTruncated) && ::truncate(log_path.c_str(), 0) != 0)
    throw InfraError("weakening witness:log-truncated: cannot truncate " + log_path + ": " +
                     std::strerror(errno));
}

const std::vector<BackendWeakening>& backend_weakenings() {
  static const std::vector<BackendWeakening> all = {
      {"nft:allow-metadata", "nftables", "the sandbox's egress chain accepts the metadata address"},
      {"nft:allow-unlisted-host", "nftables", "the egress chain accepts blocked.example.com's address"},
      {"nft:allow-cluster-api", "nftables", "the egress chain accepts the cluster API's address"},
      {"nft:allow-sandboxes", "nftables",
       "the egress chain accepts the other sandboxes' range on every port (allowEntities: [cluster])"},
      {kWeakenAllowSandboxSsh, "nftables",
       "the egress chain accepts tcp 2222 to the other sandboxes (the runner's policy for the baseliner's "
       "sshd)"},
      {"nft:allow-dns", "nftables", "the egress chain accepts DNS to the world resolver"},
      {"oci:runtime-socket", "oci", "a directory with containerd.sock is bind-mounted at /run/containerd"},
      {"oci:host-pid", "oci", "no PID namespace: the sandbox shares the host's"},
      {"oci:host-uts", "oci", "no UTS namespace: the sandbox shares the host's hostname"},
      {"oci:host-device", "oci", "the host's /dev/kmsg is passed in (read access)"},
      {"oci:debugfs", "oci", "debugfs is mounted at /sys/kernel/debug"},
      {"oci:reused-home", "oci", "the home directory is a host directory every attempt of the item shares"},
      {"none-sibling-reachable", "nftables",
       "an item's network_mode none siblings accept the agent (not sealed)"},
      {"oci:cgroup-rw", "oci",
       "the cgroup filesystem is mounted writable (a privileged container's cgroups)"},
      {kWeakenAllowUdp, "nftables", "the egress chain accepts every UDP datagram (a policy written for TCP)"},
      {kWeakenAllowIcmp, "nftables", "the egress chain accepts every ICMP packet (ping tunnels)"},
      {kWeakenForwardEveryName, "dns", "the item's resolver forwards every name it does not know upstream"},
      {kWeakenAllowIpv6, "nftables",
       "the egress chain accepts every IPv6 packet (a policy written for IPv4)"},
      {"sshd:no-sftp", "sshd", "the sandbox's sshd has no SFTP subsystem (as dropbear or a minimal sshd)"},
      {kWeakenDomainsAnyPort, "nftables",
       "allow-listed domains' addresses are open on every port and protocol, not TCP 80/443 only"},
      {kWeakenDomainsOneMorePort, "nftables",
       "allow-listed domains' addresses are open on one TCP port more than allowDomainsPorts lists"},
      {kWeakenSniUnchecked, "proxy",
       "the name proxy forwards TLS to a listed address whatever its server name"},
      {kWeakenHostUnchecked, "proxy", "the name proxy forwards HTTP to a listed address whatever its Host"},
      {kWeakenWitnessKilled, "witness", "the world's witness is killed once the sandbox is up"},
      {kWeakenWitnessLogTruncated, "witness",
       "the witness's log is emptied after the probe, before it is read"},
      {kWeakenWitnessFlooded, "witness", "the sandbox floods the witness until it stops logging the sandbox"},
      {kWeakenSendsNothing, "sandbox", "nothing the sandbox starts sending leaves its network namespace"},
  };
  return all;
}

void check_weakenings(const std::vector<std::string>& names, const std::string& sandbox) {
  std::string unknown;
  for (const auto& n : names) {
    const auto& all = backend_weakenings();
    bool known = std::any_of(all.begin(), all.end(), [&](const BackendWeakening& w) { return n == w.name; });
    if (!known) unknown += (unknown.empty() ? "" : ", ") + n;
  }
  if (!unknown.empty())
    throw UserError("sandbox " + sandbox + ": the local backend knows no weakening named " + unknown +
                    " (see harness/deploy/local/weakenings.cc)");
}

std::vector<std::string> weakened_egress_accepts(const std::vector<std::string>& names) {
  const std::string resolver = std::string("ip daddr ") + world_addr::kResolver;
  std::vector<std::string> out;
  if (named(names, "nft:allow-metadata")) out.push_back(std::string("ip daddr ") + world_addr::kMetadata);
  if (named(names, "nft:allow-unlisted-host")) out.push_back(std::string("ip daddr ") + world_addr::kBlocked);
  if (named(names, "nft:allow-cluster-api"))
    out.push_back(std::string("ip daddr ") + world_addr::kClusterApi);
  if (named(names, "nft:allow-sandboxes")) {
    out.push_back(std::string("ip daddr ") + world_addr::kSandboxRange);
    out.push_back(std::string("ip6 daddr ") + world_addr::kSandboxRange6);
  }
  if (named(names, kWeakenAllowSandboxSsh)) {
    out.push_back(std::string("ip daddr ") + world_addr::kSandboxRange + " tcp dport 2222");
    out.push_back(std::string("ip6 daddr ") + world_addr::kSandboxRange6 + " tcp dport 2222");
  }
  if (named(names, "nft:allow-dns")) {
    out.push_back(resolver + " udp dport 53");
    out.push_back(resolver + " tcp dport 53");
  }
  if (named(names, kWeakenAllowUdp)) out.emplace_back("meta l4proto udp");
  if (named(names, kWeakenAllowIcmp)) out.emplace_back("meta l4proto icmp");
  if (named(names, kWeakenAllowIpv6)) out.emplace_back("meta nfproto ipv6");
  return out;
}

void weaken_allow_list_scope(const std::vector<std::string>& names, SandboxEgress& e) {
  e.domains_any_port = named(names, kWeakenDomainsAnyPort);
  if (named(names, kWeakenDomainsOneMorePort)) {
    std::vector<int> tcp;
    for (const auto& d : e.domain_ports)
      if (d.protocol != "udp") tcp.push_back(d.port);
    const int extra = unlisted_domain_port(tcp);
    for (const auto& a : e.addresses) e.domain_ports.push_back(AddressPort{a, "tcp", extra});
  }
  e.proxy_skips_sni = named(names, kWeakenSniUnchecked);
  e.proxy_skips_host = named(names, kWeakenHostUnchecked);
}

bool weakened_sshd_serves_sftp(const std::vector<std::string>& names) {
  return !named(names, "sshd:no-sftp");
}

std::string weakened_shared_dir(const std::string& run_dir, const std::string& item_id) {
  std::string key;
  for (char c : item_id) key += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  return run_dir + "/weakened/" + key.substr(0, 120);
}

void weaken_oci_config(const std::vector<std::string>& names, json& config, const OciWeakeningTarget& t) {
  if (named(names, "oci:runtime-socket")) {
    // The socket's directory, as a node's /run/containerd is mounted in: runsc's gofer
    // refuses to bind a socket by itself, and serves it inside a directory.
    config["mounts"].push_back({{"destination", "/run/containerd"},
                                {"type", "bind"},
                                {"source", make_socket_dir(t.bundle_dir)},
                                {"options", {"rbind", "ro"}}});
  }
  if (named(names, "oci:host-pid")) drop_namespace(config, "pid");
  if (named(names, "oci:host-uts")) {
    drop_namespace(config, "uts");
    config.erase("hostname");  // runc refuses a hostname without a UTS namespace
  }
  if (named(names, "oci:host-device")) {
    config["linux"]["devices"] = json::array({{{"path", "/dev/kmsg"},
                                               {"type", "c"},
                                               {"major", 1},
                                               {"minor", 11},
                                               {"fileMode", 0444},
                                               {"uid", 0},
                                               {"gid", 0}}});
    config["linux"]["resources"]["devices"].push_back(
        {{"allow", true}, {"type", "c"}, {"major", 1}, {"minor", 11}, {"access", "r"}});
  }
  if (named(names, "oci:debugfs")) {
    config["mounts"].push_back({{"destination", "/sys/kernel/debug"},
                                {"type", "debugfs"},
                                {"source", "debugfs"},
                                {"options", {"nosuid", "nodev", "noexec", "ro"}}});
  }
  if (named(names, "oci:reused-home")) reuse_home(config, t);
  if (named(names, "oci:cgroup-rw")) writable_cgroup_mount(config);
}

}  // namespace isoharness::deploy::local
