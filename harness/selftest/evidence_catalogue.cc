#include "harness/selftest/evidence_catalogue.h"

namespace isoharness::selftest {
namespace {

// The backend weakenings are the local backend's (harness/deploy/local/weakenings.h).
// Ways out whose blocked verdict needs the outside witness's complete record (each has a
// host in the world the witness watches): with that record gone, none of them may pass.
std::vector<std::string> witnessed_controls() {
  return {"egress:canary-tcp",   "egress:canary-udp", "egress:canary-icmp",  "egress:canary6-tcp",
          "egress:canary6-icmp", "egress:dns-exfil",  "egress:blocked-addr", "egress:target-addr"};
}

}  // namespace

// long-function: table. One designated initializer per weakening.
void append_evidence_weakenings(std::vector<Weakening>& w) {
  const auto everywhere = [](const std::string&) { return std::string(); };
  w.push_back({.name = "witness_killed",
               .what = "the world's outside witness killed once the sandbox is up (restarted after it)",
               .caught_by = witnessed_controls(),
               .not_applicable = everywhere,
               .backend = {"witness:killed"},
               .judge = kJudgeEvidence,
               .alone = true});
  w.push_back({.name = "witness_log_truncated",
               .what = "the witness's log truncated after the probe ran, before the harness reads it",
               .caught_by = witnessed_controls(),
               .not_applicable = everywhere,
               .backend = {"witness:log-truncated"},
               .judge = kJudgeEvidence,
               .alone = true});
  w.push_back({.name = "witness_flooded",
               .what = "the sandbox floods the witness past its share of the log before it is probed "
                       "(its policy lets UDP out)",
               .caught_by = witnessed_controls(),
               .not_applicable = everywhere,
               .backend = {"nft:allow-udp", "witness:flooded"},
               .judge = kJudgeEvidence});
  // Also the ways out only the drop point judges (metadata, the cluster, the jumphost): with
  // nothing reaching the drop point, they have no record that an attempt was stopped.
  auto silent = witnessed_controls();
  for (const char* c : {"egress:metadata", "egress:cluster-api", "egress:jumphost", "egress:resolver"})
    silent.emplace_back(c);
  w.push_back({.name = "agent_sends_nothing",
               .what = "nothing the agent sends leaves the sandbox (its own namespace drops it): it "
                       "reports every way out blocked",
               .caught_by = silent,
               .not_applicable = everywhere,
               .backend = {"sandbox:sends-nothing"},
               .judge = kJudgeEvidence});
}

}  // namespace isoharness::selftest
