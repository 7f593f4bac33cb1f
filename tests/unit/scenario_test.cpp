#include "harness/scenario/scenario.h"

#include <catch2/catch.hpp>

#include "harness/scenario/yaml_text.h"
#include "tests/support/test_support.h"

using namespace isoharness;
using namespace isoharness::scenario;

namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("YAML scalars resolve like the YAML 1.2 core schema, quoted ones stay strings", "[scenario]") {
  auto doc =
      parse_yaml("a: 1\nb: 0.5\nc: true\nd: null\ne: '007'\nf: 007x\ng: ~\nh: \"true\"\ni: -3\n", "x.yaml");
  CHECK(doc.value["a"] == 1);
  CHECK(doc.value["b"] == 0.5);
  CHECK(doc.value["c"] == true);
  CHECK(doc.value["d"].is_null());
  CHECK(doc.value["e"] == "007");
  CHECK(doc.value["f"] == "007x");
  CHECK(doc.value["g"].is_null());
  CHECK(doc.value["h"] == "true");
  CHECK(doc.value["i"] == -3);
}

TEST_CASE("every node keeps its line and column", "[scenario]") {
  auto doc = parse_yaml("top:\n  list:\n    - x\n    - { k: v }\n", "x.yaml");
  CHECK(doc.source.find("/top").line == 1);
  CHECK(doc.source.find("/top/list").line == 2);
  CHECK(doc.source.find("/top/list/1").line == 4);
  CHECK(doc.source.find("/top/list/1/k").line == 4);
  CHECK(doc.source.find("/top/list/1/k").column == 9);
  // An unknown pointer falls back to its nearest ancestor.
  CHECK(doc.source.find("/top/list/1/nope/deeper").line == 4);
}

TEST_CASE("YAML syntax errors name file, line and column", "[scenario]") {
  std::string msg = error_of([] { parse_yaml("a: [1, 2\nb: 3\n", "broken.yaml"); });
  CHECK_THAT(msg, Catch::StartsWith("broken.yaml:"));
  CHECK_THAT(msg, Catch::Contains("YAML syntax error"));
  msg = error_of([] { parse_yaml("a:\n  b: 1\n\tc: 2\n", "tab.yaml"); });
  CHECK_THAT(msg, Catch::Matches("tab\\.yaml:3:\\d+: YAML syntax error.*"));
}

TEST_CASE("duplicate keys and hostile documents are refused", "[scenario]") {
  std::string msg = error_of([] { parse_yaml("isolation: standard\nisolation: strict\n", "dup.yaml"); });
  CHECK(msg == "dup.yaml:2:1: duplicate key 'isolation' (each key may appear once in a mapping)");
  // A billion-laughs document: aliases expand past their bound.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  const char* names = "abcdefghij";
  for (int i = 1; i < 9; ++i) {
    bomb += std::string(1, names[i]) + ": &" + names[i] + " [";
    for (int k = 0; k < 10; ++k) bomb += std::string(k ? ", *" : "*") + names[i - 1];
    bomb += "]\n";
  }
  msg = error_of([&] { parse_yaml(bomb, "bomb.yaml"); });
  CHECK_THAT(msg, Catch::Contains("aliases expand to more than"));
  CHECK_THAT(error_of([] { parse_yaml(std::string(kMaxYamlBytes + 1, ' '), "big.yaml"); }),
             Catch::Contains("larger than 16 MiB"));
}

TEST_CASE("a bare eval-set config loads and passes every other key through", "[scenario]") {
  auto s = load_scenario(test::source_dir() + "/tests/fixtures/policy/hawk-passthrough.yaml");
  CHECK(s.bare_eval_set);
  CHECK(s.name == "hawk-passthrough");
  CHECK(s.eval_set["eval_set_id"] == "es-example-0001");
  CHECK(s.eval_set["models"][0]["items"][0]["args"]["temperature"] == 0.2);
  CHECK(s.eval_set["solvers"][0]["items"][0]["name"] == "basic_agent");
  CHECK(s.eval_set["limit"] == 5);
  CHECK(s.eval_set["message_limit"].is_null());
  CHECK(s.eval_set["runner"]["memory"] == "16Gi");
  CHECK(s.eval_set["tasks"][0]["items"][0]["args"]["note"] == "007");
  CHECK(s.eval_set["tasks"][0]["items"][0]["sample_ids"][1] == 42);
  REQUIRE(s.facts.size() == 1);
  REQUIRE(s.facts[0].size() == 1);
  CHECK(s.facts[0][0].services.size() == 1);
  CHECK(s.facts[0][0].services[0].name == "default");
  CHECK_FALSE(s.facts[0][0].services[0].image_user_root.has_value());
  CHECK_FALSE(s.facts[0][0].declared);
}

