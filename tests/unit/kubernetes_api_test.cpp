// The Kubernetes API's view of a sandbox (docs/CONTRACTS.md §4.9): the readers on fixtures
// in kubectl's own JSON shape and on hostile text, the comparison of the admitted pod spec
// with the plan's values (agree, disagree, missing for every family), `kernel` decided by
// both sides, the kubernetes_api: profile section, the hawk backend reading the view by
// command and by file; and what the node agent reads and answers: `crictl inspect` output
// in the CRI's own shape, and its answer MACed as the operator witness log is.
#include "harness/verify/kubernetes_api.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/common/error.h"
#include "harness/deploy/cri_inspect.h"
#include "harness/deploy/hawk/hawk_backend.h"
#include "harness/deploy/kube_objects.h"
#include "harness/deploy/node_agent_wire.h"
#include "harness/scenario/scenario.h"

using namespace isoharness;
using nlohmann::json;

namespace {

const std::string kKubeFixtures = std::string(ISOHARNESS_SOURCE_DIR) + "/tests/fixtures/kubernetes/";

std::string kube_fixture(const std::string& name) {
  std::ifstream in(kKubeFixtures + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A strict item's rendered values (docs/CONTRACTS.md §1), as `plan --format values` gives them.
json strict_values() {
  return json::parse(R"({"services": {"default": {
      "runtimeClassName": "gvisor",
      "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]},
                          "seccompProfile": {"type": "RuntimeDefault"}},
      "volumes": [{"name": "tmp", "emptyDir": {}}],
      "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}]}}})");
}

deploy::KubernetesApiView view_of(const json& pods, bool with_classes = true) {
  deploy::KubernetesApiView v;
  v.state = deploy::KubernetesApiView::State::read;
  v.source = "kubectl get pods -n inspect-3f9c2a1b -o json";
  auto list = deploy::read_pod_list(pods.dump());
  REQUIRE(list);
  v.pods = list->pods;
  if (with_classes) {
    auto classes = deploy::read_runtime_classes(kube_fixture("runtimeclasses.json"));
    REQUIRE(classes);
    v.runtime_classes = *classes;
    v.runtime_classes_read = true;
  }
  return v;
}

std::map<std::string, verify::CheckResult> judged(const json& values, const json& pods,
                                                  bool with_classes = true) {
  const auto view = view_of(pods, with_classes);
  std::map<std::string, verify::CheckResult> out;
  for (auto& c : verify::check_kubernetes_api({values, view, {{"gvisor", "runsc"}}})) out[c.control] = c;
  return out;
}

json pods_fixture() {
  return json::parse(kube_fixture("pods-strict.json"));
}

json& agent_container(json& pods) {
  return pods["items"][0]["spec"]["containers"][0];
}

}  // namespace

TEST_CASE("kubernetes readers: pods, runtime classes and Cilium policies in kubectl's own shape",
          "[kubernetes]") {
  auto list = deploy::read_pod_list(kube_fixture("pods-strict.json"));
  REQUIRE(list);
  REQUIRE(list->pods.size() == 1);
  const auto& pod = list->pods[0];
  CHECK(pod.name == "agent-env-3f9c2a1b-default-0");
  CHECK(pod.namespace_ == "inspect-3f9c2a1b");
  CHECK(pod.uid == "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f");
  CHECK(pod.node_name == "ip-10-0-12-34.ec2.internal");
  CHECK(pod.runtime_class_name == "gvisor");
  CHECK(pod.automount_service_account_token == false);
  CHECK_FALSE(pod.host_pid.has_value());
  REQUIRE(pod.container("default"));
  const auto& sc = pod.container("default")->security;
  CHECK(sc.allow_privilege_escalation == false);
  CHECK(sc.capabilities_drop == std::vector<std::string>{"ALL"});
  CHECK(sc.seccomp_type == "RuntimeDefault");
  CHECK(pod.container("coredns"));
  CHECK(pod.volume("tmp")->empty_dir);

  auto classes = deploy::read_runtime_classes(kube_fixture("runtimeclasses.json"));
  REQUIRE(classes);
  REQUIRE(classes->size() == 1);
  CHECK((*classes)[0].name == "gvisor");
  CHECK((*classes)[0].handler == "runsc");
  auto one =
      deploy::read_runtime_classes(R"({"kind":"RuntimeClass","metadata":{"name":"kata"},"handler":"kata"})");
  REQUIRE(one);
  CHECK((*one)[0].handler == "kata");

  auto policies = deploy::read_cilium_policies(kube_fixture("ciliumnetworkpolicies.json"));
  REQUIRE(policies);
  REQUIRE(policies->size() == 1);
  const auto& p = (*policies)[0];
  CHECK(p.endpoint_selector.match_labels.at("inspect/service") == "default");
  REQUIRE(p.egress.size() == 3);
  CHECK(p.egress[0].endpoints.at(0).match_labels.at("k8s-app") == "kube-dns");
  CHECK(p.egress[1].fqdns == std::vector<std::string>{"pypi.org", "*.pythonhosted.org"});
  CHECK(p.egress[1].ports.at(0).port == "443");
  CHECK(p.egress[1].ports.at(0).protocol == "TCP");
  CHECK(p.egress[2].cidrs == std::vector<std::string>{"203.0.113.9/32", "198.51.100.0/24"});
  REQUIRE(p.ingress.size() == 1);
  CHECK(p.ingress[0].entities == std::vector<std::string>{"all"});
  REQUIRE(p.egress_deny.size() == 1);
  CHECK(p.egress_deny[0].entities == std::vector<std::string>{"kube-apiserver"});
}

TEST_CASE("kubernetes readers: hostile text never throws, a wrong type reads as absent, bounds hold",
          "[kubernetes]") {
  CHECK_FALSE(deploy::read_pod_list("not json"));
  CHECK_FALSE(deploy::read_pod_list("[1,2]"));
  CHECK_FALSE(deploy::read_pod_list(R"({"kind":"Pod","metadata":{"name":"x"},"spec":{}})"));  // not a List
  CHECK_FALSE(deploy::read_pod_list(std::string(200, '[')));
  CHECK_FALSE(deploy::read_pod_list(kube_fixture("pods-strict.json"), {.max_bytes = 100}));
  CHECK_FALSE(deploy::read_runtime_classes(R"({"kind":"Pod"})"));
  CHECK_FALSE(deploy::read_cilium_policies(R"({"kind":"NetworkPolicy"})"));

  json pods = pods_fixture();
  auto& spec = pods["items"][0]["spec"];
  spec["runtimeClassName"] = 7;  // a number: absent
  spec["hostPID"] = "true";      // a string: absent
  agent_container(pods)["securityContext"]["allowPrivilegeEscalation"] = "false";
  agent_container(pods)["securityContext"]["capabilities"]["drop"] = "ALL";
  agent_container(pods)["resources"]["limits"]["nvidia.com/gpu"] = "2";
  pods["items"].push_back(42);  // no Pod: skipped and named
  auto list = deploy::read_pod_list(pods.dump());
  REQUIRE(list);
  REQUIRE(list->pods.size() == 1);
  CHECK(list->problems.size() == 1);
  const auto& pod = list->pods[0];
  CHECK_FALSE(pod.runtime_class_name);
  CHECK_FALSE(pod.host_pid);
  CHECK_FALSE(pod.container("default")->security.allow_privilege_escalation);
  CHECK_FALSE(pod.container("default")->security.capabilities_drop);  // "ALL", not a list
  CHECK(pod.container("default")->gpus == 2);

  json many = pods_fixture();
  for (int i = 0; i < 10; ++i) many["items"].push_back(many["items"][0]);
  auto bounded = deploy::read_pod_list(many.dump(), {.max_items = 4});
  REQUIRE(bounded);
  CHECK(bounded->pods.size() == 4);
  CHECK_FALSE(bounded->problems.empty());
}

TEST_CASE("kubernetes api: an admitted spec that agrees with the plan passes every family", "[kubernetes]") {
  const auto checks = judged(strict_values(), pods_fixture());
  REQUIRE(checks.size() == 6);
  for (const auto& [control, c] : checks) {
    INFO(control << ": " << c.reason);
    CHECK(c.status == CheckStatus::pass);
    CHECK_THAT(c.evidence, Catch::Contains("agent-env-3f9c2a1b-default-0"));
  }
}

TEST_CASE("kubernetes api: runtimeClassName absent, CLUSTER_DEFAULT, another class or another handler fails",
          "[kubernetes]") {
  json pods = pods_fixture();
  pods["items"][0]["spec"].erase("runtimeClassName");
  auto c = judged(strict_values(), pods).at("api:runtime_class");
  CHECK(c.status == CheckStatus::fail);
  CHECK_THAT(c.observed,
             Catch::Contains("the plan sets runtimeClassName 'gvisor'; the API shows no runtimeClassName"));

  pods["items"][0]["spec"]["runtimeClassName"] = "CLUSTER_DEFAULT";
  CHECK(judged(strict_values(), pods).at("api:runtime_class").status == CheckStatus::fail);
  pods["items"][0]["spec"]["runtimeClassName"] = "runc-fast";
  CHECK_THAT(judged(strict_values(), pods).at("api:runtime_class").observed, Catch::Contains("'runc-fast'"));

  // The class named, but the cluster's RuntimeClass gvisor runs another handler.
  pods = pods_fixture();
  auto view = view_of(pods);
  view.runtime_classes[0].handler = "runc";
  auto checks = verify::check_kubernetes_api({strict_values(), view, {{"gvisor", "runsc"}}});
  CHECK(checks[0].status == CheckStatus::fail);
  CHECK_THAT(checks[0].observed, Catch::Contains("should run handler 'runsc'; the API shows handler 'runc'"));
  view.runtime_classes.clear();
  checks = verify::check_kubernetes_api({strict_values(), view, {{"gvisor", "runsc"}}});
  CHECK_THAT(checks[0].observed, Catch::Contains("no RuntimeClass 'gvisor'"));
  // Without the RuntimeClass objects, the class name alone is compared.
  CHECK(judged(strict_values(), pods, false).at("api:runtime_class").status == CheckStatus::pass);

  // A GPU service the plan leaves on the node default: no class is as planned, a class is not.
  json gpu = strict_values();
  gpu["services"]["default"]["runtimeClassName"] = "CLUSTER_DEFAULT";
  pods["items"][0]["spec"].erase("runtimeClassName");
  CHECK(judged(gpu, pods).at("api:runtime_class").status == CheckStatus::pass);
  pods["items"][0]["spec"]["runtimeClassName"] = "gvisor";
  CHECK(judged(gpu, pods).at("api:runtime_class").status == CheckStatus::fail);
}

TEST_CASE("kubernetes api: each securityContext field the plan sets, disagreeing or missing, fails",
          "[kubernetes]") {
  json values = strict_values();
  auto& planned = values["services"]["default"]["securityContext"];
  planned["runAsNonRoot"] = true;
  planned["runAsUser"] = 1000;
  planned["readOnlyRootFilesystem"] = true;
  json pods = pods_fixture();
  auto& sc = agent_container(pods)["securityContext"];
  sc["runAsNonRoot"] = true;
  sc["readOnlyRootFilesystem"] = true;
  pods["items"][0]["spec"]["securityContext"]["runAsUser"] = 1000;  // pod level counts
  CHECK(judged(values, pods).at("api:security_context").status == CheckStatus::pass);

  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& s) { s["allowPrivilegeEscalation"] = true; },
       "allowPrivilegeEscalation false; the API shows true"},
      {[](json& s) { s.erase("allowPrivilegeEscalation"); },
       "allowPrivilegeEscalation false; the API shows absent"},
      {[](json& s) { s["privileged"] = true; }, "privileged true"},
      {[](json& s) { s["capabilities"]["drop"] = json::array(); }, "drops ALL capabilities"},
      {[](json& s) { s["capabilities"]["add"] = {"SYS_ADMIN"}; }, "capability SYS_ADMIN added"},
      {[](json& s) { s["runAsNonRoot"] = false; }, "runAsNonRoot true; the API shows false"},
      {[](json& s) { s["runAsUser"] = 0; }, "runAsUser 1000; the API shows 0"},
      {[](json& s) { s.erase("readOnlyRootFilesystem"); },
       "readOnlyRootFilesystem true; the API shows absent"},
      {[](json& s) { s["seccompProfile"]["type"] = "Unconfined"; },
       "seccompProfile RuntimeDefault; the API shows 'Unconfined'"},
      {[](json& s) { s.erase("seccompProfile"); }, "seccompProfile RuntimeDefault; the API shows absent"},
  };
  for (const auto& [edit, words] : cases) {
    json changed = pods;
    edit(agent_container(changed)["securityContext"]);
    const auto c = judged(values, changed).at("api:security_context");
    INFO(words << " / " << c.observed);
    CHECK(c.status == CheckStatus::fail);
    CHECK_THAT(c.observed, Catch::Contains(words));
  }
  // Localhost is at least as strict as RuntimeDefault.
  json localhost = pods;
  agent_container(localhost)["securityContext"]["seccompProfile"]["type"] = "Localhost";
  CHECK(judged(values, localhost).at("api:security_context").status == CheckStatus::pass);
}

