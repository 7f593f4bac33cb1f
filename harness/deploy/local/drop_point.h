// The local drop point: what the node namespace's nftables dropped of one sandbox
// (nft_rules.h: every drop of the sandbox's own traffic is counted per destination,
// transport and port in the sets drop_set_name(i, 4 | 6)). Read after each probe run and
// turned into deploy::DropRecord, the increase of each counter since the last reading of
// that sandbox, so "dropped" is observed in the node, not inferred from the sandbox's word.
// Parsing is separate from reading, for tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/deploy/backend.h"

namespace isoharness::deploy::local {

// One element of a drop set: packets dropped to this destination, transport and port.
struct DropCount {
  std::string destination;
  std::string proto;  // "tcp", "udp", "icmp", "ipv6-icmp", or the number nft printed
  int port = 0;       // 0 for ICMP
  long long packets = 0;
};

// The elements of `nft -j list set` output; nullopt when the text is not that shape (an
// element of another shape is skipped). Never throws.
std::optional<std::vector<DropCount>> parse_drop_set(std::string_view json_text);

// What rose between two readings of the same sets: one record per element whose count grew
// (an element new since `before` counts from zero). `reason` names the drop point.
std::vector<DropRecord> drop_increase(const std::vector<DropCount>& now, const std::vector<DropCount>& before,
                                      const std::string& source, const std::string& reason);

// Reads both sets of sandbox `index` in the node namespace `node_ns`, table `table`
// (bounded output, 5 s deadline). nullopt with `why` set when either cannot be read.
std::optional<std::vector<DropCount>> read_drop_sets(const std::string& node_ns, const std::string& table,
                                                     int index, std::string& why);

}  // namespace isoharness::deploy::local
