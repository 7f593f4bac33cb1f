// Every rule of the policy, each with a case where it applies and one where it must not.
#include <catch2/catch.hpp>

#include "tests/unit/policy_test_util.h"

using namespace isoharness;
using namespace isoharness::policy;
using isoharness::test::all_errors;
using isoharness::test::has_finding;
using isoharness::test::plan_yaml;

namespace {

std::string one_item(const std::string& set_isolation, const std::string& item_isolation = "",
                     const std::string& extra = "") {
  std::string y = "eval_set:\n";
  if (!set_isolation.empty()) y += "  isolation: " + set_isolation + "\n";
  y += "  tasks:\n    - name: t\n      items:\n        - name: i\n";
  if (!item_isolation.empty()) y += "          isolation: " + item_isolation + "\n";
  return y + extra;
}

const nlohmann::json& sc(const PlanItem& item, const char* service = "default") {
  static const nlohmann::json empty = nlohmann::json::object();
  const auto& sv = item.values["services"][service];
  return sv.contains("securityContext") ? sv["securityContext"] : empty;
}

}  // namespace

TEST_CASE("isolation forms: a level or a mapping; unknown keys and levels refused", "[policy]") {
  auto ok = plan_yaml(one_item("strict"));
  REQUIRE(ok.accepted());
  CHECK(ok.items[0].level == Level::strict);
  auto mapping = plan_yaml(one_item("{level: strict}"));
  REQUIRE(mapping.accepted());
  CHECK(mapping.items[0].level == Level::strict);
  auto absent = plan_yaml(one_item(""));
  REQUIRE(absent.accepted());
  CHECK(absent.items[0].level == Level::standard);

  auto bad_key = plan_yaml(one_item("{level: strict, allowDomains: [a.example.com]}"));
  CHECK_FALSE(bad_key.accepted());
  CHECK_THAT(all_errors(bad_key), Catch::Contains("unknown isolation key 'allowDomains'"));
  auto bad_level = plan_yaml(one_item("paranoid"));
  CHECK_THAT(all_errors(bad_level), Catch::Contains("unknown isolation level 'paranoid'"));
  auto bad_type = plan_yaml(one_item("{non_root: yes}"));
  CHECK_THAT(all_errors(bad_type), Catch::Contains("non_root must be true or false"));
  auto empty = plan_yaml(one_item("", "null"));
  CHECK_THAT(all_errors(empty), Catch::Contains("empty isolation block"));
}

TEST_CASE("the eval set's level is the floor: an item may raise it, never lower it", "[policy]") {
  auto raised = plan_yaml(one_item("standard", "strict"));
  REQUIRE(raised.accepted());
  CHECK(raised.items[0].level == Level::strict);
  auto same = plan_yaml(one_item("strict", "{level: strict}"));
  CHECK(same.accepted());
  auto inherited =
      plan_yaml(one_item("strict", "{non_root: true}", "sandbox_defaults: {image_user: non-root}\n"));
  REQUIRE(inherited.accepted());
  CHECK(inherited.items[0].level == Level::strict);

  auto lowered = plan_yaml(one_item("strict", "standard"));
  CHECK_FALSE(lowered.accepted());
  REQUIRE(lowered.errors.size() == 1);
  CHECK(lowered.errors[0].line == 7);
  CHECK(lowered.errors[0].item == "task t, item i (tasks[0].items[0])");
  CHECK_THAT(lowered.errors[0].message,
             Catch::StartsWith("isolation level standard is below the eval set's strict"));
}

