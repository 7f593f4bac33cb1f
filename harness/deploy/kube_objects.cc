// Typed readers of the Kubernetes API's JSON (kube_objects.h): every member read with the
// never-throwing readers of common/json_read.h, every list and string bounded.
#include "harness/deploy/kube_objects.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "harness/common/json_read.h"

namespace isoharness::deploy {
namespace {

using common::json_array;
using common::json_bool;
using common::json_int;
using common::json_member;
using common::json_object;
using common::json_string;
using nlohmann::json;

constexpr int kMaxDepth = 64;

Expected<json> parse_bounded(std::string_view text, const KubeReadLimits& limits) {
  if (text.size() > limits.max_bytes)
    return make_error("larger than " + std::to_string(limits.max_bytes) + " bytes");
  bool too_deep = false;
  json doc = json::parse(
      text,
      [&](int depth, json::parse_event_t, json&) {
        if (depth > kMaxDepth) too_deep = true;
        return !too_deep;
      },
      false);
  if (too_deep) return make_error("JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
  if (doc.is_discarded()) return make_error("not a JSON document");
  if (!doc.is_object()) return make_error("JSON, but not an object");
  return doc;
}

std::string cut(std::string s, const KubeReadLimits& limits) {
  if (s.size() > limits.max_string) s.resize(limits.max_string);
  return s;
}

std::string text_at(const json& obj, std::string_view key, const KubeReadLimits& limits) {
  return cut(json_string(obj, key).value_or(""), limits);
}

// The elements of obj[key] when it is an array, at most max_items of them.
std::vector<const json*> items_at(const json& obj, std::string_view key, const KubeReadLimits& limits) {
  std::vector<const json*> out;
  const json* a = json_array(obj, key);
  if (!a) return out;
  for (const auto& e : *a) {
    if (out.size() >= limits.max_items) break;
    out.push_back(&e);
  }
  return out;
}

std::vector<std::string> strings_at(const json& obj, std::string_view key, const KubeReadLimits& limits) {
  std::vector<std::string> out;
  for (const json* e : items_at(obj, key, limits))
    if (e->is_string()) out.push_back(cut(e->get<std::string>(), limits));
  return out;
}

std::map<std::string, std::string> string_map(const json* obj, const KubeReadLimits& limits) {
  std::map<std::string, std::string> out;
  if (!obj || !obj->is_object()) return out;
  for (const auto& [k, v] : obj->items()) {
    if (out.size() >= limits.max_items) break;
    if (v.is_string()) out[cut(k, limits)] = cut(v.get<std::string>(), limits);
  }
  return out;
}

KubeSecurityContext read_security(const json* sc, const KubeReadLimits& limits) {
  KubeSecurityContext out;
  if (!sc || !sc->is_object()) return out;
  out.privileged = json_bool(*sc, "privileged");
  out.allow_privilege_escalation = json_bool(*sc, "allowPrivilegeEscalation");
  out.run_as_non_root = json_bool(*sc, "runAsNonRoot");
  out.run_as_user = json_int(*sc, "runAsUser");
  out.read_only_root_filesystem = json_bool(*sc, "readOnlyRootFilesystem");
  if (const json* sp = json_object(*sc, "seccompProfile")) {
    if (auto t = json_string(*sp, "type")) out.seccomp_type = cut(*t, limits);
  }
  if (const json* caps = json_object(*sc, "capabilities")) {
    if (json_array(*caps, "add")) out.capabilities_add = strings_at(*caps, "add", limits);
    if (json_array(*caps, "drop")) out.capabilities_drop = strings_at(*caps, "drop", limits);
  }
  return out;
}

// A resource quantity of whole units: an integer, or a string of digits.
std::optional<long long> whole_quantity(const json* q) {
  if (!q) return std::nullopt;
  if (q->is_number_integer() && !q->is_number_unsigned()) return q->get<long long>();
  if (q->is_number_unsigned() && q->get<std::uint64_t>() <= 1000000) return q->get<long long>();
  if (!q->is_string()) return std::nullopt;
  const auto& s = q->get_ref<const std::string&>();
  if (s.empty() || s.size() > 9 ||
      !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoll(s);
}

std::optional<long long> container_gpus(const json& c) {
  const json* res = json_object(c, "resources");
  if (!res) return std::nullopt;
  std::optional<long long> most;
  for (const char* which : {"limits", "requests"}) {
    const json* m = json_object(*res, which);
    const auto n = m ? whole_quantity(json_member(*m, "nvidia.com/gpu")) : std::nullopt;
    if (n && (!most || *n > *most)) most = n;
  }
  return most;
}

KubeContainer read_container(const json& c, bool init, const KubeReadLimits& limits) {
  KubeContainer out;
  out.name = text_at(c, "name", limits);
  out.init = init;
  out.security = read_security(json_object(c, "securityContext"), limits);
  out.gpus = container_gpus(c);
  for (const json* m : items_at(c, "volumeMounts", limits))
    if (auto n = json_string(*m, "name")) out.volume_mounts.push_back(cut(*n, limits));
  for (const json* d : items_at(c, "volumeDevices", limits))
    out.volume_devices.push_back(text_at(*d, "devicePath", limits));
  return out;
}

KubeVolume read_volume(const json& v, const KubeReadLimits& limits) {
  KubeVolume out;
  out.name = text_at(v, "name", limits);
  if (const json* hp = json_object(v, "hostPath")) out.host_path = text_at(*hp, "path", limits);
  out.secret = json_object(v, "secret") != nullptr;
  out.empty_dir = json_object(v, "emptyDir") != nullptr;
  if (const json* p = json_object(v, "projected"))
    for (const json* s : items_at(*p, "sources", limits))
      if (json_object(*s, "serviceAccountToken")) out.service_account_token = true;
  return out;
}

std::optional<KubePod> read_pod(const json& item, const KubeReadLimits& limits) {
  if (json_string(item, "kind").value_or("Pod") != "Pod") return std::nullopt;
  const json* meta = json_object(item, "metadata");
  const json* spec = json_object(item, "spec");
  if (!meta || !spec) return std::nullopt;
  KubePod pod;
  pod.name = text_at(*meta, "name", limits);
  pod.namespace_ = text_at(*meta, "namespace", limits);
  pod.uid = text_at(*meta, "uid", limits);
  pod.labels = string_map(json_object(*meta, "labels"), limits);
  pod.node_name = text_at(*spec, "nodeName", limits);
  if (const json* st = json_object(item, "status")) pod.phase = text_at(*st, "phase", limits);
  if (auto rc = json_string(*spec, "runtimeClassName")) pod.runtime_class_name = cut(*rc, limits);
  pod.host_pid = json_bool(*spec, "hostPID");
  pod.host_network = json_bool(*spec, "hostNetwork");
  pod.host_ipc = json_bool(*spec, "hostIPC");
  pod.automount_service_account_token = json_bool(*spec, "automountServiceAccountToken");
  pod.pod_security = read_security(json_object(*spec, "securityContext"), limits);
  for (const json* c : items_at(*spec, "initContainers", limits))
    if (c->is_object()) pod.containers.push_back(read_container(*c, true, limits));
  for (const json* c : items_at(*spec, "containers", limits))
    if (c->is_object()) pod.containers.push_back(read_container(*c, false, limits));
  for (const json* v : items_at(*spec, "volumes", limits))
    if (v->is_object()) pod.volumes.push_back(read_volume(*v, limits));
  if (pod.name.empty()) return std::nullopt;
  return pod;
}

bool is_list(const json& doc) {
  const std::string kind = json_string(doc, "kind").value_or("");
  return json_array(doc, "items") && (kind == "List" || kind.ends_with("List"));
}

CiliumSelector read_selector(const json* s, const KubeReadLimits& limits) {
  CiliumSelector out;
  if (!s || !s->is_object()) return out;
  out.match_labels = string_map(json_object(*s, "matchLabels"), limits);
  for (const json* e : items_at(*s, "matchExpressions", limits))
    out.expression_keys.push_back(text_at(*e, "key", limits));
  return out;
}

void read_peers(const json& r, const char* endpoints, const char* entities, const char* cidr,
                const char* cidr_set, const KubeReadLimits& limits, CiliumRule& out) {
  for (const json* e : items_at(r, endpoints, limits)) out.endpoints.push_back(read_selector(e, limits));
  out.entities = strings_at(r, entities, limits);
  out.cidrs = strings_at(r, cidr, limits);
  for (const json* s : items_at(r, cidr_set, limits))
    if (auto c = json_string(*s, "cidr")) out.cidrs.push_back(cut(*c, limits));
}

CiliumRule read_rule(const json& r, bool ingress, const KubeReadLimits& limits) {
  CiliumRule out;
  if (!r.is_object()) return out;
  if (ingress)
    read_peers(r, "fromEndpoints", "fromEntities", "fromCIDR", "fromCIDRSet", limits, out);
  else
    read_peers(r, "toEndpoints", "toEntities", "toCIDR", "toCIDRSet", limits, out);
  for (const json* f : items_at(r, "toFQDNs", limits)) {
    if (auto n = json_string(*f, "matchName")) out.fqdns.push_back(cut(*n, limits));
    if (auto p = json_string(*f, "matchPattern")) out.fqdns.push_back(cut(*p, limits));
  }
  for (const json* tp : items_at(r, "toPorts", limits))
    for (const json* p : items_at(*tp, "ports", limits)) {
      CiliumPort port;
      if (auto s = json_string(*p, "port")) port.port = cut(*s, limits);
      port.protocol = text_at(*p, "protocol", limits);
      out.ports.push_back(std::move(port));
    }
  return out;
}

CiliumPolicy read_policy_spec(const json& spec, const std::string& name, const std::string& ns,
                              const KubeReadLimits& limits) {
  CiliumPolicy p;
  p.name = name;
  p.namespace_ = ns;
  p.endpoint_selector = read_selector(json_object(spec, "endpointSelector"), limits);
  for (const json* r : items_at(spec, "ingress", limits)) p.ingress.push_back(read_rule(*r, true, limits));
  for (const json* r : items_at(spec, "egress", limits)) p.egress.push_back(read_rule(*r, false, limits));
  for (const json* r : items_at(spec, "ingressDeny", limits))
    p.ingress_deny.push_back(read_rule(*r, true, limits));
  for (const json* r : items_at(spec, "egressDeny", limits))
    p.egress_deny.push_back(read_rule(*r, false, limits));
  return p;
}

void read_policy(const json& item, const KubeReadLimits& limits, std::vector<CiliumPolicy>& out) {
  if (json_string(item, "kind").value_or("CiliumNetworkPolicy") != "CiliumNetworkPolicy") return;
  const json* meta = json_object(item, "metadata");
  const std::string name = meta ? text_at(*meta, "name", limits) : "";
  const std::string ns = meta ? text_at(*meta, "namespace", limits) : "";
  if (const json* spec = json_object(item, "spec"))
    if (out.size() < limits.max_items) out.push_back(read_policy_spec(*spec, name, ns, limits));
  for (const json* spec : items_at(item, "specs", limits))
    if (spec->is_object() && out.size() < limits.max_items)
      out.push_back(read_policy_spec(*spec, name, ns, limits));
}

}  // namespace

const KubeContainer* KubePod::container(std::string_view wanted) const {
  for (const auto& c : containers)
    if (!c.init && c.name == wanted) return &c;
  return nullptr;
}

const KubeVolume* KubePod::volume(std::string_view wanted) const {
  for (const auto& v : volumes)
    if (v.name == wanted) return &v;
  return nullptr;
}

Expected<KubePodList> read_pod_list(std::string_view text, const KubeReadLimits& limits) {
  auto doc = parse_bounded(text, limits);
  if (!doc) return doc.error();
  if (!is_list(*doc)) return make_error("not a v1 List of Pods (kind List with items)");
  KubePodList out;
  const json& items = (*doc)["items"];
  if (items.size() > limits.max_items)
    out.problems.push_back("more than " + std::to_string(limits.max_items) + " items; the rest not read");
  for (const json* item : items_at(*doc, "items", limits)) {
    auto pod = read_pod(*item, limits);
    if (pod)
      out.pods.push_back(std::move(*pod));
    else
      out.problems.emplace_back("an item that is not a Pod with metadata.name and spec was skipped");
  }
  return out;
}

Expected<std::vector<KubeRuntimeClass>> read_runtime_classes(std::string_view text,
                                                             const KubeReadLimits& limits) {
  auto doc = parse_bounded(text, limits);
  if (!doc) return doc.error();
  std::vector<const json*> objects;
  if (is_list(*doc))
    objects = items_at(*doc, "items", limits);
  else
    objects.push_back(&*doc);
  std::vector<KubeRuntimeClass> out;
  for (const json* o : objects) {
    if (json_string(*o, "kind").value_or("") != "RuntimeClass") continue;
    const json* meta = json_object(*o, "metadata");
    KubeRuntimeClass rc{meta ? text_at(*meta, "name", limits) : "", text_at(*o, "handler", limits)};
    if (!rc.name.empty()) out.push_back(std::move(rc));
  }
  if (out.empty() && !is_list(*doc)) return make_error("not a RuntimeClass nor a List of them");
  return out;
}

Expected<std::vector<CiliumPolicy>> read_cilium_policies(std::string_view text,
                                                         const KubeReadLimits& limits) {
  auto doc = parse_bounded(text, limits);
  if (!doc) return doc.error();
  std::vector<CiliumPolicy> out;
  if (is_list(*doc)) {
    for (const json* item : items_at(*doc, "items", limits))
      if (item->is_object()) read_policy(*item, limits, out);
    return out;
  }
  if (json_string(*doc, "kind").value_or("") != "CiliumNetworkPolicy")
    return make_error("not a CiliumNetworkPolicy nor a List of them");
  read_policy(*doc, limits, out);
  return out;
}

}  // namespace isoharness::deploy
