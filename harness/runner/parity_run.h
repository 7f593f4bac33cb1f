// `isoharness parity`: timing workloads under runc and gVisor on tier and non-tier nodes.
//
// One sandbox per cell (runtime/node class) is deployed from the scenario's first item
// and stays up for the whole measurement, so every cell is measured in the same minutes.
// After one warm-up pass, rounds run the cells in a freshly shuffled order each round
// (A B A B…, never all of A then all of B): in each, `isoprobe bench` runs the scenario's
// workloads once and every workload's time per operation becomes one sample; the harness
// also times a tiny command over SSH through the jumphost (what a person at the keyboard
// feels). Samples are journalled per round, so a crash loses nothing measured.
// With --until-decided, rounds come in batches and stop per cell once its verdict is decided
// under an alpha-spending rule; the section's `sequential` block says how many rounds each
// cell needed.
// Statistics are harness/parity's.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "harness/runner/runner.h"

namespace isoharness::runner {

struct ParityConfig {
  SandboxCommand command{.out_dir = "out/parity"};  // posture_deadline unused: nothing is verified
  std::string scenario_path;                        // empty: <scenarios_dir>/parity/default.yaml
  std::string baseline = "runc/tier";
  std::vector<std::string> candidates;  // empty: every other cell of the scenario's matrix
  int rounds = 0;                       // 0: 12, or 5 with quick
  bool quick = false;                   // fewer rounds, shorter runs: a smoke check in ≤ 2 min
  std::vector<std::string> workloads;   // empty: the scenario's
  std::chrono::seconds max_duration{std::chrono::minutes(20)};  // rounds stop when this is spent
  // Sequential rounds: batches of `batch` rounds up to `rounds` (default 24 here), looking
  // after each batch; a cell whose mix verdict is decided at that look's spent confidence
  // stops being timed, the run stops when every cell is decided (harness/parity/sequential.h).
  bool until_decided = false;
  int batch = 4;
  bool aa = false;  // also time a twin of the baseline cell: the night's A/A noise
};

RunOutcome run_parity(const ParityConfig& config);

}  // namespace isoharness::runner