TEST_CASE("kubernetes api: host namespaces, host paths, service-account tokens and devices", "[kubernetes]") {
  for (const char* key : {"hostPID", "hostNetwork", "hostIPC"}) {
    json pods = pods_fixture();
    pods["items"][0]["spec"][key] = true;
    const auto c = judged(strict_values(), pods).at("api:host_namespaces");
    CHECK(c.status == CheckStatus::fail);
    CHECK_THAT(c.observed, Catch::Contains(std::string(key) + " true"));
  }
  json pods = pods_fixture();
  pods["items"][0]["spec"]["volumes"].push_back({{"name", "host"}, {"hostPath", {{"path", "/var/run"}}}});
  agent_container(pods)["volumeMounts"].push_back({{"name", "host"}, {"mountPath", "/host"}});
  CHECK_THAT(judged(strict_values(), pods).at("api:host_paths").observed,
             Catch::Contains("host path /var/run"));

  pods = pods_fixture();
  pods["items"][0]["spec"].erase("automountServiceAccountToken");
  pods["items"][0]["spec"]["volumes"].push_back(json::parse(
      R"({"name":"kube-api-access-x7k2p","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":
          {"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt"}}]}})"));
  agent_container(pods)["volumeMounts"].push_back(
      {{"name", "kube-api-access-x7k2p"}, {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}});
  CHECK_THAT(judged(strict_values(), pods).at("api:service_account_token").observed,
             Catch::Contains("service-account token mounted (projected volume kube-api-access-x7k2p)"));
  pods = pods_fixture();
  pods["items"][0]["spec"]["automountServiceAccountToken"] = true;
  CHECK(judged(strict_values(), pods).at("api:service_account_token").status == CheckStatus::fail);

  pods = pods_fixture();
  agent_container(pods)["resources"]["limits"]["nvidia.com/gpu"] = 1;
  CHECK_THAT(judged(strict_values(), pods).at("api:devices").observed,
             Catch::Contains("asks for 0 nvidia.com/gpu; the API shows 1"));
  json gpu_values = strict_values();
  gpu_values["services"]["default"]["resources"]["limits"]["nvidia.com/gpu"] = 1;
  CHECK(judged(gpu_values, pods).at("api:devices").status == CheckStatus::pass);
  agent_container(pods)["volumeDevices"] = {{{"name", "disk"}, {"devicePath", "/dev/xvda"}}};
  CHECK_THAT(judged(gpu_values, pods).at("api:devices").observed, Catch::Contains("device /dev/xvda"));
}