TEST_CASE("a scenario wraps the eval set, matches facts by position and checks names", "[scenario]") {
  const char* yaml = R"(
name: t
eval_set:
  tasks:
    - name: mtb
      items: [{name: bridge}, {name: bridge}]
    - name: other
      items: [{name: solo}]
sandbox_defaults: { image_user: root, image: registry.example.com/a:1 }
sandboxes:
  - { task: mtb, item: 1, name: bridge, gpu: true, runtime_class: runc-fast, provider_tools: [web_search] }
  - task: 1
    item: 0
    services:
      scorer: { network_mode: none, image_user: non-root }
      default: { network_mode: bridge }
matrix: { runtimes: [runc], node_classes: [tier, non-tier], attempts: 2 }
workloads: [{name: getpid, weight: 2}, cpu_hash]
parity: { tolerance: 1.2 }
)";
  auto s = parse_scenario(yaml, "t.yaml");
  CHECK_FALSE(s.bare_eval_set);
  CHECK(s.name == "t");
  const auto& f0 = s.facts[0][0];
  CHECK_FALSE(f0.declared);
  CHECK(f0.services[0].image == "registry.example.com/a:1");
  CHECK(f0.services[0].image_user_root == true);
  CHECK_FALSE(f0.services[0].gpu);
  const auto& f1 = s.facts[0][1];
  CHECK(f1.declared);
  CHECK(f1.services[0].gpu);
  CHECK(f1.runtime_class == "runc-fast");
  CHECK(f1.provider_tools == std::vector<std::string>{"web_search"});
  const auto& f2 = s.facts[1][0];
  REQUIRE(f2.services.size() == 2);
  CHECK(f2.services[0].name == "default");
  CHECK(f2.services[0].network_mode == "bridge");
  CHECK(f2.services[0].image_user_root == true);
  CHECK(f2.services[1].name == "scorer");
  CHECK(f2.services[1].network_mode == "none");
  CHECK(f2.services[1].image_user_root == false);
  CHECK(s.matrix.runtimes == std::vector<std::string>{"runc"});
  CHECK(s.matrix.node_classes.size() == 2);
  CHECK(s.matrix.attempts == 2);
  REQUIRE(s.workloads.size() == 2);
  CHECK(s.workloads[0].weight == 2.0);
  CHECK(s.workloads[1].name == "cpu_hash");
  CHECK(s.tolerance == 1.2);
}

TEST_CASE("scenario structure errors are all reported together", "[scenario]") {
  const char* yaml = R"(
eval_set:
  tasks:
    - name: mtb
      items: [{name: bridge}]
sandboxes:
  - { task: mtb, item: 5 }
  - { task: nope, item: 0 }
  - { task: mtb, item: 0, name: other }
matrix: { attempts: 0, cells: 3 }
parity: { tolerance: 0.9 }
colour: blue
)";
  std::string msg = error_of([&] { parse_scenario(yaml, "bad.yaml"); });
  CHECK_THAT(msg, Catch::Contains("bad.yaml:12:1: unknown scenario key 'colour'"));
  // Structural errors of the scenario shell stop first; fix them and the rest shows.
  std::string fixed = std::string(yaml).substr(0, std::string(yaml).find("colour"));
  msg = error_of([&] { parse_scenario(fixed, "bad.yaml"); });
  CHECK_THAT(msg, Catch::Contains("bad.yaml:7:18: item must be an index into the task's items (0..0)"));
  CHECK_THAT(msg, Catch::Contains("bad.yaml:8:7: no task is named 'nope'"));
  CHECK_THAT(msg, Catch::Contains("bad.yaml:9:27: names item \"other\" but tasks[0].items[0] is \"bridge\""));
  CHECK_THAT(msg, Catch::Contains("attempts must be a whole number from 1 to 100"));
  CHECK_THAT(msg, Catch::Contains("unknown matrix key 'cells'"));
  CHECK_THAT(msg, Catch::Contains("tolerance is a ratio above 1"));
}

