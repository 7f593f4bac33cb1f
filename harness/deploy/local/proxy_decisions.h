// The local name proxy's decisions as drop-point records. nft DNATs a sandbox's TCP 80/443
// to an allow-listed address into the node's name proxy (tools/name_proxy.cc), which
// forwards or resets each connection by the TLS server name or HTTP Host it presents. A
// reset there is the policy stopping that request: no nft rule drops it, so the proxy's
// decision log is the drop point's record of name-scoped ways out (docs/CONTRACTS.md,
// "Allow-list scope and name-scoped targets").
//
// The log's lines: "P1 <unix ms> <forward|reset> <source> <destination> <port> <name|->",
// and once it is full "P1 <unix ms> full - - 0 -" (no line after it).
#pragma once

#include <string>
#include <string_view>

#include "harness/deploy/backend.h"

namespace isoharness::deploy::local {

// The decisions on connections from `source` between from_ms and to_ms: a reset is a
// dropped record (proto "tcp", the presented name in `name`), a forward a forwarded one.
// complete is false, saying why, when the log filled before to_ms. Malformed lines are
// skipped. Never throws.
DropView proxy_decisions(std::string_view log_text, const std::string& source, long long from_ms,
                         long long to_ms);

}  // namespace isoharness::deploy::local
