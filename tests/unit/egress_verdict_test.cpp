// The egress verdict rule (harness/verify/egress_verdict.h), row by row: what the arrival
// witness and the drop point recorded of one way out, and the sandbox's own word, decide the
// status; missing evidence is never a pass.
#include "harness/verify/egress_verdict.h"

#include <catch2/catch.hpp>

#include "harness/scenario/scenario.h"

using namespace isoharness;
using verify::EgressEvidence;
using verify::judge_egress;
using verify::Witnessed;

namespace {

struct Row {
  const char* name;
  bool allowed;
  const char* sandbox;
  Witnessed arrival;
  Witnessed drop;
  CheckStatus status;
  const char* row;
};

constexpr Witnessed S = Witnessed::seen, N = Witnessed::not_seen, X = Witnessed::not_covering,
                    U = Witnessed::unusable, W = Witnessed::waived;
constexpr CheckStatus P = CheckStatus::pass, F = CheckStatus::fail, UW = CheckStatus::unwitnessed;

// Every row of the table in docs/CONTRACTS.md §4.4, with the cases the rule must not let pass.
const Row kRows[] = {
    {"blocked, connected, both witnesses silent: the admission fails", false, "connected", N, N, F, "B1"},
    {"blocked, connected, the drop point stopped it: still fails", false, "connected", N, S, F, "B1"},
    {"blocked, connected, witness dead: fails, not unwitnessed", false, "connected", U, U, F, "B1"},
    {"blocked, reported blocked, arrival recorded: fails", false, "timeout", S, S, F, "B2"},
    {"blocked, arrival witness dead or incomplete: unwitnessed", false, "timeout", U, S, UW, "B3"},
    {"blocked, no drop point at all: unwitnessed", false, "timeout", N, U, UW, "B4"},
    {"blocked, the drop point does not watch this way out: unwitnessed", false, "timeout", N, X, UW, "B4"},
    {"blocked, no drop record (an agent that sends nothing): unwitnessed", false, "timeout", N, N, UW, "B5"},
    {"blocked, no drop record, outside the arrival witness: unwitnessed", false, "refused", X, N, UW, "B5"},
    {"blocked, drop record, nothing arrived: passes", false, "timeout", N, S, P, "B6"},
    {"blocked, drop record, outside the arrival witness: passes", false, "timeout", X, S, P, "B6"},
    {"allowed, arrival recorded: passes", true, "connected", S, N, P, "A1"},
    {"allowed, arrival recorded though the sandbox says timeout: passes", true, "timeout", S, N, P, "A1"},
    {"allowed, arrival witness dead: unwitnessed", true, "connected", U, N, UW, "A2"},
    {"allowed, outside the arrival witness: unwitnessed", true, "connected", X, N, UW, "A2"},
    {"allowed, nothing arrived (connected by its own word): fails", true, "connected", N, N, F, "A3"},
    {"witness: none, blocked and reported blocked: passes on the report", false, "timeout", W, W, P, "W"},
    {"witness: none, blocked and reported connected: fails", false, "connected", W, W, F, "B1"},
    {"witness: none, allowed and reported connected: passes on the report", true, "connected", W, W, P, "W"},
    {"witness: none, allowed and reported timeout: fails", true, "timeout", W, W, F, "W"},
};

}  // namespace

TEST_CASE("egress verdict: every row of the table", "[verify][egress_verdict]") {
  for (const auto& r : kRows) {
    INFO(r.name);
    const auto j = judge_egress(EgressEvidence{r.allowed, r.sandbox, r.arrival, r.drop});
    CHECK(j.status == r.status);
    CHECK(std::string(j.row) == r.row);
    CHECK_FALSE(j.why.empty());
  }
}

TEST_CASE("egress verdict: no combination of missing evidence passes a blocked way out",
          "[verify][egress_verdict]") {
  for (Witnessed arrival : {S, N, X, U})
    for (Witnessed drop : {N, X, U})
      for (const char* sandbox : {"timeout", "refused", "unreachable", "dns_failed", "connected"}) {
        INFO("arrival " << static_cast<int>(arrival) << " drop " << static_cast<int>(drop) << " " << sandbox);
        CHECK(judge_egress(EgressEvidence{false, sandbox, arrival, drop}).status != CheckStatus::pass);
      }
}

TEST_CASE("egress verdict: an allowed way out passes only on an arrival record", "[verify][egress_verdict]") {
  for (Witnessed arrival : {N, X, U})
    for (Witnessed drop : {S, N, X, U}) {
      INFO("arrival " << static_cast<int>(arrival) << " drop " << static_cast<int>(drop));
      CHECK(judge_egress(EgressEvidence{true, "connected", arrival, drop}).status != CheckStatus::pass);
    }
}

TEST_CASE("check status: unwitnessed has its own label, and an unknown one reads n/a",
          "[verify][egress_verdict]") {
  CHECK(status_label(CheckStatus::unwitnessed) == "unwitnessed");
  CHECK(check_status_from_label("unwitnessed") == CheckStatus::unwitnessed);
  CHECK(check_status_from_label("witnessed?") == CheckStatus::na);
}

TEST_CASE("deployment profile: `witness: none` declares no witness; other words are refused",
          "[verify][egress_verdict]") {
  const std::string base =
      "backend: hawk\nruntime_classes: [gvisor]\nhawk:\n  cli: /opt/hawk\n  human: alice\n";
  const auto none = scenario::parse_deployment(base + "witness: none\n", "w.yaml");
  CHECK(none.witness_none);
  CHECK_FALSE(none.witness);
  CHECK_FALSE(scenario::parse_deployment(base, "w.yaml").witness_none);
  CHECK_THROWS_WITH(scenario::parse_deployment(base + "witness: nobody\n", "w.yaml"),
                    Catch::Contains("or the word none"));
}