TEST_CASE("eval-set shape errors name the task and item", "[scenario]") {
  std::string msg = error_of(
      [] { parse_scenario("tasks:\n  - name: a\n    items: []\n  - items: [{args: {}}]\n", "s.yaml"); });
  CHECK_THAT(msg, Catch::Contains("s.yaml:3:5: tasks[0]: items must be a non-empty list"));
  CHECK_THAT(msg, Catch::Contains("s.yaml:4:5: tasks[1]: a task needs a name"));
  CHECK_THAT(msg, Catch::Contains("tasks[1].items[0]: an item needs a name"));
  CHECK_THAT(error_of([] { parse_scenario("limit: 3\n", "s.yaml"); }),
             Catch::Contains("neither a scenario (with eval_set) nor an eval-set config (with tasks)"));
}

TEST_CASE("deployment profiles keep every key and check the policy's", "[scenario]") {
  auto d = load_deployment(test::source_dir() + "/scenarios/deployments/local.yaml");
  CHECK(d.name == "local");
  CHECK(d.backend == scenario::BackendKind::local);
  CHECK(d.runtime_classes == std::vector<std::string>{"gvisor"});
  CHECK(d.sandbox_runtime_class == "gvisor");
  CHECK_FALSE(d.sandbox_runtime_class_is_default);
  CHECK(d.handler_of("gvisor") == "runsc");
  CHECK(d.is_gvisor("gvisor"));
  CHECK(d.raw["node_classes"]["tier"]["cpuset"] == "1");
  CHECK(d.raw["node_classes"]["non-tier"]["noisy_neighbour"] == true);

  auto staging = load_deployment(test::source_dir() + "/scenarios/deployments/staging.example.yaml");
  CHECK(staging.backend == scenario::BackendKind::hawk);
  CHECK(staging.sandbox_runtime_class_is_default);
  REQUIRE(staging.hawk.has_value());
  CHECK(staging.hawk->jumphost_host_key.rfind("ssh-ed25519 ", 0) == 0);
  CHECK(staging.hawk->sandbox_host_keys == "first-use");
  REQUIRE(staging.egress.has_value());
  CHECK(staging.egress->metadata == "169.254.169.254:80");

  // Absent class: offered list only. A class not offered: refused.
  auto none = parse_deployment("runtime_classes: [gvisor]\n", "n.yaml");
  CHECK_FALSE(none.sandbox_runtime_class.has_value());
  CHECK(none.name == "n");
  CHECK_FALSE(none.backend.has_value());  // a profile that names no backend serves either
  // A profile names a backend that deploys: `existing` (check's, nothing deployed) is none.
  for (const char* name : {"existing", "kata", "Local"})
    CHECK_THAT(error_of([name] { parse_deployment(std::string("backend: ") + name + "\n", "b.yaml"); }),
               Catch::Contains("b.yaml:1:") &&
                   Catch::Contains("backend must be local or hawk, not '" + std::string(name) + "'"));
  CHECK_THAT(error_of([] { parse_deployment("backend: 1\n", "b.yaml"); }),
             Catch::Contains("backend must be a string (local, hawk)"));
  CHECK_THAT(error_of([] {
               parse_deployment("runtime_classes: [kata]\nsandbox_runtime_class: gvisor\n", "d.yaml");
             }),
             Catch::Contains("d.yaml:2:1: sandbox_runtime_class 'gvisor' is not in runtime_classes"));
  CHECK_THAT(error_of([] { parse_deployment("runtime_classes: gvisor\n", "d.yaml"); }),
             Catch::Contains("runtime_classes must be a list"));
  CHECK_THAT(error_of([] { load_deployment("/nonexistent/isoharness/profile.yaml"); }),
             Catch::Contains("/nonexistent/isoharness/profile.yaml: cannot read file"));
}

TEST_CASE("describe_item names package, task, item, args and sample_ids", "[scenario]") {
  auto s = parse_scenario(
      "tasks:\n  - package: p\n    name: mtb\n    items:\n      - {name: bridge, args: {image_tag: x}, "
      "sample_ids: [a]}\n",
      "s.yaml");
  CHECK(
      describe_item(s.eval_set, 0, 0) ==
      "task mtb, item bridge (tasks[0].items[0]; package p; args {\"image_tag\":\"x\"}; sample_ids [\"a\"])");
}

