// The node agent's pieces that need no node: `crictl inspect` output read (the CRI path,
// docs/CONTRACTS.md §4.9.1) and the agent's answer authenticated as the operator witness
// log is (node_agent_wire.h): a forged line, another key or another request's answer is
// refused whole.
#include <catch2/catch.hpp>

#include "harness/deploy/cri_inspect.h"
#include "harness/deploy/node_agent_wire.h"
#include "tests/support/test_support.h"
#include "tests/unit/node_view_fixture.h"

using namespace isoharness;
using namespace isoharness::deploy;

TEST_CASE("crictl inspect: the container, its pod, its pid on the node and its OCI spec", "[node_agent]") {
  const auto c =
      read_crictl_inspect(test::read_text(test::source_dir() + "/tests/fixtures/cri/inspect-runsc.json"));
  REQUIRE(c);
  CHECK(c->id.size() == 64);
  CHECK(c->state == "CONTAINER_RUNNING");
  CHECK(c->name == "default");
  CHECK(c->pod_uid == "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f");
  CHECK(c->runtime_type == "io.containerd.runsc.v1");
  CHECK(c->pid == 48213);
  REQUIRE(c->runtime_spec);
  CHECK(c->runtime_spec->is_object());
}

TEST_CASE("crictl inspect: hostile or foreign text is refused or read as absent, never thrown",
          "[node_agent]") {
  CHECK_FALSE(read_crictl_inspect("not json"));
  CHECK_FALSE(read_crictl_inspect("[1,2]"));
  CHECK_FALSE(read_crictl_inspect(R"({"info": {"pid": 7}})"));  // no status: not crictl's
  CHECK_FALSE(read_crictl_inspect(R"({"status": {"state": "CONTAINER_RUNNING"}})"));  // no id
  CHECK_FALSE(read_crictl_inspect(std::string(70, '[') + std::string(70, ']')));
  CHECK_FALSE(read_crictl_inspect(std::string(kMaxCriInspectBytes + 1, ' ')));
  // Wrong types read as absent: a pid that is text, negative or huge is no pid.
  for (const char* pid : {"\"48213\"", "-4", "99999999999"}) {
    const auto c =
        read_crictl_inspect(std::string(R"({"status": {"id": "abc"}, "info": {"pid": )") + pid + "}}");
    REQUIRE(c);
    CHECK_FALSE(c->pid.has_value());
  }
  const auto no_spec = read_crictl_inspect(R"({"status": {"id": "abc"}, "info": {"runtimeSpec": "x"}})");
  REQUIRE(no_spec);
  CHECK_FALSE(no_spec->runtime_spec.has_value());
}

TEST_CASE("node agent answer: read back only with its key and this request's nonce", "[node_agent]") {
  const std::string key = "0123456789abcdef0123456789abcdef";
  const std::string nonce = "00112233445566778899aabbccddeeff";
  const std::string doc = write_node_view(test::clean_node_view(false));
  const std::string answer = frame_node_view_answer(key, nonce, doc);
  const auto ok = read_node_view_answer(answer, key, nonce);
  INFO(ok.error);
  REQUIRE(ok.view);
  CHECK(ok.error.empty());
  CHECK(ok.view->containers.size() == test::clean_node_view(false).containers.size());
  CHECK_FALSE(read_node_view_answer(answer, "ffffffffffffffffffffffffffffffff", nonce).view);  // another key
  const auto replayed = read_node_view_answer(answer, key, "ffeeddccbbaa99887766554433221100");
  CHECK_FALSE(replayed.view);
  CHECK_THAT(replayed.error, Catch::Contains("another request"));
  CHECK_FALSE(read_node_view_answer(answer, key, "not-a-nonce").view);
  // One byte of the document changed after it was MACed: refused whole.
  std::string forged = answer;
  const auto at = forged.find("\"runc\"");
  REQUIRE(at != std::string::npos);
  forged.replace(at, 6, "\"runX\"");
  CHECK_FALSE(read_node_view_answer(forged, key, nonce).view);
  CHECK_FALSE(read_node_view_answer("", key, nonce).view);
}
