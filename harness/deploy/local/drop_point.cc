#include "harness/deploy/local/drop_point.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "harness/common/subprocess.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/nft_rules.h"

namespace isoharness::deploy::local {
namespace {

using nlohmann::json;

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// {"elem": {"val": {"concat": [dest, proto, port]}, "counter": {"packets": n, ...}}}
std::optional<DropCount> drop_element(const json& item) {
  const json* elem = member(item, "elem");
  const json* val = elem ? member(*elem, "val") : nullptr;
  const json* concat = val ? member(*val, "concat") : nullptr;
  const json* counter = elem ? member(*elem, "counter") : nullptr;
  const json* packets = counter ? member(*counter, "packets") : nullptr;
  if (!concat || !concat->is_array() || concat->size() != 3 || !packets || !packets->is_number_integer())
    return std::nullopt;
  const json& dest = (*concat)[0];
  const json& proto = (*concat)[1];
  const json& port = (*concat)[2];
  if (!dest.is_string() || !(proto.is_string() || proto.is_number_integer()) || !port.is_number_integer())
    return std::nullopt;
  DropCount c;
  c.destination = dest.get<std::string>().substr(0, 64);
  c.proto =
      proto.is_string() ? proto.get<std::string>().substr(0, 16) : std::to_string(proto.get<long long>());
  c.port = static_cast<int>(std::clamp<long long>(port.get<long long>(), 0, 65535));
  c.packets = std::max<long long>(0, packets->get<long long>());
  return c;
}

}  // namespace

std::optional<std::vector<DropCount>> parse_drop_set(std::string_view json_text) {
  const json doc = json::parse(json_text, nullptr, false);
  const json* list = member(doc, "nftables");
  if (!list || !list->is_array()) return std::nullopt;
  for (const auto& entry : *list) {
    const json* set = member(entry, "set");
    if (!set) continue;
    std::vector<DropCount> out;
    const json* elems = member(*set, "elem");
    if (!elems) return out;  // an empty set lists no "elem"
    if (!elems->is_array()) return std::nullopt;
    for (const auto& item : *elems)
      if (auto c = drop_element(item)) out.push_back(std::move(*c));
    return out;
  }
  return std::nullopt;
}

std::vector<DropRecord> drop_increase(const std::vector<DropCount>& now, const std::vector<DropCount>& before,
                                      const std::string& source, const std::string& reason) {
  std::map<std::tuple<std::string, std::string, int>, long long> earlier;
  for (const auto& c : before) earlier[{c.destination, c.proto, c.port}] = c.packets;
  std::vector<DropRecord> out;
  for (const auto& c : now) {
    const auto it = earlier.find({c.destination, c.proto, c.port});
    const long long rose = c.packets - (it == earlier.end() ? 0 : it->second);
    if (rose <= 0) continue;
    DropRecord r;
    r.proto = c.proto == "ipv6-icmp" ? "icmp6" : c.proto;
    r.source = source;
    r.destination = c.destination;
    r.port = r.proto == "icmp" || r.proto == "icmp6" ? 0 : c.port;
    r.reason = reason;
    r.count = rose;
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<std::vector<DropCount>> read_drop_sets(const std::string& node_ns, const std::string& table,
                                                     int index, std::string& why) {
  std::vector<DropCount> all;
  for (int family : {4, 6}) {
    RunOptions opts;
    opts.deadline = std::chrono::seconds(5);
    opts.max_output = std::size_t{1} << 20;
    const auto argv =
        in_netns(node_ns, {"nft", "-j", "list", "set", "inet", table, drop_set_name(index, family)});
    const auto r = run_command(argv, opts);
    if (!r || !r->ok() || r->out_truncated) {
      why = "cannot list the drop set " + drop_set_name(index, family) + ": " +
            (r ? r->describe() : r.error().message);
      return std::nullopt;
    }
    auto counts = parse_drop_set(r->out);
    if (!counts) {
      why = "the drop set " + drop_set_name(index, family) + " is not in the shape nft lists sets in";
      return std::nullopt;
    }
    all.insert(all.end(), counts->begin(), counts->end());
  }
  return all;
}

}  // namespace isoharness::deploy::local