TEST_CASE("kubernetes api: missing pods and views are unwitnessed, absent and none are named",
          "[kubernetes]") {
  // A planned service without a pod in the list: nothing to compare, unwitnessed.
  json values = strict_values();
  values["services"]["web"] = {{"image", "x"}, {"runtimeClassName", "gvisor"}};
  for (const auto& [control, c] : judged(values, pods_fixture())) {
    INFO(control);
    CHECK(c.status == CheckStatus::unwitnessed);
    CHECK_THAT(c.observed, Catch::Contains("no pod in the API's list for service web"));
  }
  deploy::KubernetesApiView view;
  view.state = deploy::KubernetesApiView::State::unreadable;
  view.note = "kubectl failed: exit 1";
  auto checks = verify::check_kubernetes_api({strict_values(), view, {}});
  REQUIRE(checks.size() == 6);
  for (const auto& c : checks) CHECK(c.status == CheckStatus::unwitnessed);
  CHECK_THAT(checks[0].reason, Catch::Contains("kubectl failed: exit 1"));

  view.state = deploy::KubernetesApiView::State::absent;
  checks = verify::check_kubernetes_api({strict_values(), view, {}});
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].control == "kubernetes_api");
  CHECK(checks[0].status == CheckStatus::na);
  CHECK_THAT(checks[0].reason, Catch::Contains("absent"));
  view.state = deploy::KubernetesApiView::State::waived;
  checks = verify::check_kubernetes_api({strict_values(), view, {}});
  CHECK_THAT(checks.at(0).reason, Catch::Contains("kubernetes_api: none"));
}

