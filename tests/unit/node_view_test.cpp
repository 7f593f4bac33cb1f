// The node's view of a sandbox (harness/deploy/node_view.h): written and read back whole;
// hostile documents (wrong types, too big, too deep, another schema) read as absent facts
// or as nothing, never as a fact the node did not state.
#include "harness/deploy/node_view.h"

#include <catch2/catch.hpp>

using namespace isoharness;
using deploy::NodeContainer;
using deploy::NodeRuntime;
using deploy::NodeView;

namespace {

NodeView sample_view() {
  NodeView v;
  v.witness = "local node /proc";
  v.unix_ms = 1700000000000;
  NodeContainer c;
  c.id = "ih-abc-0";
  c.service = "default";
  c.runtime = NodeRuntime::runc;
  c.runtime_evidence = "runc state: running, pid 4242";
  c.init_pid = 4242;
  c.source = "proc";
  c.process.cap_eff = 0;
  c.process.cap_bnd = 0xa80425fbULL;
  c.process.no_new_privs = true;
  c.process.seccomp_mode = 2;
  c.process.seccomp_filters = 1;
  c.process.uid = 1000;
  c.process.uid_map = {{0, 0, 4294967295LL}};
  c.process.shares_node.pid = false;
  c.process.shares_node.net = false;
  c.filesystem.root_read_only = true;
  c.filesystem.host_paths = std::vector<std::string>{};
  c.filesystem.runtime_sockets = std::vector<std::string>{"/run/containerd/containerd.sock -> /run/c.sock"};
  c.filesystem.mounts.push_back({"/", "/var/lib/x/rootfs", "ext4", true, false});
  c.devices = std::vector<std::string>{};
  v.containers.push_back(c);
  NodeContainer g;
  g.id = "ih-abc-1";
  g.service = "db";
  g.runtime = NodeRuntime::runsc;
  g.source = "spec";
  g.gvisor = deploy::NodeGvisor{};
  g.gvisor->platform = "ptrace";
  g.gvisor->net_raw = false;
  g.gvisor->sentry.seccomp_mode = 2;
  g.gvisor->processes_hidden = true;
  v.containers.push_back(g);
  return v;
}

}  // namespace

TEST_CASE("node view: written and read back, every field kept") {
  const NodeView v = sample_view();
  const auto read = deploy::read_node_view(deploy::write_node_view(v));
  REQUIRE(read.error.empty());
  REQUIRE(read.view);
  CHECK(read.problems.empty());
  CHECK(deploy::write_node_view(*read.view) == deploy::write_node_view(v));
  const auto* agent = deploy::node_container(*read.view);
  REQUIRE(agent);
  CHECK(agent->runtime == NodeRuntime::runc);
  CHECK(agent->process.cap_bnd == 0xa80425fbULL);
  CHECK(agent->process.shares_node.pid == false);
  CHECK_FALSE(agent->process.shares_node.user.has_value());  // not seen stays not seen
  CHECK(agent->filesystem.host_paths.has_value());
  CHECK(agent->filesystem.host_paths->empty());
  CHECK_FALSE(agent->filesystem.masked_paths.has_value());
  const auto* db = deploy::node_container(*read.view, "db");
  REQUIRE(db);
  REQUIRE(db->gvisor);
  CHECK(db->gvisor->platform == "ptrace");
  CHECK(db->gvisor->processes_hidden == true);
}

TEST_CASE("node view: a member of the wrong type reads as absent and is named") {
  auto doc = deploy::to_json(sample_view());
  doc["containers"][0]["process"]["cap_eff"] = 0;           // a number, not hex text
  doc["containers"][0]["process"]["no_new_privs"] = "yes";  // text, not a boolean
  doc["containers"][0]["filesystem"]["host_paths"] = {"/etc", 7};
  doc["containers"][0]["process"]["shares_node"] = "none";
  const auto read = deploy::node_view_from_json(doc);
  REQUIRE(read.view);
  const auto* agent = deploy::node_container(*read.view);
  REQUIRE(agent);
  CHECK_FALSE(agent->process.cap_eff.has_value());
  CHECK_FALSE(agent->process.no_new_privs.has_value());
  CHECK_FALSE(agent->filesystem.host_paths.has_value());
  CHECK_FALSE(agent->process.shares_node.pid.has_value());
  CHECK(read.problems.size() >= 4);
  CHECK(agent->process.cap_bnd == 0xa80425fbULL);  // the rest is still read
}

TEST_CASE("node view: not this schema, not JSON, too big or too deep reads as nothing") {
  auto doc = deploy::to_json(sample_view());
  doc["schema"] = "isoharness.node-view/v0";
  CHECK_FALSE(deploy::node_view_from_json(doc).view);
  CHECK_FALSE(deploy::read_node_view("{not json").view);
  CHECK_FALSE(deploy::read_node_view(std::string(deploy::kMaxNodeViewBytes + 1, ' ')).view);
  std::string deep = std::string(200, '[') + std::string(200, ']');
  const auto read = deploy::read_node_view(deep);
  CHECK_FALSE(read.view);
  CHECK(read.error.find("deeper") != std::string::npos);
  CHECK_FALSE(deploy::read_node_view("[]").view);
}

TEST_CASE("node view: a document without containers or `complete` is not complete") {
  const auto read = deploy::read_node_view(R"({"schema":"isoharness.node-view/v1"})");
  REQUIRE(read.view);
  CHECK_FALSE(read.view->complete);
  CHECK(read.view->containers.empty());
}

TEST_CASE("node view: a capability set must be hex of at most 16 digits; a runtime only a known name") {
  auto doc = deploy::to_json(sample_view());
  doc["containers"][0]["process"]["cap_bnd"] = "00000000a80425fbff";
  doc["containers"][0]["process"]["cap_prm"] = "zz";
  doc["containers"][0]["runtime"] = "RUNC";
  const auto read = deploy::node_view_from_json(doc);
  REQUIRE(read.view);
  const auto& c = read.view->containers[0];
  CHECK_FALSE(c.process.cap_bnd.has_value());
  CHECK_FALSE(c.process.cap_prm.has_value());
  CHECK(c.runtime == NodeRuntime::unknown);
}