TEST_CASE("deployment profiles: peers_per_sandbox sets how many other evals' sandboxes each tries",
          "[scenario]") {
  CHECK(parse_deployment("runtime_classes: [gvisor]\n", "d.yaml").peers_per_sandbox == 2);
  CHECK(parse_deployment("peers_per_sandbox: 5\n", "d.yaml").peers_per_sandbox == 5);
  CHECK(parse_deployment("peers_per_sandbox: 0\n", "d.yaml").peers_per_sandbox == 0);
  CHECK_THAT(error_of([] { parse_deployment("name: x\npeers_per_sandbox: many\n", "d.yaml"); }),
             Catch::Contains("d.yaml:2:1: peers_per_sandbox must be a whole number from 0 to 16"));
  CHECK_THAT(error_of([] { parse_deployment("peers_per_sandbox: 17\n", "d.yaml"); }),
             Catch::Contains("peers_per_sandbox must be a whole number from 0 to 16, got 17"));
  CHECK_THAT(error_of([] { parse_deployment("peers_per_sandbox: -1\n", "d.yaml"); }),
             Catch::Contains("peers_per_sandbox must be a whole number"));
}

TEST_CASE("deployment profiles: accepted_runtime_escapes names each component and CVE with its reason",
          "[scenario]") {
  CHECK(parse_deployment("runtime_classes: [gvisor]\n", "d.yaml").accepted_runtime_escapes.empty());
  const auto local = load_deployment(test::source_dir() + "/scenarios/deployments/local.yaml");
  REQUIRE(local.accepted_runtime_escapes.size() == 4);
  CHECK(local.accepted_runtime_escapes.front().cve == "CVE-2025-31133");
  CHECK(local.accepted_runtime_escapes.back().cve == "CVE-2026-41579");
  for (const auto& e : local.accepted_runtime_escapes) {
    CHECK(e.component == "runc");
    CHECK_FALSE(e.reason.empty());
  }
  const auto toolkit = parse_deployment(
      "accepted_runtime_escapes: [{component: nvidia-container-toolkit, cve: CVE-2025-23266, reason: r}]\n",
      "d.yaml");
  REQUIRE(toolkit.accepted_runtime_escapes.size() == 1);
  CHECK(toolkit.accepted_runtime_escapes[0].component == "nvidia-container-toolkit");
  CHECK_THAT(error_of([] {
               parse_deployment("name: x\naccepted_runtime_escapes: [{component: runc, cve: CVE-2025-1}]\n",
                                "d.yaml");
             }),
             Catch::Contains("accepted_runtime_escapes.0 needs reason"));
  CHECK_THAT(error_of([] {
               parse_deployment("accepted_runtime_escapes: [{component: runc, cve: bad, reason: r}]\n",
                                "d.yaml");
             }),
             Catch::Contains("accepted_runtime_escapes.0 needs cve"));
  CHECK_THAT(error_of([] {
               parse_deployment("accepted_runtime_escapes: [{cve: CVE-2025-31133, reason: r}]\n", "d.yaml");
             }),
             Catch::Contains("accepted_runtime_escapes.0 needs component: one of containerd, runc"));
  CHECK_THAT(error_of([] {
               parse_deployment(
                   "accepted_runtime_escapes: [{component: docker, cve: CVE-2025-31133, reason: r}]\n",
                   "d.yaml");
             }),
             Catch::Contains("accepted_runtime_escapes.0 needs component"));
  CHECK_THAT(error_of([] { parse_deployment("accepted_runtime_escapes: CVE-2025-1\n", "d.yaml"); }),
             Catch::Contains("accepted_runtime_escapes must be a list"));
}