TEST_CASE("strict sets privilege escalation, capabilities and seccomp on every service; standard none",
          "[policy]") {
  auto strict = plan_yaml(
      one_item("strict", "", "sandboxes: [{task: 0, item: 0, services: {scorer: {image: scorer:v1}}}]\n"));
  REQUIRE(strict.accepted());
  for (const char* svc : {"default", "scorer"}) {
    const auto& c = sc(strict.items[0], svc);
    CHECK(c["allowPrivilegeEscalation"] == false);
    CHECK(c["capabilities"]["drop"] == nlohmann::json{"ALL"});
    CHECK(c["seccompProfile"]["type"] == "RuntimeDefault");
    CHECK_FALSE(c.contains("runAsNonRoot"));
    CHECK_FALSE(c.contains("readOnlyRootFilesystem"));
  }
  CHECK(strict.items[0].expect["cap_eff"] == "0000000000000000");
  CHECK(strict.items[0].expect["no_new_privs"] == true);

  auto standard = plan_yaml(one_item("standard"));
  REQUIRE(standard.accepted());
  CHECK_FALSE(standard.items[0].values["services"]["default"].contains("securityContext"));
  CHECK(standard.items[0].expect["cap_eff"].is_null());
  CHECK(standard.items[0].expect["no_new_privs"] == false);
  CHECK_FALSE(standard.items[0].values.contains("allowDomains"));
  CHECK_FALSE(standard.items[0].values.contains("allowCIDR"));
  CHECK_FALSE(standard.items[0].values.contains("allowEntities"));
}

TEST_CASE("strict uses the named runtime class, else the deployment's hardened one, else refuses",
          "[policy]") {
  auto hardened = plan_yaml(one_item("strict"));
  REQUIRE(hardened.accepted());
  CHECK(hardened.items[0].runtime_class == "gvisor");
  CHECK(hardened.items[0].runtime_class_source == policy::RuntimeClassSource::hardened);
  CHECK(hardened.items[0].expect["kernel"] == "gvisor");

  auto named = plan_yaml(one_item("{level: strict, runtime_class: kata}"), test::kPlatformDeployment);
  REQUIRE(named.accepted());
  CHECK(named.items[0].runtime_class == "kata");
  CHECK(named.items[0].runtime_class_source == policy::RuntimeClassSource::isolation);
  CHECK(named.items[0].expect["kernel"] == "host");

  auto named_without_hardened =
      plan_yaml(one_item("{level: strict, runtime_class: gvisor}"), test::kNoHardenedDeployment);
  CHECK(named_without_hardened.accepted());

  auto refused = plan_yaml(one_item("strict"), test::kNoHardenedDeployment);
  CHECK_FALSE(refused.accepted());
  CHECK_THAT(all_errors(refused), Catch::Contains("strict needs a hardened runtime class, but deployment "
                                                  "'no-hardened' configures none"));
  // Standard needs no hardened class.
  CHECK(plan_yaml(one_item("standard"), test::kNoHardenedDeployment).accepted());
}

TEST_CASE("a runtime class the deployment does not offer is refused", "[policy]") {
  auto offered = plan_yaml(one_item("{runtime_class: gvisor}"));
  CHECK(offered.accepted());
  auto missing = plan_yaml(one_item("", "{runtime_class: kata}"));
  CHECK_FALSE(missing.accepted());
  CHECK_THAT(all_errors(missing),
             Catch::Contains("runtime class 'kata' is not offered by deployment 'local' (offers: gvisor)"));
  // The eval set's class is reported once, not per item.
  auto set_level = plan_yaml(
      "eval_set:\n  isolation: {runtime_class: kata}\n  tasks:\n    - name: t\n      items: [{name: a}, "
      "{name: b}]\n");
  CHECK(set_level.errors.size() == 1);
  CHECK(set_level.errors[0].item == "eval set isolation");
}

TEST_CASE("runtime_class alone works at any level and overrides the task's own class", "[policy]") {
  auto p =
      plan_yaml(one_item("{runtime_class: gvisor}", "", "sandbox_defaults: {runtime_class: runc-fast}\n"));
  REQUIRE(p.accepted());
  CHECK(p.items[0].level == Level::standard);
  CHECK(p.items[0].runtime_class == "gvisor");
  CHECK(p.items[0].expect["kernel"] == "gvisor");
  CHECK(p.items[0].expect["cap_eff"].is_null());
  CHECK(p.items[0].expect["cap_eff_default"] == "00000000a80405fb");
  CHECK(has_finding(p.items[0], "task_runtime_class_overridden"));

  // Without isolation, the task's class stands (it must be offered).
  auto pinned =
      plan_yaml(one_item("", "", "sandbox_defaults: {runtime_class: kata}\n"), test::kPlatformDeployment);
  REQUIRE(pinned.accepted());
  CHECK(pinned.items[0].runtime_class == "kata");
  CHECK(pinned.items[0].runtime_class_source == policy::RuntimeClassSource::task);
  CHECK_FALSE(has_finding(pinned.items[0], "task_runtime_class_overridden"));
  auto not_offered = plan_yaml(one_item("", "", "sandbox_defaults: {runtime_class: runc-fast}\n"));
  CHECK_THAT(all_errors(not_offered), Catch::Contains("the task pins runtime class 'runc-fast'"));
}

