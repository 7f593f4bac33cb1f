#include "harness/deploy/sandbox_facts.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

#include "harness/common/json_read.h"

namespace isoharness::deploy {
namespace {

using common::json_bool;
using common::json_int;
using common::json_member;
using common::json_object;
using common::json_string;
using nlohmann::json;

// The string members every sandbox record may carry, typed.
struct StringField {
  std::string_view key;
  std::string SandboxFacts::*field;
};
constexpr std::array<StringField, 11> kStrings{{
    {"runtime", &SandboxFacts::runtime},
    {"runtime_binary", &SandboxFacts::runtime_binary},
    {"runtime_version", &SandboxFacts::runtime_version},
    {"item_id", &SandboxFacts::item_id},
    {"service", &SandboxFacts::service},
    {"address", &SandboxFacts::address},
    {"address6", &SandboxFacts::address6},
    {"probe", &SandboxFacts::probe},
    {"seen_in", &SandboxFacts::seen_in},
    {"node_class", &SandboxFacts::node_class},
    {"node_name", &SandboxFacts::node_name},
}};

// A list of strings, or nullopt when the member is not an array of strings only.
std::optional<std::vector<std::string>> strings_of(const json& j, std::string_view key) {
  const json* m = json_member(j, key);
  if (!m || !m->is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& v : *m) {
    if (!v.is_string()) return std::nullopt;
    out.push_back(v.get<std::string>());
  }
  return out;
}

// Reads `key` with `read`; a member it took leaves `extra`.
template <typename Read>
void lift(json& extra, std::string_view key, Read read) {
  if (read()) extra.erase(std::string(key));
}

std::optional<PodRef> pod_of(const json& j) {
  const json* pod = json_object(j, "sandbox_pod");
  if (!pod) return std::nullopt;
  return PodRef{json_string(*pod, "name").value_or(""), json_string(*pod, "namespace").value_or("")};
}

// node_image's members, each a string under its own name.
constexpr std::pair<const char*, std::string NodeImageFacts::*> kNodeImageFields[] = {
    {"name", &NodeImageFacts::name},
    {"runc_version", &NodeImageFacts::runc_version},
    {"runc_package", &NodeImageFacts::runc_package},
    {"containerd_version", &NodeImageFacts::containerd_version},
    {"containerd_package", &NodeImageFacts::containerd_package},
    {"crun_version", &NodeImageFacts::crun_version},
    {"crun_package", &NodeImageFacts::crun_package},
    {"runsc_version", &NodeImageFacts::runsc_version},
    {"runsc_package", &NodeImageFacts::runsc_package},
    {"nvidia_container_toolkit_version", &NodeImageFacts::nvidia_container_toolkit_version},
    {"nvidia_container_toolkit_package", &NodeImageFacts::nvidia_container_toolkit_package},
};

std::optional<NodeImageFacts> node_image_of(const json& j) {
  const json* image = json_object(j, "node_image");
  if (!image) return std::nullopt;
  NodeImageFacts out;
  for (const auto& [key, field] : kNodeImageFields) out.*field = json_string(*image, key).value_or("");
  return out;
}

std::optional<ItemResolverFacts> resolver_of(const json& j) {
  const json* r = json_object(j, "item_resolver");
  if (!r) return std::nullopt;
  ItemResolverFacts out;
  out.address = json_string(*r, "address").value_or("");
  out.instance_name = json_string(*r, "instance_name").value_or("");
  out.instance = json_string(*r, "instance").value_or("");
  out.answers = json_int(*r, "answers").value_or(0);
  out.agent_may_ask = json_bool(*r, "agent_may_ask").value_or(true);
  return out;
}

void lift_records(const json& j, SandboxFacts& f) {
  json& extra = f.extra;
  lift(extra, "sandbox_pod", [&] { return (f.sandbox_pod = pod_of(j)).has_value(); });
  lift(extra, "node_image", [&] { return (f.node_image = node_image_of(j)).has_value(); });
  lift(extra, "item_resolver", [&] { return (f.item_resolver = resolver_of(j)).has_value(); });
  lift(extra, "siblings", [&] {
    const json* list = json_member(j, "siblings");
    if (!list || !list->is_array()) return false;
    f.siblings.emplace();
    for (const auto& s : *list)
      if (s.is_object()) f.siblings->push_back(SandboxFacts::from_json(s));
    return true;
  });
}

}  // namespace

const std::vector<SandboxFacts>& SandboxFacts::sibling_list() const {
  static const std::vector<SandboxFacts> kNone;
  return siblings ? *siblings : kNone;
}

SandboxFacts SandboxFacts::from_json(const json& j) {
  SandboxFacts f;
  if (!j.is_object()) return f;
  f.extra = j;
  lift(f.extra, "backend", [&] {
    f.backend = scenario::backend_from_name(json_string(j, "backend").value_or(""));
    return f.backend.has_value();
  });
  for (const auto& s : kStrings) {
    lift(f.extra, s.key, [&] {
      auto v = json_string(j, s.key);
      if (v) f.*s.field = std::move(*v);
      return v.has_value();
    });
  }
  lift(f.extra, "port", [&] {
    auto v = json_int(j, "port");
    if (v && *v > 0 && *v < 65536) f.port = static_cast<int>(*v);
    return f.port > 0;
  });
  lift(f.extra, "egress_index", [&] {
    auto v = json_int(j, "egress_index");
    if (v && *v >= 0 && *v <= INT32_MAX) f.egress_index = static_cast<int>(*v);
    return f.egress_index.has_value();
  });
  for (const auto& list :
       {std::pair{"exec", &SandboxFacts::exec}, {"test_weakenings", &SandboxFacts::test_weakenings}})
    lift(f.extra, list.first, [&] {
      auto v = strings_of(j, list.first);
      if (v) f.*list.second = std::move(*v);
      return v.has_value();
    });
  lift_records(j, f);
  return f;
}

json SandboxFacts::to_json() const {
  json j = extra.is_object() ? extra : json::object();
  if (backend) j["backend"] = scenario::backend_name(*backend);
  for (const auto& s : kStrings)
    if (!(this->*s.field).empty()) j[std::string(s.key)] = this->*s.field;
  if (port > 0) j["port"] = port;
  if (egress_index) j["egress_index"] = *egress_index;
  if (!exec.empty()) j["exec"] = exec;
  if (!test_weakenings.empty()) j["test_weakenings"] = test_weakenings;
  if (sandbox_pod) j["sandbox_pod"] = {{"name", sandbox_pod->name}, {"namespace", sandbox_pod->namespace_}};
  if (node_image) {
    // name and runc's two are always written (readers before the rest of the stack expect them).
    json image = {{"name", node_image->name},
                  {"runc_version", node_image->runc_version},
                  {"runc_package", node_image->runc_package}};
    for (const auto& [key, field] : kNodeImageFields)
      if (!((*node_image).*field).empty()) image[key] = (*node_image).*field;
    j["node_image"] = std::move(image);
  }
  if (item_resolver)
    j["item_resolver"] = {{"address", item_resolver->address},
                          {"instance_name", item_resolver->instance_name},
                          {"instance", item_resolver->instance},
                          {"answers", item_resolver->answers},
                          {"agent_may_ask", item_resolver->agent_may_ask}};
  if (siblings) {
    j["siblings"] = json::array();
    for (const auto& s : *siblings) j["siblings"].push_back(s.to_json());
  }
  return j;
}

}  // namespace isoharness::deploy