TEST_CASE("deployment profiles: runsc_max_age_days bounds gVisor's age, default 365", "[scenario]") {
  CHECK(parse_deployment("name: x\n", "d.yaml").runsc_max_age_days == 365);
  CHECK(parse_deployment("runsc_max_age_days: 90\n", "d.yaml").runsc_max_age_days == 90);
  CHECK_THAT(
      error_of([] { parse_deployment("name: x\nrunsc_max_age_days: 0\n", "d.yaml"); }),
      Catch::Contains("d.yaml:2:1: runsc_max_age_days must be a whole number of days from 1 to 36500"));
  CHECK_THAT(error_of([] { parse_deployment("runsc_max_age_days: old\n", "d.yaml"); }),
             Catch::Contains("runsc_max_age_days must be a whole number"));
}

TEST_CASE("deployment profiles: accepted_risks names a known check with its reason, at its line",
          "[scenario]") {
  // Nothing is accepted by default, in the shipped profiles too.
  CHECK(parse_deployment("runtime_classes: [gvisor]\n", "d.yaml").accepted_risks.empty());
  CHECK(load_deployment(test::source_dir() + "/scenarios/deployments/local.yaml").accepted_risks.empty());
  const auto p = parse_deployment(
      "name: x\naccepted_risks:\n  - check: peers:tcp-2222\n    reason: the baseliner's sshd, by design\n",
      "d.yaml");
  REQUIRE(p.accepted_risks.size() == 1);
  CHECK(p.accepted_risks[0].check == "peers:tcp-2222");
  CHECK(p.accepted_risks[0].reason == "the baseliner's sshd, by design");
  CHECK_THAT(
      error_of([] { parse_deployment("name: x\naccepted_risks:\n  - check: peers:tcp-2222\n", "d.yaml"); }),
      Catch::Contains("d.yaml:3:") && Catch::Contains("accepted_risks.0 needs reason"));
  CHECK_THAT(error_of([] {
               parse_deployment(
                   "name: x\naccepted_risks:\n  - {check: peers:tcp-2222, reason: ok}\n"
                   "  - {check: egress:metadata, reason: r}\n",
                   "d.yaml");
             }),
             Catch::Contains("d.yaml:4:") &&
                 Catch::Contains("accepted_risks.1 names no known check 'egress:metadata'") &&
                 Catch::Contains("peers:serve-port"));
  CHECK_THAT(error_of([] { parse_deployment("accepted_risks: [{reason: r}]\n", "d.yaml"); }),
             Catch::Contains("accepted_risks.0 needs check"));
  CHECK_THAT(error_of([] {
               parse_deployment("accepted_risks: [{check: peers:tcp-2222, reason: \"\"}]\n", "d.yaml");
             }),
             Catch::Contains("accepted_risks.0 needs reason"));
  CHECK_THAT(error_of([] {
               parse_deployment(
                   "accepted_risks: [{check: peers:tcp-2222, reason: a}, {check: peers:tcp-2222, "
                   "reason: b}]\n",
                   "d.yaml");
             }),
             Catch::Contains("accepted_risks.1 accepts peers:tcp-2222 a second time"));
  CHECK_THAT(error_of([] {
               parse_deployment("accepted_risks: [{check: peers:tcp-2222, reason: a, by: me}]\n", "d.yaml");
             }),
             Catch::Contains("unknown key 'by'"));
  CHECK_THAT(error_of([] { parse_deployment("accepted_risks: peers:tcp-2222\n", "d.yaml"); }),
             Catch::Contains("accepted_risks must be a list"));
}

TEST_CASE("deployment profiles: egress_deadline_ms sets how long blocked targets are given", "[scenario]") {
  CHECK(parse_deployment("runtime_classes: [gvisor]\n", "d.yaml").egress_deadline_ms ==
        kDefaultEgressDeadlineMs);
  CHECK(parse_deployment("egress_deadline_ms: 1500\n", "d.yaml").egress_deadline_ms == 1500);
  CHECK(load_deployment(test::source_dir() + "/scenarios/deployments/local.yaml").egress_deadline_ms < 3000);
  CHECK_THAT(
      error_of([] { parse_deployment("name: x\negress_deadline_ms: fast\n", "d.yaml"); }),
      Catch::Contains("d.yaml:2:1: egress_deadline_ms must be a whole number of milliseconds from 100 to"));
  CHECK_THAT(error_of([] { parse_deployment("egress_deadline_ms: 50\n", "d.yaml"); }),
             Catch::Contains("got 50"));
  CHECK_THAT(error_of([] { parse_deployment("egress_deadline_ms: 1.5\n", "d.yaml"); }),
             Catch::Contains("egress_deadline_ms must be a whole number"));
  CHECK_THAT(error_of([] { parse_deployment("egress_deadline_ms: 60000\n", "d.yaml"); }),
             Catch::Contains("got 60000"));
}