TEST_CASE("the hardened class is the default for unpinned sandboxes only where the deployment says so",
          "[policy]") {
  auto platform = plan_yaml(one_item("standard"), test::kPlatformDeployment);
  REQUIRE(platform.accepted());
  CHECK(platform.items[0].runtime_class == "gvisor");
  CHECK(platform.items[0].runtime_class_source == policy::RuntimeClassSource::deployment_default);
  auto local = plan_yaml(one_item("standard"));
  REQUIRE(local.accepted());
  CHECK_FALSE(local.items[0].runtime_class.has_value());
  CHECK(local.items[0].expect["kernel"] == "host");
  CHECK(local.items[0].expect["cap_eff_default"] == "00000000a80425fb");
}

TEST_CASE("runtime_class_override plans as if the eval set named the class", "[policy]") {
  PlanOptions o;
  o.runtime_class_override = "gvisor";
  auto p = plan_yaml(one_item("standard"), test::kLocalDeployment, o);
  REQUIRE(p.accepted());
  CHECK(p.items[0].runtime_class == "gvisor");
  CHECK(p.items[0].runtime_class_source == policy::RuntimeClassSource::option);
  CHECK_FALSE(p.items[0].values["services"]["default"].contains("securityContext"));
  o.runtime_class_override = "kata";
  auto bad = plan_yaml(one_item("standard"), test::kLocalDeployment, o);
  CHECK_FALSE(bad.accepted());
  CHECK(bad.errors[0].item == "--runtime-class");
}

TEST_CASE("a GPU service keeps the node default runtime under strict: a known risk", "[policy]") {
  const char* facts =
      "sandboxes: [{task: 0, item: 0, services: {default: {gpu: true}, scorer: {image: scorer:v1}}}]\n";
  auto p = plan_yaml(one_item("strict", "", facts));
  REQUIRE(p.accepted());
  const auto& item = p.items[0];
  CHECK(item.gpu);
  CHECK_FALSE(item.runtime_class.has_value());
  CHECK(item.runtime_class_source == policy::RuntimeClassSource::gpu_exempt);
  // The chart's default for an absent runtimeClassName is gvisor: the node default must be
  // stated, and the GPU is asked for as the platform reads it.
  CHECK(item.values["services"]["default"]["runtimeClassName"] == "CLUSTER_DEFAULT");
  CHECK(item.values["services"]["default"]["resources"]["limits"]["nvidia.com/gpu"] == 1);
  CHECK_FALSE(item.values["services"]["default"].contains("gpu"));
  CHECK(item.values["services"]["scorer"]["runtimeClassName"] == "gvisor");
  CHECK(sc(item)["capabilities"]["drop"] == nlohmann::json{"ALL"});
  CHECK(item.expect["kernel"] == "host");
  CHECK(item.expect["cap_eff"] == "0000000000000000");
  CHECK(has_finding(item, "gpu_without_syscall_boundary"));
  CHECK(p.known_risk_count() == 1);

  PlanOptions deny;
  deny.deny_known_risks = true;
  auto refused = plan_yaml(one_item("strict", "", facts), test::kLocalDeployment, deny);
  CHECK_FALSE(refused.accepted());
  CHECK_THAT(all_errors(refused), Catch::Contains("known risk refused by --deny-known-risks: "
                                                  "gpu_without_syscall_boundary"));

  // Without a GPU, nothing to refuse; at standard a GPU is no known risk.
  CHECK(plan_yaml(one_item("strict"), test::kLocalDeployment, deny).accepted());
  auto standard = plan_yaml(one_item("standard", "", facts), test::kLocalDeployment, deny);
  CHECK(standard.accepted());
  CHECK(standard.known_risk_count() == 0);
}

