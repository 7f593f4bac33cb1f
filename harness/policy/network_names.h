// Egress targets as a config names them: domain names (optionally "*.example.com") and
// CIDR ranges, validated strictly, plus the matching the expectations need.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace isoharness::policy {

// nullopt when the domain is well-formed, else what is wrong and what to write instead.
// "*" (every domain) is well-formed here; whether it is allowed is the policy's call.
std::optional<std::string> check_domain(std::string_view domain);
// nullopt when the range is a well-formed IPv4 or IPv6 CIDR with no host bits set.
std::optional<std::string> check_cidr(std::string_view cidr);

bool is_every_domain(std::string_view domain);  // "*"
bool is_every_address(std::string_view cidr);   // 0.0.0.0/0, ::/0

// "target.example.com" matches itself; "*.example.com" matches any subdomain; "*" all.
bool domain_matches(std::string_view pattern, std::string_view domain);
// Whether address (IPv4 or IPv6 text) lies in the well-formed range cidr.
bool cidr_contains(std::string_view cidr, std::string_view address);

}  // namespace isoharness::policy