TEST_CASE("deployment profiles: egress_blocked_deadline_ms sets the wait on closed ways out", "[scenario]") {
  CHECK(parse_deployment("runtime_classes: [gvisor]\n", "d.yaml").egress_blocked_deadline_ms ==
        kDefaultBlockedDeadlineMs);
  CHECK(parse_deployment("egress_blocked_deadline_ms: 800\n", "d.yaml").egress_blocked_deadline_ms == 800);
  CHECK_THAT(error_of([] { parse_deployment("name: x\negress_blocked_deadline_ms: soon\n", "d.yaml"); }),
             Catch::Contains("d.yaml:2:1: egress_blocked_deadline_ms must be a whole number of milliseconds "
                             "from 50 to"));
  CHECK_THAT(error_of([] { parse_deployment("egress_blocked_deadline_ms: 10\n", "d.yaml"); }),
             Catch::Contains("got 10"));
  CHECK_THAT(error_of([] { parse_deployment("egress_blocked_deadline_ms: 60000\n", "d.yaml"); }),
             Catch::Contains("got 60000"));
}

TEST_CASE("deployment profiles: node_mounts are the node mounts every sandbox shows by design",
          "[scenario]") {
  using Mounts = std::vector<std::string>;
  CHECK(parse_deployment("backend: local\n", "d.yaml").node_mounts == Mounts{"/usr", "/etc/alternatives"});
  CHECK(parse_deployment("name: x\n", "d.yaml").node_mounts == Mounts{"/usr", "/etc/alternatives"});
  CHECK(parse_deployment("backend: local\nnode_mounts: []\n", "d.yaml").node_mounts.empty());
  CHECK(load_deployment(test::source_dir() + "/scenarios/deployments/staging.example.yaml")
            .node_mounts.empty());
  CHECK(parse_deployment("backend: local\nnode_mounts: [/opt/tools]\n", "d.yaml").node_mounts ==
        Mounts{"/opt/tools"});
  CHECK_THAT(error_of([] { parse_deployment("name: x\nnode_mounts: [usr]\n", "d.yaml"); }),
             Catch::Contains("d.yaml:2:15: node_mounts entries must be absolute mount points"));
  CHECK_THAT(error_of([] { parse_deployment("node_mounts: [/usr/../etc]\n", "d.yaml"); }),
             Catch::Contains("without . or .. segments"));
  CHECK_THAT(error_of([] { parse_deployment("node_mounts: /usr\n", "d.yaml"); }),
             Catch::Contains("node_mounts must be a list"));
}

TEST_CASE("an alias inside the node it names is refused as a cycle, naming the alias", "[scenario]") {
  std::string msg = error_of([] { parse_yaml("eval_set: &a {x: *a}\n", "cycle.yaml"); });
  CHECK(msg ==
        "cycle.yaml:1:18: an alias refers to a node that contains it (a cycle); aliases may only repeat a "
        "finished node");
  msg = error_of([] { parse_yaml("a: &a\n  - b: [1, *a]\n", "deep.yaml"); });
  CHECK_THAT(msg, Catch::StartsWith("deep.yaml:2:12: an alias refers to a node that contains it"));
}

TEST_CASE("aliases of finished nodes are copied, and located at the alias", "[scenario]") {
  auto doc = parse_yaml("base: &b { image: x, tags: [1, 2] }\nk: &k key\nitems:\n  - *b\n  - *b\nname: *k\n",
                        "alias.yaml");
  CHECK(doc.value["items"][0] == doc.value["base"]);
  CHECK(doc.value["items"][1]["tags"][1] == 2);
  CHECK(doc.value["name"] == "key");
  CHECK(doc.source.find("/items/1").line == 5);
  CHECK(doc.source.find("/items/1/tags/0").line == 5);  // inside an alias: the alias's mark
}