TEST_CASE("egress: nothing unless named; named targets rendered; wildcards refused under strict",
          "[policy]") {
  auto none = plan_yaml(one_item("strict"));
  CHECK(none.items[0].expect["egress_roles"]["internet"] == "none");
  auto named = plan_yaml(
      one_item("{level: strict, allow_domains: [target.example.com], allow_cidr: [198.51.100.0/24]}"));
  REQUIRE(named.accepted());
  CHECK(named.items[0].values["allowDomains"] == nlohmann::json{"target.example.com"});
  CHECK(named.items[0].values["allowCIDR"] == nlohmann::json{"198.51.100.0/24"});
  CHECK_FALSE(named.items[0].values.contains("allowEntities"));
  CHECK(named.items[0].expect["egress_roles"]["internet"] == "named");
  CHECK(named.items[0].expect["egress_roles"]["resolver"] == true);
  CHECK(has_finding(named.items[0], "egress_opened"));

  auto star = plan_yaml(one_item("{level: strict, allow_domains: ['*']}"));
  CHECK_THAT(all_errors(star), Catch::Contains("name your targets"));
  auto all4 = plan_yaml(one_item("standard", "{level: strict, allow_cidr: [0.0.0.0/0]}"));
  CHECK_THAT(all_errors(all4), Catch::Contains("allow_cidr 0.0.0.0/0 grants every address"));
  auto all6 = plan_yaml(one_item("standard", "{level: strict, allow_cidr: ['::/0']}"));
  CHECK_THAT(all_errors(all6), Catch::Contains("allow_cidr ::/0 grants every address"));
  // Inherited from a standard eval set by an item raised to strict: refused at the item.
  auto inherited = plan_yaml(one_item("{allow_domains: ['*']}", "strict"));
  REQUIRE(inherited.errors.size() == 1);
  CHECK(inherited.errors[0].item == "task t, item i (tasks[0].items[0])");
  // At standard a wildcard is the task author's business.
  auto standard_star = plan_yaml(one_item("{allow_domains: ['*']}"));
  REQUIRE(standard_star.accepted());
  CHECK(standard_star.items[0].expect["egress_roles"]["internet"] == "all");
}

TEST_CASE("malformed domains and ranges are refused with what to write instead", "[policy]") {
  auto p =
      plan_yaml(one_item("{allow_domains: [http://a.example.com, a..example.com], "
                         "allow_cidr: [198.51.100.1/24, 10.0.0.0/33]}"));
  CHECK(p.errors.size() == 4);
  CHECK_THAT(all_errors(p), Catch::Contains("a domain name, not a URL"));
  CHECK_THAT(all_errors(p), Catch::Contains("did you mean 198.51.100.0/24?"));
  auto good = plan_yaml(one_item("{allow_domains: ['*.example.com'], allow_cidr: ['2001:db8::/32']}"));
  CHECK(good.accepted());
}

TEST_CASE("a task's network_mode bridge: overridden by strict, everything at standard", "[policy]") {
  const char* facts = "sandbox_defaults: {network_mode: bridge}\n";
  auto strict = plan_yaml(one_item("strict", "", facts));
  REQUIRE(strict.accepted());
  CHECK(has_finding(strict.items[0], "task_network_overridden"));
  CHECK_FALSE(strict.items[0].values["services"]["default"].contains("networkIsolated"));
  CHECK_FALSE(strict.items[0].values.contains("allowDomains"));
  CHECK_FALSE(strict.items[0].values.contains("allowEntities"));
  CHECK(strict.items[0].expect["egress_roles"]["internet"] == "none");

  auto standard = plan_yaml(one_item("standard", "", facts));
  REQUIRE(standard.accepted());
  CHECK_FALSE(has_finding(standard.items[0], "task_network_overridden"));
  // What the platform adds for a bridge: every domain and the world entity.
  CHECK(standard.items[0].values["allowDomains"] == nlohmann::json{"*"});
  CHECK(standard.items[0].values["allowEntities"] == nlohmann::json{"world"});
  CHECK(standard.items[0].expect["egress_roles"]["internet"] == "all");

  // A service pinned to none keeps it at every level.
  auto none = plan_yaml(one_item(
      "strict", "", "sandbox_defaults: {services: {scorer: {image: scorer:v1, network_mode: none}}}\n"));
  CHECK(none.items[0].values["services"]["scorer"]["networkIsolated"] == true);
}

