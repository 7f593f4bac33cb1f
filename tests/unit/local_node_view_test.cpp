// The local backend's node view (harness/deploy/local/node_observer.h), its parsers on the
// text this machine's /proc and runtimes gave for a runc container (sleep as uid 1000,
// read-only root, /usr bound read-only, runc's default masked and read-only paths) and a
// runsc sandbox of the same bundle (tests/fixtures/node_view/).
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "harness/deploy/local/node_observer.h"

using namespace isoharness;
using namespace isoharness::deploy;

namespace {

std::string node_fixture(const std::string& name) {
  std::ifstream in(std::string(ISOHARNESS_SOURCE_DIR) + "/tests/fixtures/node_view/" + name,
                   std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  REQUIRE(!out.str().empty());
  return out.str();
}

bool has_entry(const std::optional<std::vector<std::string>>& list, const std::string& v) {
  return list && std::find(list->begin(), list->end(), v) != list->end();
}

}  // namespace

TEST_CASE("node view: a runc container's init process status", "[local][node]") {
  NodeConfinement c;
  local::parse_status_text(node_fixture("runc-status.txt"), c);
  CHECK(c.cap_eff == 0ULL);
  CHECK(c.cap_prm == 0ULL);
  CHECK(c.cap_bnd == 0x20000420ULL);
  CHECK(c.cap_amb == 0ULL);
  CHECK(c.no_new_privs == true);
  CHECK(c.seccomp_mode == 0);
  CHECK(c.seccomp_filters == 0);
  CHECK(c.uid == 1000);
  const auto map = local::parse_id_map_text(node_fixture("runc-uid_map.txt"));
  REQUIRE(map.size() == 1);
  CHECK(local::id_inside(map, 1000) == 1000);
  CHECK(local::id_inside({{0, 100000, 65536}}, 101000) == 1000);
  CHECK_FALSE(local::id_inside({{0, 100000, 65536}}, 1000).has_value());
}

TEST_CASE("node view: a malformed status line leaves its field absent", "[local][node]") {
  NodeConfinement c;
  local::parse_status_text(
      "CapEff:\tzz00\nCapBnd:\t00000000a80425fb\nNoNewPrivs:\t7\nSeccomp:\t2\nUid:\t1\t2\n", c);
  CHECK_FALSE(c.cap_eff.has_value());
  CHECK(c.cap_bnd == 0xa80425fbULL);
  CHECK_FALSE(c.no_new_privs.has_value());
  CHECK(c.seccomp_mode == 2);
  CHECK_FALSE(c.uid.has_value());
  CHECK(local::parse_id_map_text("0 0\n").empty());
}

TEST_CASE("node view: a runc container's mounts as the node sees them", "[local][node]") {
  bool cut = true;
  const auto mounts = local::parse_mountinfo_text(node_fixture("runc-mountinfo.txt"), cut);
  CHECK_FALSE(cut);
  const NodeFilesystem f = local::summarise_mounts(mounts);
  CHECK(f.root_read_only == true);
  REQUIRE(f.host_paths);
  CHECK(*f.host_paths == std::vector<std::string>{"/usr"});
  CHECK(has_entry(f.read_only_paths, "/proc/sys"));
  CHECK(has_entry(f.masked_paths, "/proc/keys"));
  CHECK(has_entry(f.masked_paths, "/proc/acpi"));
  CHECK(f.proc_sys_read_only == true);
  CHECK(f.cgroup_writable == false);
  CHECK(f.debugfs_mounted == false);
  CHECK(f.runtime_sockets->empty());
  CHECK(f.service_account_tokens->empty());
}

TEST_CASE("node view: a weakened container's mounts say so", "[local][node]") {
  const std::string text =
      "68 46 254:0 /b/rootfs / rw,relatime - ext4 /dev/vda rw\n"
      "69 68 0:41 / /proc rw,relatime - proc proc rw\n"
      "86 68 0:20 /containerd/containerd.sock /run/containerd/containerd.sock rw - tmpfs tmpfs rw\n"
      "87 68 254:0 /etc /host\\040etc rw - ext4 /dev/vda rw\n"
      "88 68 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
      "89 68 0:12 / /sys/kernel/debug rw - debugfs debugfs rw\n"
      "90 68 0:50 / /var/run/secrets/kubernetes.io/serviceaccount ro - tmpfs tmpfs rw\n";
  bool cut = false;
  const NodeFilesystem f = local::summarise_mounts(local::parse_mountinfo_text(text, cut));
  CHECK(f.root_read_only == false);
  CHECK(has_entry(f.host_paths, "/host etc"));
  CHECK(has_entry(f.runtime_sockets, "/run/containerd/containerd.sock"));
  CHECK(f.cgroup_writable == true);
  CHECK(f.debugfs_mounted == true);
  CHECK(has_entry(f.service_account_tokens, "/var/run/secrets/kubernetes.io/serviceaccount"));
  CHECK(f.proc_sys_read_only == false);  // /proc/sys lies on /proc, writable
}

TEST_CASE("node view: the runtimes' state and runsc's command line", "[local][node]") {
  const auto runc = local::parse_runtime_state(node_fixture("runc-state.json"));
  REQUIRE(runc);
  CHECK(runc->status == "running");
  CHECK(runc->pid > 1);
  CHECK(runc->bundle == "/tmp/h45a-bundle");
  const auto runsc = local::parse_runtime_state(node_fixture("runsc-state.json"));
  REQUIRE(runsc);
  CHECK(runsc->pid > 1);
  CHECK_FALSE(local::parse_runtime_state("{\"pid\":\"7\",\"status\":\"running\"}"));
  CHECK_FALSE(local::parse_runtime_state("not json"));
  const NodeGvisor g = local::parse_runsc_cmdline(node_fixture("runsc-cmdline.bin"));
  CHECK(g.network == "none");
  CHECK(g.net_raw == false);
  CHECK(g.nvproxy == false);
  CHECK(g.oci_seccomp == false);
  CHECK_FALSE(g.platform.has_value());  // this runsc writes no --platform for its default
  const NodeGvisor raw =
      local::parse_runsc_cmdline(std::string("runsc\0--net-raw\0--platform=kvm\0boot", 35));
  CHECK(raw.net_raw == true);
  CHECK(raw.platform == "kvm");
  NodeConfinement sentry;
  local::parse_status_text(node_fixture("runsc-sentry-status.txt"), sentry);
  CHECK(sentry.seccomp_mode == 2);
  CHECK(sentry.no_new_privs == true);
}

TEST_CASE("node view: the spec runsc was handed", "[local][node]") {
  const auto spec = nlohmann::json::parse(node_fixture("bundle-config.json"));
  NodeContainer c;
  local::read_spec(spec, false, c);
  CHECK(c.process.cap_bnd == 0x20000420ULL);  // runc spec's default: AUDIT_WRITE, KILL, NET_BIND_SERVICE
  CHECK(c.process.cap_eff == 0x20000420ULL);
  CHECK(c.process.no_new_privs == true);
  CHECK(c.process.uid == 1000);
  CHECK(c.process.seccomp_mode == 0);  // no --oci-seccomp
  CHECK(c.process.shares_node.pid == false);
  CHECK(c.process.shares_node.net == false);
  CHECK(c.filesystem.root_read_only == true);
  CHECK(has_entry(c.filesystem.host_paths, "/usr"));
  REQUIRE(c.devices);
  CHECK(c.devices->empty());
  auto weak = spec;
  weak["linux"]["namespaces"] = nlohmann::json::array({{{"type", "mount"}}});
  weak["process"]["capabilities"]["bounding"].push_back("CAP_SYS_ADMIN");
  weak["linux"]["devices"] = {{{"path", "/dev/kmsg"}, {"type", "c"}}};
  NodeContainer w;
  local::read_spec(weak, false, w);
  CHECK(w.process.shares_node.pid == true);
  CHECK(((*w.process.cap_bnd >> 21) & 1ULL) == 1ULL);
  CHECK(*w.devices == std::vector<std::string>{"kmsg"});
}