TEST_CASE("kubernetes api decides kernel with the sandbox: a gVisor report fails on a pod with no class",
          "[kubernetes]") {
  const verify::CheckResult kernel{
      "kernel", CheckStatus::pass, "gVisor", "gVisor (3 signals)", "kernel: as planned", ""};
  json pods = pods_fixture();
  std::vector<verify::CheckResult> claims{kernel};
  verify::apply_kubernetes_api(claims, verify::check_kubernetes_api({strict_values(), view_of(pods), {}}));
  CHECK(claims[0].status == CheckStatus::pass);

  pods["items"][0]["spec"].erase("runtimeClassName");
  claims = {kernel};
  verify::apply_kubernetes_api(claims, verify::check_kubernetes_api({strict_values(), view_of(pods), {}}));
  CHECK(claims[0].status == CheckStatus::fail);
  CHECK_THAT(claims[0].reason,
             Catch::Contains("the sandbox reports gVisor (3 signals); the Kubernetes API shows "
                             "service default: the plan sets runtimeClassName 'gvisor'"));

  deploy::KubernetesApiView unreadable;
  unreadable.state = deploy::KubernetesApiView::State::unreadable;
  claims = {kernel};
  verify::apply_kubernetes_api(claims, verify::check_kubernetes_api({strict_values(), unreadable, {}}));
  CHECK(claims[0].status == CheckStatus::unwitnessed);
  deploy::KubernetesApiView absent;
  claims = {kernel};
  verify::apply_kubernetes_api(claims, verify::check_kubernetes_api({strict_values(), absent, {}}));
  CHECK(claims[0].status == CheckStatus::pass);  // the absent view is named in its own check
}