TEST_CASE("non_root: uid 1000; refused on a root image; noted when undeclared", "[policy]") {
  auto p = plan_yaml(
      one_item("{level: strict, non_root: true}", "", "sandbox_defaults: {image_user: non-root}\n"));
  REQUIRE(p.accepted());
  CHECK(sc(p.items[0])["runAsNonRoot"] == true);
  CHECK(sc(p.items[0])["runAsUser"] == 1000);
  CHECK(p.items[0].expect["uid"] == 1000);
  CHECK(p.items[0].expect["root_writable"] == false);
  CHECK(has_finding(p.items[0], "non_root_tools_visible"));

  auto root =
      plan_yaml(one_item("{level: strict, non_root: true}", "", "sandbox_defaults: {image_user: root}\n"));
  CHECK_FALSE(root.accepted());
  CHECK_THAT(all_errors(root), Catch::Contains("whose image user is root: kubelet refuses to start it"));
  CHECK(root.errors[0].line == 2);

  auto unknown = plan_yaml(one_item("{level: strict, non_root: true}"));
  REQUIRE(unknown.accepted());
  CHECK(has_finding(unknown.items[0], "image_user_undeclared"));

  auto off = plan_yaml(one_item("strict"));
  CHECK_FALSE(sc(off.items[0]).contains("runAsUser"));
  CHECK(off.items[0].expect["uid"].is_null());
  CHECK(off.items[0].expect["root_writable"] == true);
}

TEST_CASE("read_only_root: read-only root with emptyDir scratch at /tmp and the workdir", "[policy]") {
  auto p = plan_yaml(
      one_item("{level: strict, read_only_root: true}", "", "sandbox_defaults: {workdir: /work}\n"));
  REQUIRE(p.accepted());
  const auto& sv = p.items[0].values["services"]["default"];
  CHECK(sv["securityContext"]["readOnlyRootFilesystem"] == true);
  CHECK(sv["volumes"] ==
        nlohmann::json::parse(R"([{"name":"tmp","emptyDir":{}},{"name":"work","emptyDir":{}}])"));
  CHECK(sv["volumeMounts"] ==
        nlohmann::json::parse(R"([{"name":"tmp","mountPath":"/tmp"},{"name":"work","mountPath":"/work"}])"));
  CHECK(p.items[0].expect["root_writable"] == false);
  CHECK(p.items[0].expect["writable_paths"] == nlohmann::json{"/tmp", "/work"});

  auto off = plan_yaml(one_item("strict"));
  CHECK_FALSE(off.items[0].values["services"]["default"].contains("volumes"));
  CHECK_FALSE(sc(off.items[0]).contains("readOnlyRootFilesystem"));
}

TEST_CASE("an item cannot switch off an image control the eval set turns on", "[policy]") {
  const char* facts = "sandbox_defaults: {image_user: non-root}\n";
  auto off = plan_yaml(
      one_item("{level: strict, non_root: true}", "{read_only_root: true, non_root: false}", facts));
  CHECK_THAT(all_errors(off), Catch::Contains("non_root: false would switch off what the eval set turns on"));
  auto on = plan_yaml(one_item("{level: strict, non_root: true}", "{read_only_root: true}", facts));
  REQUIRE(on.accepted());
  CHECK(on.items[0].isolation.non_root);
  CHECK(on.items[0].isolation.read_only_root);
}

