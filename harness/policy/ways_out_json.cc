// The plan JSON's item "egress" read back (docs/CONTRACTS.md §2 "Ways out"). The document
// may come from a file a person or another program wrote: every field is checked for its
// type before it is read, and nothing here throws.
#include <algorithm>

#include "harness/policy/plan.h"

namespace isoharness::policy {

namespace {

template <typename Enum>
std::optional<Enum> enum_named(const nlohmann::json& v, std::initializer_list<Enum> all,
                               std::string_view (*name)(Enum)) {
  if (!v.is_string()) return std::nullopt;
  for (Enum e : all)
    if (v.get_ref<const std::string&>() == name(e)) return e;
  return std::nullopt;
}

std::optional<OpenPort> open_port_from(const nlohmann::json& o) {
  if (!o.is_object() || !o.contains("port") || !o.contains("protocol")) return std::nullopt;
  const auto& port = o["port"];
  if (!port.is_number_integer() || port.get<std::int64_t>() < 0 || port.get<std::int64_t>() > 65535)
    return std::nullopt;
  auto proto = enum_named(o["protocol"], {Protocol::tcp, Protocol::udp, Protocol::any}, protocol_name);
  if (!proto) return std::nullopt;
  return OpenPort{*proto, static_cast<int>(port.get<std::int64_t>())};
}

std::optional<WayOut> way_from(const nlohmann::json& w, std::string* problem) {
  auto fail = [&](const std::string& what) -> std::optional<WayOut> {
    if (problem) *problem = what;
    return std::nullopt;
  };
  if (!w.is_object()) return fail("a way out is not an object");
  WayOut out;
  auto kind = enum_named(w.value("kind", nlohmann::json()),
                         {WayKind::domain, WayKind::cidr, WayKind::entity, WayKind::metadata}, way_kind_name);
  auto blocker =
      enum_named(w.value("blocked_by", nlohmann::json()), {Blocker::chart, Blocker::node}, blocker_name);
  const auto target = w.value("target", nlohmann::json());
  const auto open = w.value("open", nlohmann::json());
  const auto checked = w.value("name_checked", nlohmann::json());
  if (!kind || !blocker || !target.is_string() || !open.is_array() || !checked.is_boolean())
    return fail("a way out needs kind, target, open, name_checked and blocked_by of their types");
  out.kind = *kind;
  out.blocked_by = *blocker;
  out.target = target.get<std::string>();
  out.name_checked = checked.get<bool>();
  for (const auto& o : open) {
    auto port = open_port_from(o);
    if (!port)
      return fail("way '" + out.target + "': an open port needs protocol tcp/udp/any and port 0..65535");
    out.open.push_back(*port);
  }
  const auto why = w.value("why", nlohmann::json());
  if (why.is_string()) out.why = why.get<std::string>();
  return out;
}

}  // namespace

std::optional<EgressExpectations> egress_from_json(const nlohmann::json& j, std::string* problem) {
  if (!j.is_object() || !j.contains("ways") || !j["ways"].is_array()) {
    if (problem) *problem = "egress needs ways: a list";
    return std::nullopt;
  }
  EgressExpectations e;
  for (const auto& w : j["ways"]) {
    auto way = way_from(w, problem);
    if (!way) return std::nullopt;
    e.ways.push_back(std::move(*way));
  }
  // Without the metadata way the document is not one the plan wrote: never trusted.
  const bool metadata = std::any_of(e.ways.begin(), e.ways.end(), [](const WayOut& w) {
    return w.kind == WayKind::metadata && w.open.empty();
  });
  if (!metadata) {
    if (problem) *problem = "egress has no closed way for the metadata address";
    return std::nullopt;
  }
  return e;
}

}  // namespace isoharness::policy
