// DNS wire format (RFC 1035), just enough for one A query and its answer. Both
// functions are pure; the response parser treats every byte as hostile: it checks
// lengths before each read, bounds compression-pointer chains, and rejects answers
// that do not belong to our question.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace isoprobe {

struct DnsQuery {
  std::string bytes;  // empty when the name is invalid
  std::string error;
};

// A recursive query (RD) for the A records of name, class IN.
DnsQuery build_dns_query(std::uint16_t id, std::string_view name);

struct DnsResponse {
  bool ok = false;                       // a well-formed answer to our question (any rcode)
  std::string error;                     // why not, when !ok
  int rcode = 0;                         // 0 NOERROR, 3 NXDOMAIN, ...
  bool truncated = false;                // TC flag
  std::vector<std::uint32_t> addresses;  // A records (host order), at most 32
};

DnsResponse parse_dns_response(std::string_view packet, std::uint16_t expected_id,
                               std::string_view expected_name);

// Reads a (possibly compressed) name starting at offset; on success sets name
// ("a.b.c", lower case) and next (the offset after the name in place). Bounded: at most
// 64 pointer jumps and 255 bytes of name.
bool read_dns_name(std::string_view packet, std::size_t offset, std::string* name, std::size_t* next);

}  // namespace isoprobe
