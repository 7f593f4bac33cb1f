// Egress checks: every target at once, under one deadline, in one poll() loop over
// non-blocking sockets. A target named by host name is first resolved with our own UDP
// DNS client (never NSS), then connected to; /dns targets stop after resolving, /http
// targets send "GET /" and keep the status line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probes/core/probe.h"
#include "probes/core/target_spec.h"

namespace isoprobe {

struct EgressOutcome {
  std::string name, host, proto;
  std::uint16_t port = 0;
  std::string result;   // connected / refused / unreachable / timeout / dns_failed; name-scoped
                        // targets also reset / closed / denied (egress.cc)
  std::string address;  // the IPv4 address used, when known
  double elapsed_ms = 0;
  int err = 0;              // errno behind refused/unreachable, 0 otherwise
  std::string detail;       // one line: resolver answer, HTTP status line, error text
  std::string server_name;  // the TLS server name / HTTP Host presented, when not host
};

// resolver: where names are resolved; nullopt means "none configured" and every name
// fails with dns_failed (resolver_note says why). nonce (when not empty): once a TCP
// connection is up, its first bytes are "ihw-<nonce>\n" (tcp), or the HTTP request carries
// it in an X-Isoharness-Nonce header (http), so a witness that sees the bytes ties the
// connection to this probe run whatever address translation lies between.
std::vector<EgressOutcome> run_egress(const std::vector<TargetSpec>& targets,
                                      const std::optional<ResolverSpec>& resolver,
                                      const std::string& resolver_note, Clock::time_point deadline,
                                      const std::string& nonce = "");

// Maps a connect() errno to a result word.
std::string classify_connect_errno(int err);

}  // namespace isoprobe