TEST_CASE("text that is not UTF-8 is refused, naming line and column of the byte", "[scenario]") {
  CHECK(error_of([] { parse_yaml("a: 1\nname: caf\xe9\n", "latin1.yaml"); }) ==
        "latin1.yaml:2:10: the file is not UTF-8 text (byte 0xe9 here); save it as UTF-8");
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 either.
  for (std::string bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\xff"}) {
    INFO(bad.size());
    CHECK(first_invalid_utf8("x: " + bad).has_value());
  }
  CHECK_FALSE(first_invalid_utf8("x: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92").has_value());
  CHECK(parse_yaml("x: caf\xc3\xa9\n", "utf8.yaml").value["x"] == "caf\xc3\xa9");
}

TEST_CASE("control characters (a NUL in a key) are refused with line and column", "[scenario]") {
  // fuzz_deployment_yaml: yaml-cpp turned this NUL into a byte that is not UTF-8, and the
  // profile could then not be written as JSON (an exception past every handler).
  const std::string nul = std::string("name: no-hardened\nnearuntim") + '\0' + "_alasses: [gvisor]\n";
  CHECK(error_of([&] { parse_deployment(nul, "nul.yaml"); }) ==
        "nul.yaml:2:10: a control character (byte 0x00 here) is not allowed in YAML");
  CHECK(error_of([] { parse_yaml("a: 1\x7f\n", "del.yaml"); }) ==
        "del.yaml:1:5: a control character (byte 0x7f here) is not allowed in YAML");
  CHECK_FALSE(first_control_character("a:\tb\r\n- c\n").has_value());
}

TEST_CASE("the escapes \\N and \\_ of a quoted scalar come out as UTF-8", "[scenario]") {
  // fuzz_deployment_yaml: yaml-cpp writes them as the single bytes 0x85 and 0xa0.
  auto doc = parse_yaml("a: \"x\\Ny\\_z\"\n\"k\\N\": 1\n", "escapes.yaml");
  CHECK(doc.value["a"] == "x\xc2\x85y\xc2\xa0z");
  CHECK(doc.value.contains("k\xc2\x85"));
  CHECK_NOTHROW(doc.value.dump());
}

TEST_CASE("a billion-laughs document is refused once aliases copied kMaxAliasNodes nodes", "[scenario]") {
  std::string bomb = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    bomb += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += std::string(k ? ", " : "") + "*l" + std::to_string(i - 1);
    bomb += "]\n";
  }
  std::string msg = error_of([&] { parse_yaml(bomb, "bomb.yaml"); });
  CHECK_THAT(msg, Catch::StartsWith("bomb.yaml:6:15:"));
  CHECK_THAT(msg, Catch::Contains("aliases expand to more than 250000 nodes"));
  // Many small aliases within the bound are fine.
  std::string many = "d: &d { a: 1, b: 2 }\nitems:\n";
  for (int i = 0; i < 1000; ++i) many += "  - *d\n";
  CHECK(parse_yaml(many, "many.yaml").value["items"].size() == 1000);
}

TEST_CASE("non-scalar keys are refused and their values dropped; parsing goes on", "[scenario]") {
  std::string msg =
      error_of([] { parse_yaml("? [a, b]\n: 1\nok: 2\n? { x: 1 }\n: { y: 2 }\n", "keys.yaml"); });
  CHECK_THAT(msg, Catch::Contains("keys.yaml:1:3: mapping keys must be plain strings"));
  CHECK_THAT(msg, Catch::Contains("keys.yaml:4:3: mapping keys must be plain strings"));
  CHECK(error_of([] {
          parse_yaml("&k a: 1\n*k : 2\n", "alias-key.yaml");
        }).find("mapping keys must be plain strings") != std::string::npos);
}

TEST_CASE("deep nesting is a clear error, not a stack overflow", "[scenario]") {
  std::string deep(100000, '[');
  std::string msg = error_of([&] { parse_yaml(deep, "deep.yaml"); });
  CHECK_THAT(msg, Catch::StartsWith("deep.yaml:"));
  CHECK_THAT(msg, Catch::Contains("levels deep"));
}

TEST_CASE("a scenario keeps one source map for the file and its eval set", "[scenario]") {
  auto s = parse_scenario("eval_set:\n  tasks:\n    - name: t\n      items: [{ name: i }]\n", "one.yaml");
  CHECK(s.eval_set_source.size() == s.scenario_source.size());
  CHECK(s.at_eval_set("/tasks/0", "", "m").line == 3);
}
