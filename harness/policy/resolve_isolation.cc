// Effective isolation of one item: the eval set's block is the floor, the item's block may
// raise the level and name its own settings (a key the item does not name is inherited),
// PlanOptions::runtime_class_override stands in for the eval set's runtime_class.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "harness/policy/network_names.h"
#include "harness/policy/policy_internal.h"

namespace isoharness::policy {

using scenario::pointer_join;

namespace {

// The runtime classes a deployment offers, for messages.
std::string offered(const std::vector<std::string>& classes) {
  return classes.empty() ? "none" : fmt::format("{}", fmt::join(classes, ", "));
}

// One item's merge: its own block over the eval set's, and where messages point.
struct ItemMerge {
  PlanContext& ctx;
  const std::string& label;
  const IsolationBlock& set;
  IsolationBlock own;
  std::string item_pointer;

  // Where a key of block b sits in the eval set ("" when the block is absent).
  static std::string key_ptr(const IsolationBlock& b, const char* key) {
    if (!b.present) return std::string();
    return b.is_mapping ? pointer_join(b.pointer, key) : b.pointer;
  }
  Level floor() const { return set.level.value_or(Level::standard); }
  void error(const std::string& pointer, std::string message) const {
    ctx.errors.push_back(ctx.scenario.at_eval_set(pointer, label, std::move(message)));
  }
};

// Level: the eval set's is the floor.
void merge_level(const ItemMerge& m, EffectiveIsolation& eff, Provenance& prov) {
  const Level floor = m.floor();
  eff.level = m.own.level.value_or(floor);
  prov.level = m.own.level ? ItemMerge::key_ptr(m.own, "level") : ItemMerge::key_ptr(m.set, "level");
  if (m.own.level && *m.own.level < floor) {
    m.error(ItemMerge::key_ptr(m.own, "level"),
            "isolation level " + std::string(level_name(*m.own.level)) + " is below the eval set's " +
                std::string(level_name(floor)) +
                ": a task item can only make isolation stronger. Remove the item's level (it then gets " +
                std::string(level_name(floor)) + "), or run this item in an eval set of its own");
  }
}

// Runtime class: the item's, else the override, else the eval set's; it must be offered,
// and strict needs a hardened class from somewhere.
void merge_runtime_class(const ItemMerge& m, EffectiveIsolation& eff, Provenance& prov) {
  PlanContext& ctx = m.ctx;
  const auto& d = ctx.deployment;
  if (m.own.runtime_class) {
    eff.runtime_class = m.own.runtime_class;
    prov.runtime_class = ItemMerge::key_ptr(m.own, "runtime_class");
  } else if (ctx.options.runtime_class_override) {
    eff.runtime_class = ctx.options.runtime_class_override;
    prov.runtime_class_from_option = true;
  } else if (m.set.runtime_class) {
    eff.runtime_class = m.set.runtime_class;
    prov.runtime_class = ItemMerge::key_ptr(m.set, "runtime_class");
  }
  if (eff.runtime_class && !d.offers(*eff.runtime_class)) {
    std::string msg = "runtime class '" + *eff.runtime_class + "' is not offered by deployment '" + d.name +
                      "' (offers: " + offered(d.runtime_classes) + "); name one it offers";
    if (m.own.runtime_class) {
      m.error(prov.runtime_class, msg);
    } else if (prov.runtime_class_from_option) {
      ctx.report_once("override-class", Diagnostic{"", 0, 0, "--runtime-class", msg});
    } else {
      ctx.report_once("set-class", ctx.scenario.at_eval_set(prov.runtime_class, "eval set isolation", msg));
    }
  }
  if (eff.level == Level::strict && !eff.runtime_class && !d.sandbox_runtime_class) {
    m.error(m.own.present ? pointer_join(m.item_pointer, "isolation")
                          : (m.set.present ? m.set.pointer : m.item_pointer),
            "strict needs a hardened runtime class, but deployment '" + d.name +
                "' configures none (sandbox_runtime_class) and the config names none. Name one with "
                "isolation.runtime_class (offered: " +
                offered(d.runtime_classes) + ") or use a deployment that configures a hardened class");
  }
}

// Egress: named targets, inherited unless the item names its own; strict refuses the
// wildcards that grant everything.
void merge_egress(const ItemMerge& m, EffectiveIsolation& eff, Provenance& prov) {
  const IsolationBlock& own = m.own;
  const IsolationBlock& set = m.set;
  eff.allow_domains =
      own.allow_domains ? *own.allow_domains : set.allow_domains.value_or(std::vector<std::string>{});
  eff.allow_cidr = own.allow_cidr ? *own.allow_cidr : set.allow_cidr.value_or(std::vector<std::string>{});
  prov.allow_domains =
      own.allow_domains ? ItemMerge::key_ptr(own, "allow_domains") : ItemMerge::key_ptr(set, "allow_domains");
  prov.allow_cidr =
      own.allow_cidr ? ItemMerge::key_ptr(own, "allow_cidr") : ItemMerge::key_ptr(set, "allow_cidr");
  prov.allow_from_item = own.allow_domains.has_value() || own.allow_cidr.has_value();
  if (eff.level != Level::strict) return;
  auto refuse = [&](bool from_item, const std::string& ptr, const std::string& key, const std::string& msg) {
    if (from_item || m.floor() != Level::strict) {
      m.error(ptr, msg);
    } else {
      m.ctx.report_once("strict-" + key, m.ctx.scenario.at_eval_set(ptr, "eval set isolation", msg));
    }
  };
  if (std::any_of(eff.allow_domains.begin(), eff.allow_domains.end(), is_every_domain)) {
    refuse(own.allow_domains.has_value(), prov.allow_domains, "domains",
           "allow_domains [\"*\"] grants every domain on the internet, which strict refuses: name your "
           "targets, e.g. allow_domains: [target.example.com]");
  }
  for (const auto& c : eff.allow_cidr) {
    if (is_every_address(c)) {
      refuse(own.allow_cidr.has_value(), prov.allow_cidr, "cidr",
             "allow_cidr " + c +
                 " grants every address, which strict refuses: name your targets, e.g. "
                 "allow_cidr: [198.51.100.0/24]");
    }
  }
}

// Image-dependent controls: inherited, and an item cannot switch off what the set turns on.
void merge_toggles(const ItemMerge& m, EffectiveIsolation& eff, Provenance& prov) {
  auto toggle = [&](const std::optional<bool>& mine, const std::optional<bool>& theirs, const char* key) {
    if (mine && theirs && *theirs && !*mine) {
      m.error(ItemMerge::key_ptr(m.own, key),
              std::string(key) +
                  ": false would switch off what the eval set turns on: "
                  "a task item can only make isolation stronger. Remove it from the item");
    }
    return mine.value_or(theirs.value_or(false)) || (theirs && *theirs);
  };
  prov.non_root =
      m.own.non_root ? ItemMerge::key_ptr(m.own, "non_root") : ItemMerge::key_ptr(m.set, "non_root");
  eff.non_root = toggle(m.own.non_root, m.set.non_root, "non_root");
  eff.read_only_root = toggle(m.own.read_only_root, m.set.read_only_root, "read_only_root");
}

}  // namespace

bool resolve_isolation(PlanContext& ctx, std::size_t t, std::size_t i, const std::string& label,
                       EffectiveIsolation& eff, Provenance& prov) {
  const std::size_t errors_before = ctx.errors.size();
  ItemMerge m{
      ctx, label, ctx.eval_set_block, {}, "/tasks/" + std::to_string(t) + "/items/" + std::to_string(i)};
  const nlohmann::json& item_json = ctx.scenario.eval_set["tasks"][t]["items"][i];
  if (item_json.contains("isolation")) {
    m.own = parse_isolation_block(item_json["isolation"], pointer_join(m.item_pointer, "isolation"),
                                  [&](const std::string& p, std::string msg) { m.error(p, std::move(msg)); });
  }
  merge_level(m, eff, prov);
  merge_runtime_class(m, eff, prov);
  merge_egress(m, eff, prov);
  merge_toggles(m, eff, prov);
  return ctx.errors.size() == errors_before;
}

ServiceRuntime service_runtime(const PlanContext& ctx, const EffectiveIsolation& eff, const Provenance& prov,
                               const scenario::ItemFacts& facts, const scenario::ServiceFacts& service) {
  const auto& d = ctx.deployment;
  // gVisor has no GPU passthrough: GPU services stay on the node's default runtime.
  using Source = RuntimeClassSource;
  if (service.gpu) return {std::nullopt, Source::gpu_exempt};
  if (eff.runtime_class)
    return {eff.runtime_class, prov.runtime_class_from_option ? Source::option : Source::isolation};
  if (eff.level == Level::strict) return {d.sandbox_runtime_class, Source::hardened};
  if (facts.runtime_class) return {facts.runtime_class, Source::task};
  if (d.sandbox_runtime_class && d.sandbox_runtime_class_is_default) {
    return {d.sandbox_runtime_class, Source::deployment_default};
  }
  return {std::nullopt, Source::none};
}

}  // namespace isoharness::policy
