// parse_status: `hawk status` JSON, including null pod_status and hostile values.
#include <catch2/catch.hpp>

#include "harness/deploy/hawk/status_json.h"

using namespace isoharness::deploy::hawk;

TEST_CASE("hawk status: pods, containers and events", "[hawk]") {
  auto st = parse_status(R"({
  "eval_set_id": "abc",
  "pod_status": {
    "pods": [
      {"name": "runner-1", "namespace": "ev", "phase": "Running", "component": "runner",
       "container_statuses": [], "events": []},
      {"name": "sandbox-1", "namespace": "ev", "phase": "Pending", "component": "sandbox",
       "container_statuses": [{"name": "default", "ready": false, "state": "waiting",
                               "reason": "ContainerCreating", "message": null, "restart_count": 0}],
       "events": [{"type": "Warning", "reason": "FailedCreatePodSandBox",
                   "message": "no runtime for \"gvisor\" is configured", "count": 3,
                   "timestamp": "2026-12-01T10:00:00Z"}]}
    ]
  }
})");
  REQUIRE(st.has_value());
  CHECK_FALSE(st->pod_status_null);
  REQUIRE(st->pods.size() == 2);
  CHECK(st->pods[1].containers[0].reason == "ContainerCreating");
  CHECK(st->pods[1].events[0].count == 3);
  CHECK_FALSE(sandbox_running(*st));
  std::string d = describe_sandbox_pods(*st);
  CHECK_THAT(d, Catch::Contains("pod ev/sandbox-1: Pending"));
  CHECK_THAT(d, Catch::Contains("FailedCreatePodSandBox: no runtime for \"gvisor\" is configured (x3)"));
  CHECK_THAT(d, !Catch::Contains("runner-1"));
}

TEST_CASE("hawk status: pod_status null, Kubernetes-style state objects", "[hawk]") {
  auto st = parse_status(R"({"pod_status": null})");
  REQUIRE(st.has_value());
  CHECK(st->pod_status_null);
  CHECK_THAT(describe_sandbox_pods(*st), Catch::Contains("no pods yet"));

  auto k = parse_status(R"({"pod_status": {"pods": [{"name": "s", "phase": "Running", "component": null,
    "container_statuses": [{"name": "c", "state": {"waiting": {"reason": "CreateContainerConfigError",
    "message": "container has runAsNonRoot and image will run as root"}}}]}]}})");
  REQUIRE(k.has_value());
  CHECK(sandbox_running(*k));  // no component: every non-runner pod counts as the sandbox
  CHECK(k->pods[0].containers[0].state == "waiting");
  CHECK(k->pods[0].containers[0].reason == "CreateContainerConfigError");
}

TEST_CASE("hawk status: hostile and wrong-typed values are bounded or dropped", "[hawk]") {
  CHECK_FALSE(parse_status("not json").has_value());
  CHECK_FALSE(parse_status("[1,2]").has_value());
  CHECK_FALSE(parse_status(std::string(kMaxStatusText + 1, ' ')).has_value());

  auto st = parse_status(R"({"pod_status": {"pods": [
    {"name": 42, "phase": ["Running"], "component": "sandbox", "container_statuses": "nope",
     "events": [1, {"type": "Warning", "reason": "X", "message": "a\u001b[31mred\u0007", "count": "many"}]},
    "a string"]}})");
  REQUIRE(st.has_value());
  REQUIRE(st->pods.size() == 1);
  CHECK(st->pods[0].name.empty());
  CHECK(st->pods[0].phase.empty());
  CHECK_FALSE(sandbox_running(*st));
  CHECK(st->pods[0].events.size() == 1);
  CHECK(st->pods[0].events[0].message == "a?[31mred?");
  CHECK(st->pods[0].events[0].count == 0);
  CHECK(st->dropped.size() >= 5);

  std::string pods = R"({"pod_status": {"pods": [)";
  for (int i = 0; i < 100; ++i)
    pods += std::string(i ? "," : "") + R"({"name": ")" + std::string(2000, 'x') + R"("})";
  pods += "]}}";
  auto many = parse_status(pods);
  REQUIRE(many.has_value());
  CHECK(many->pods.size() == kMaxPods);
  CHECK(many->pods[0].name.size() <= kMaxField + 3);

  auto wrong = parse_status(R"({"pod_status": "gone"})");
  REQUIRE(wrong.has_value());
  CHECK(wrong->pod_status_null);
}