namespace {

const std::string kApiBase = R"(backend: hawk
runtime_classes: [gvisor]
hawk:
  cli: /opt/hawk
  human: alice
  jumphost_host_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIATa7TySBAxRWg7jZr8RowgcPkvoBS1hRj1AjCT4GERa"
)";

std::string api_profile_error(const std::string& section) {
  try {
    scenario::parse_deployment(kApiBase + section, "k.yaml");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("kubernetes_api: profile section, every problem at its line", "[kubernetes]") {
  auto p = scenario::parse_deployment(
      kApiBase +
          "kubernetes_api:\n  pods: { command: [kubectl, get, pods, -n, \"{namespace}\", -l, "
          "\"app.kubernetes.io/instance={eval_set_id}\", -o, json] }\n"
          "  runtime_classes: { file: /var/lib/rc.json }\n  timeout_s: 20\n",
      "k.yaml");
  REQUIRE(p.kubernetes_api);
  CHECK(p.kubernetes_api->pods.command.at(4) == "{namespace}");
  CHECK(p.kubernetes_api->runtime_classes->file == "/var/lib/rc.json");
  CHECK_FALSE(p.kubernetes_api->network_policies);
  CHECK(p.kubernetes_api->timeout_s == 20);
  CHECK(scenario::parse_deployment(kApiBase + "kubernetes_api: none\n", "k.yaml").kubernetes_api_none);
  CHECK_FALSE(scenario::parse_deployment(kApiBase, "k.yaml").kubernetes_api);

  CHECK_THAT(api_profile_error("kubernetes_api:\n  pods: { command: [kubectl, \"{nodename}\"] }\n"),
             Catch::Contains("k.yaml:8") && Catch::Contains("kubernetes_api.pods.command must be a list"));
  CHECK_THAT(
      api_profile_error("kubernetes_api:\n  pods: { file: relative.json }\n"),
      Catch::Contains("k.yaml:8") && Catch::Contains("kubernetes_api.pods.file must be an absolute path"));
  CHECK_THAT(api_profile_error("kubernetes_api:\n  pods: { file: /a, command: [b] }\n"),
             Catch::Contains("exactly one of command"));
  CHECK_THAT(api_profile_error("kubernetes_api:\n  timeout_s: 5\n"), Catch::Contains("needs pods"));
  CHECK_THAT(api_profile_error("kubernetes_api:\n  pods: { file: /a }\n  timeout_s: 0\n"),
             Catch::Contains("k.yaml:9") && Catch::Contains("timeout_s must be a whole number"));
  CHECK_THAT(api_profile_error("kubernetes_api:\n  pods: { file: /a }\n  podz: 1\n"),
             Catch::Contains("unknown key 'podz'"));
  CHECK_THAT(api_profile_error("kubernetes_api: all\n"), Catch::Contains("or the word none"));
}

TEST_CASE("hawk backend kubernetes_api: read by command with the namespace and id put in, and by file",
          "[kubernetes][hawk]") {
  using namespace isoharness::deploy::hawk;
  HawkOptions o;
  o.work_dir = std::filesystem::temp_directory_path() / "isoharness-kube-api-unit";
  std::vector<std::vector<std::string>> asked;
  o.runner = [&](const std::vector<std::string>& argv, const RunOptions& run) -> Expected<RunResult> {
    asked.push_back(argv);
    CHECK(run.deadline == std::chrono::seconds(30));
    RunResult r;
    r.exited = true;
    r.exit_code = 0;
    r.out = kube_fixture(argv.at(2) == "pods" ? "pods-strict.json" : "runtimeclasses.json");
    return r;
  };
  deploy::SandboxHandle h;
  h.name = "3f9c2a1b";
  h.facts.sandbox_pod = deploy::PodRef{"agent-env-3f9c2a1b-default-0", "inspect-3f9c2a1b"};
  HawkBackend by_command(
      scenario::parse_deployment(
          kApiBase + "kubernetes_api:\n  pods: { command: [kubectl, get, pods, -n, \"{namespace}\", "
                     "-l, \"inspect-ai.metr.org/eval-set-id={eval_set_id}\", -o, json] }\n"
                     "  runtime_classes: { command: [kubectl, get, runtimeclasses, -o, json] }\n",
          "k.yaml"),
      o);
  auto view = by_command.kubernetes_api(h);
  REQUIRE(view);
  CHECK(view->state == deploy::KubernetesApiView::State::read);
  REQUIRE(asked.size() == 2);
  CHECK(asked[0] == std::vector<std::string>{"kubectl", "get", "pods", "-n", "inspect-3f9c2a1b", "-l",
                                             "inspect-ai.metr.org/eval-set-id=3f9c2a1b", "-o", "json"});
  CHECK(view->pods.size() == 1);
  CHECK(view->runtime_classes_read);
  CHECK_FALSE(view->policies_read);

  // A command that fails, or prints no List: unreadable, never judged on.
  o.runner = [](const auto&, const auto&) -> Expected<RunResult> {
    RunResult r;
    r.exited = true;
    r.exit_code = 1;
    r.err = "error: You must be logged in to the server (Unauthorized)";
    return r;
  };
  view = HawkBackend(scenario::parse_deployment(
                         kApiBase + "kubernetes_api:\n  pods: { command: [kubectl] }\n", "k.yaml"),
                     o)
             .kubernetes_api(h);
  CHECK(view->state == deploy::KubernetesApiView::State::unreadable);
  CHECK_THAT(view->note, Catch::Contains("Unauthorized"));

  view =
      HawkBackend(scenario::parse_deployment(kApiBase + "kubernetes_api:\n  pods: { file: " + kKubeFixtures +
                                                 "pods-strict.json }\n"
                                                 "  network_policies: { file: " +
                                                 kKubeFixtures + "ciliumnetworkpolicies.json }\n",
                                             "k.yaml"),
                  o)
          .kubernetes_api(h);
  CHECK(view->state == deploy::KubernetesApiView::State::read);
  CHECK(view->policies_read);
  CHECK(view->policies.size() == 1);
  view = HawkBackend(scenario::parse_deployment(
                         kApiBase + "kubernetes_api:\n  pods: { file: \"/nonexistent/{namespace}.json\" }\n",
                         "k.yaml"),
                     o)
             .kubernetes_api(h);
  CHECK(view->state == deploy::KubernetesApiView::State::unreadable);
  CHECK_THAT(view->note, Catch::Contains("/nonexistent/inspect-3f9c2a1b.json"));

  // Without the section the view is absent; with `none`, waived.
  CHECK(HawkBackend(scenario::parse_deployment(kApiBase, "k.yaml"), o).kubernetes_api(h)->state ==
        deploy::KubernetesApiView::State::absent);
  CHECK(HawkBackend(scenario::parse_deployment(kApiBase + "kubernetes_api: none\n", "k.yaml"), o)
            .kubernetes_api(h)
            ->state == deploy::KubernetesApiView::State::waived);
}

TEST_CASE("crictl inspect: the container's pid, runtime spec and pod in the CRI's own JSON shape",
          "[kubernetes]") {
  const std::string text = [] {
    std::ifstream in(std::string(ISOHARNESS_SOURCE_DIR) + "/tests/fixtures/cri/inspect-runsc.json");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  auto c = deploy::read_crictl_inspect(text);
  REQUIRE(c);
  CHECK(c->id == "4f1c0de2b7a94c3e9d5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d");
  CHECK(c->name == "default");
  CHECK(c->state == "CONTAINER_RUNNING");
  CHECK(c->pod_uid == "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f");
  CHECK(c->pod_namespace == "inspect-3f9c2a1b");
  CHECK(c->pid == 48213);
  CHECK(c->runtime_type == "io.containerd.runsc.v1");
  REQUIRE(c->runtime_spec);
  CHECK((*c->runtime_spec)["process"]["noNewPrivileges"] == true);

  json doc = json::parse(text);
  doc["info"]["pid"] = "48213";  // a string: absent
  doc["info"]["runtimeSpec"] = json::array();
  c = deploy::read_crictl_inspect(doc.dump());
  REQUIRE(c);
  CHECK_FALSE(c->pid);
  CHECK_FALSE(c->runtime_spec);
  doc["info"]["pid"] = -4;
  CHECK_FALSE(deploy::read_crictl_inspect(doc.dump())->pid);
  CHECK_FALSE(deploy::read_crictl_inspect(R"({"info": {"pid": 1}})"));  // no status: not crictl's
  CHECK_FALSE(deploy::read_crictl_inspect(R"({"status": {"id": 5}})"));
  CHECK_FALSE(deploy::read_crictl_inspect("nope"));
  CHECK_FALSE(deploy::read_crictl_inspect(std::string(deploy::kMaxCriInspectBytes + 1, ' ')));
}

TEST_CASE("node agent answer: MACed as the witness log is, bound to the request's nonce", "[kubernetes]") {
  deploy::NodeView view;
  view.witness = "node agent on ip-10-0-12-34";
  view.unix_ms = 1796306400000;
  deploy::NodeContainer c;
  c.id = "4f1c0de2";
  c.service = "default";
  c.runtime = deploy::NodeRuntime::runsc;
  view.containers.push_back(c);
  const std::string doc = deploy::write_node_view(view);
  const std::string key = "operator-token-0123456789";
  const std::string nonce = "0123456789abcdef0123456789abcdef";
  const std::string answer = deploy::frame_node_view_answer(key, nonce, doc);

  auto read = deploy::read_node_view_answer(answer, key, nonce);
  INFO(read.error);
  REQUIRE(read.view);
  CHECK(read.view->witness == "node agent on ip-10-0-12-34");
  REQUIRE(read.view->containers.size() == 1);
  CHECK(read.view->containers[0].runtime == deploy::NodeRuntime::runsc);

  // Another token, another request's nonce, a changed byte, or no nonce: refused whole.
  CHECK_FALSE(deploy::read_node_view_answer(answer, "another-token", nonce).view);
  const auto replayed = deploy::read_node_view_answer(answer, key, "ffffffffffffffffffffffffffffffff");
  CHECK_FALSE(replayed.view);
  CHECK_THAT(replayed.error, Catch::Contains("another request"));
  std::string forged = answer;
  forged.replace(forged.find("runsc"), 5, "runc ");
  CHECK_FALSE(deploy::read_node_view_answer(forged, key, nonce).view);
  CHECK_FALSE(deploy::read_node_view_answer(answer, key, "short").view);
  CHECK_FALSE(deploy::read_node_view_answer(answer.substr(0, answer.size() / 2), key, nonce).view);
  CHECK_FALSE(deploy::read_node_view_answer(doc, key, nonce).view);  // the bare document, unframed
}