TEST_CASE("provider-executed tools: a known risk under strict, a note at standard", "[policy]") {
  const char* facts = "sandbox_defaults: {provider_tools: [web_search]}\n";
  auto strict = plan_yaml(one_item("strict", "", facts));
  REQUIRE(strict.accepted());
  CHECK(has_finding(strict.items[0], "provider_executed_tools"));
  CHECK(strict.known_risk_count() == 1);
  auto standard = plan_yaml(one_item("standard", "", facts));
  CHECK(has_finding(standard.items[0], "provider_executed_tools"));
  CHECK(standard.known_risk_count() == 0);
  CHECK_FALSE(has_finding(plan_yaml(one_item("strict")).items[0], "provider_executed_tools"));
}

TEST_CASE("expectations are runtime-aware", "[policy]") {
  using nlohmann::json;
  auto g = plan_yaml(one_item("strict")).items[0].expect;
  CHECK(g["kernel"] == "gvisor");
  CHECK(g["seccomp"] == json{"filter", "emulated"});
  CHECK(g["kallsyms"] == json{"absent", "empty"});
  CHECK(g["debugfs"] == json{"absent"});
  for (const char* open : {"user_namespace", "mount", "sysrq"}) CHECK(g[open] == json{"refused", "emulated"});
  auto h = plan_yaml(one_item("standard")).items[0].expect;
  CHECK(h["kernel"] == "host");
  CHECK(h["seccomp"] == json{"filter"});
  CHECK(h["kallsyms"] == json{"absent", "empty", "zeroed"});  // addresses hidden, never "populated"
  CHECK(h["debugfs"] == json{"absent", "empty"});
  for (const char* open : {"user_namespace", "mount", "sysrq"}) CHECK(h[open] == json{"refused"});
  for (const auto& e : {g, h}) {
    CHECK(e["cap_eff_forbidden"].size() >= 1);
    CHECK(e["cap_eff_forbidden"][0] == "CAP_SYS_ADMIN");
    for (const char* key :
         {"kernel", "cap_eff", "cap_eff_default", "cap_eff_forbidden", "no_new_privs", "uid", "root_writable",
          "root_read_only", "writable_paths", "seccomp", "allow_domains", "allow_cidr", "egress_roles"}) {
      CHECK(e.contains(key));
    }
  }
}

TEST_CASE("item ids are stable, unique and distinguish bridged items", "[policy]") {
  const char* yaml = R"(
tasks:
  - name: mtb
    items:
      - {name: bridge, args: {image_tag: a}, sample_ids: [x]}
      - {name: bridge, args: {image_tag: b}, sample_ids: [x]}
  - name: mtb
    items:
      - {name: bridge, args: {image_tag: a}, sample_ids: [x]}
)";
  auto a = plan_yaml(yaml);
  auto b = plan_yaml(yaml);
  REQUIRE(a.items.size() == 3);
  CHECK(a.items[0].id == b.items[0].id);
  CHECK_THAT(a.items[0].id, Catch::Matches("mtb/0-bridge-[0-9a-f]{8}"));
  CHECK(a.items[0].id != a.items[1].id);
  CHECK(a.items[2].id == a.items[0].id + "~2");
  // The id depends on the item's identity, not on other items.
  auto c = plan_yaml(
      "tasks:\n  - name: mtb\n    items:\n      - {name: bridge, args: {image_tag: b}, sample_ids: [x]}\n");
  CHECK(c.items[0].id.substr(c.items[0].id.size() - 8) == a.items[1].id.substr(a.items[1].id.size() - 8));
}

TEST_CASE("matrix runtimes and node classes must exist in the deployment", "[policy]") {
  auto ok =
      plan_yaml(one_item("", "", "matrix: {runtimes: [runc, gvisor], node_classes: [tier, non-tier]}\n"));
  CHECK(ok.accepted());
  auto bad = plan_yaml(one_item("", "", "matrix: {runtimes: [runc, kata], node_classes: [gpu-pool]}\n"));
  CHECK_THAT(all_errors(bad), Catch::Contains("runtime 'kata' is neither runc"));
  CHECK_THAT(all_errors(bad), Catch::Contains("node class 'gpu-pool' is not in deployment 'local'"));
}
