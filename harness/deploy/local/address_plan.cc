#include "harness/deploy/local/address_plan.h"

#include <algorithm>
#include <charconv>

#include "harness/common/error.h"

namespace isoharness::deploy::local {
namespace {

std::uint32_t mask_of(int prefix) {
  return prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
}

}  // namespace

bool Cidr::contains(std::uint32_t ip) const {
  return (ip & mask_of(prefix)) == address;
}

bool Cidr::overlaps(const Cidr& other) const {
  int p = std::min(prefix, other.prefix);
  return (address & mask_of(p)) == (other.address & mask_of(p));
}

std::string Cidr::to_string() const {
  return format_ipv4(address) + "/" + std::to_string(prefix);
}

std::optional<std::uint32_t> parse_ipv4(std::string_view text) {
  std::uint32_t out = 0;
  int parts = 0;
  std::size_t pos = 0;
  while (parts < 4) {
    auto dot = text.find('.', pos);
    std::string_view part =
        text.substr(pos, dot == std::string_view::npos ? std::string_view::npos : dot - pos);
    if (part.empty() || part.size() > 3) return std::nullopt;
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc() || ptr != part.data() + part.size() || value > 255) return std::nullopt;
    out = (out << 8) | value;
    ++parts;
    if (dot == std::string_view::npos) break;
    pos = dot + 1;
  }
  if (parts != 4 || text.empty() || text.back() == '.') return std::nullopt;
  if (std::count(text.begin(), text.end(), '.') != 3) return std::nullopt;
  return out;
}

std::string format_ipv4(std::uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
         std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

std::optional<Cidr> parse_cidr(std::string_view text) {
  auto slash = text.find('/');
  auto ip = parse_ipv4(text.substr(0, slash));
  if (!ip) return std::nullopt;
  int prefix = 32;
  if (slash != std::string_view::npos) {
    std::string_view p = text.substr(slash + 1);
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), prefix);
    if (p.empty() || ec != std::errc() || ptr != p.data() + p.size() || prefix < 0 || prefix > 32)
      return std::nullopt;
  }
  if ((*ip & mask_of(prefix)) != *ip) return std::nullopt;
  return Cidr{*ip, prefix};
}

HostLink host_link(int slot) {
  ISOHARNESS_CHECK(slot >= 0 && slot < kMaxWorldSlots);
  std::uint32_t base = *parse_ipv4("198.51.100.128") + static_cast<std::uint32_t>(4 * slot);
  return HostLink{slot, format_ipv4(base + 1), format_ipv4(base + 2), format_ipv4(base) + "/30"};
}

std::optional<int> free_world_slot(const std::vector<Cidr>& used, const std::vector<int>& taken) {
  for (int slot = 0; slot < kMaxWorldSlots; ++slot) {
    if (std::find(taken.begin(), taken.end(), slot) != taken.end()) continue;
    Cidr mine = *parse_cidr(host_link(slot).cidr);
    bool clash = std::any_of(used.begin(), used.end(), [&](const Cidr& c) {
      // A default route or any range wider than a /24 says nothing about this /30 being
      // in use; only addresses and routes of /24 or narrower collide.
      return c.prefix >= 24 && c.overlaps(mine);
    });
    if (!clash) return slot;
  }
  return std::nullopt;
}

std::string sandbox_address(int index) {
  ISOHARNESS_CHECK(index >= 0 && index < kMaxSandboxes);
  return "192.0.2." + std::to_string(193 + index);
}

std::string sandbox_address6(int index) {
  ISOHARNESS_CHECK(index >= 0 && index < kMaxSandboxes);
  return "2001:db8:0:2::" + std::to_string(193 + index);
}

std::vector<std::string> never_opened_ranges6() {
  return {"2001:db8:0::/48", std::string(world_addr::kClusterApi6) + "/128",
          std::string(world_addr::kMetadata6) + "/128"};
}

std::string item_resolver_address(int index) {
  ISOHARNESS_CHECK(index >= 0 && index < kMaxSandboxes);
  return "203.0.113." + std::to_string(64 + index);
}

const std::vector<WorldName>& world_names() {
  static const std::vector<WorldName> names = {
      {"target.example.com", world_addr::kTarget, false},
      {"blocked.example.com", world_addr::kBlocked, false},
      {"cidr-host.example.net", world_addr::kCidrHost, false},
      {"kubernetes.default.svc", world_addr::kClusterApi, true},
      {"kubernetes.default.svc.cluster.local", world_addr::kClusterApi, true},
      {"metadata.google.internal", world_addr::kMetadata, true},
  };
  return names;
}

std::vector<std::string> resolve_allowed_domains(const std::vector<std::string>& patterns) {
  std::vector<std::string> out;
  for (const auto& p : patterns) {
    for (const auto& n : world_names()) {
      if (n.in_cluster) continue;
      bool match = p == "*" || p == n.name;
      if (!match && p.size() > 2 && p.rfind("*.", 0) == 0) {
        std::string suffix = p.substr(1);  // ".example.com"
        match = n.name.size() > suffix.size() &&
                n.name.compare(n.name.size() - suffix.size(), suffix.size(), suffix) == 0;
      }
      if (match && std::find(out.begin(), out.end(), n.address) == out.end()) out.push_back(n.address);
    }
  }
  return out;
}

bool witness_zone_forwarded(const std::vector<std::string>& patterns) {
  const std::string name = kWitnessZoneProbeName;
  return std::any_of(patterns.begin(), patterns.end(), [&name](const std::string& p) {
    if (p == "*" || p == name) return true;
    if (p.size() <= 2 || p.rfind("*.", 0) != 0) return false;
    const std::string suffix = p.substr(1);
    return name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  });
}

std::vector<std::string> never_opened_ranges() {
  return {"192.0.2.0/24", std::string(world_addr::kClusterApi) + "/32",
          std::string(world_addr::kMetadata) + "/32", std::string(world_addr::kNodeWorldSide) + "/32"};
}

std::vector<std::string> world_internet_ranges() {
  return {"203.0.113.0/24", "198.51.100.0/24"};
}

std::vector<std::string> world_ranges() {
  auto out = world_internet_ranges();
  out.push_back(std::string(world_addr::kMetadata) + "/32");
  return out;
}

}  // namespace isoharness::deploy::local
