// Unit tests of the sandbox facts a backend records: the typed fields other modules read,
// read back from a result's JSON with readers that never throw, and written out again
// unchanged.
#include "harness/deploy/sandbox_facts.h"

#include <catch2/catch.hpp>

using isoharness::deploy::SandboxFacts;
using nlohmann::json;

namespace {

// An agent sandbox's record as the local backend writes it (abridged), with one sibling.
json local_agent() {
  return {{"backend", "local"},
          {"runtime", "runsc"},
          {"runtime_version", "runsc version release-20240212.0"},
          {"address", "192.0.2.193"},
          {"address6", "2001:db8:0:1::c1"},
          {"egress_index", 3},
          {"node_class", "tier"},
          {"service", "default"},
          {"cpus", "1"},
          {"attempt", 2},
          {"test_weakenings", {"sshd:no-sftp"}},
          {"item_resolver",
           {{"address", "203.0.113.64"},
            {"instance_name", "instance.item.invalid"},
            {"instance", "abc123"},
            {"answers", 4},
            {"agent_may_ask", false}}},
          {"siblings", json::array({{{"service", "scorer"},
                                     {"network_mode", "none"},
                                     {"address", "192.0.2.194"},
                                     {"port", 8080},
                                     {"exec", {"runc", "exec", "ih-x-scorer"}},
                                     {"probe", "/opt/isoprobe/isoprobe"}}})}};
}

}  // namespace

TEST_CASE("sandbox facts: the typed fields are read from a record and written back unchanged", "[verify]") {
  const SandboxFacts f = SandboxFacts::from_json(local_agent());
  CHECK(f.backend == isoharness::scenario::BackendKind::local);
  CHECK(f.runtime == "runsc");
  CHECK(f.address == "192.0.2.193");
  CHECK(f.address6 == "2001:db8:0:1::c1");
  CHECK(f.egress_index == 3);
  CHECK(f.test_weakenings == std::vector<std::string>{"sshd:no-sftp"});
  REQUIRE(f.item_resolver);
  CHECK(f.item_resolver->instance == "abc123");
  CHECK(f.item_resolver->answers == 4);
  CHECK_FALSE(f.item_resolver->agent_may_ask);
  REQUIRE(f.sibling_list().size() == 1);
  const SandboxFacts& scorer = f.sibling_list()[0];
  CHECK(scorer.service == "scorer");
  CHECK(scorer.port == 8080);
  CHECK(scorer.exec == std::vector<std::string>{"runc", "exec", "ih-x-scorer"});
  CHECK(scorer.extra == json{{"network_mode", "none"}});  // what only reports read
  // What no module reads stays, for the result's readers.
  CHECK(f.extra["cpus"] == "1");
  CHECK(f.extra["attempt"] == 2);
  CHECK_FALSE(f.extra.contains("address"));
  CHECK(f.to_json() == local_agent());
}

TEST_CASE("sandbox facts: a member of the wrong type reads as absent and is kept as written", "[verify]") {
  const json odd = {{"address", 17},
                    {"port", "8080"},
                    {"egress_index", -1},
                    {"exec", {"runc", 3}},
                    {"siblings", "none"},
                    {"sandbox_pod", "agent-0"},
                    {"node_image", {{"name", {"x"}}, {"runc_version", "1.2.8"}}}};
  const SandboxFacts f = SandboxFacts::from_json(odd);
  CHECK(f.address.empty());
  CHECK(f.port == 0);
  CHECK_FALSE(f.egress_index);
  CHECK(f.exec.empty());
  CHECK_FALSE(f.siblings);
  CHECK(f.sibling_list().empty());
  CHECK_FALSE(f.sandbox_pod);
  REQUIRE(f.node_image);  // an object: read, its wrong-typed name empty
  CHECK(f.node_image->name.empty());
  CHECK(f.node_image->runc_version == "1.2.8");
  CHECK(f.extra["address"] == 17);
  CHECK(f.extra["siblings"] == "none");
  CHECK(SandboxFacts::from_json(json::array({1, 2})).to_json() == json::object());
  CHECK(SandboxFacts::from_json("hostile").sibling_list().empty());
}

TEST_CASE("sandbox facts: an agent that lists no siblings and one that lists none differ", "[verify]") {
  SandboxFacts listed;
  listed.siblings.emplace();
  CHECK(listed.to_json() == json{{"siblings", json::array()}});
  CHECK(SandboxFacts{}.to_json() == json::object());
}

TEST_CASE("sandbox facts: node_image carries the whole declared runtime stack and back", "[verify]") {
  const json recorded = {{"node_image",
                          {{"name", "gpu-1"},
                           {"runc_version", "1.3.5"},
                           {"runc_package", ""},
                           {"containerd_version", "1.7.31"},
                           {"runsc_version", "release-20261101.0"},
                           {"nvidia_container_toolkit_version", "1.17.7"},
                           {"nvidia_container_toolkit_package", "1.17.7-1"}}}};
  const SandboxFacts f = SandboxFacts::from_json(recorded);
  REQUIRE(f.node_image);
  CHECK(f.node_image->containerd_version == "1.7.31");
  CHECK(f.node_image->runsc_version == "release-20261101.0");
  CHECK(f.node_image->nvidia_container_toolkit_package == "1.17.7-1");
  CHECK(f.node_image->crun_version.empty());
  CHECK(f.to_json() == recorded);  // the undeclared ones are left out
  // A wrong-typed version reads as not declared.
  const SandboxFacts odd =
      SandboxFacts::from_json({{"node_image", {{"name", "n"}, {"containerd_version", 1}}}});
  REQUIRE(odd.node_image);
  CHECK(odd.node_image->containerd_version.empty());
}
