// Sequential rounds: instead of a fixed number of rounds, decided or not, `parity
// --until-decided` runs rounds in batches and looks at the verdicts after each batch,
// stopping a cell as soon as its verdict is decided (parity, regression or faster) and the
// whole run when every cell is decided or the round budget is spent.
//
// Looking repeatedly at a growing sample and stopping at the first decided look inflates
// the error rate: each look is another chance for noise to cross a bound. The stated error
// rate alpha = 1 - confidence is kept by alpha spending (Lan–DeMets): the looks are fixed in
// advance (rounds = batch, 2·batch, …, max_rounds), a spending function alpha(t) of the
// information fraction t = rounds / max_rounds says how much of alpha may have been used by
// then, and look j judges its interval at confidence 1 - (alpha(t_j) - alpha(t_{j-1})). The
// per-look levels sum to alpha, so by the union bound the chance that any look reaches a
// wrong verdict is at most alpha, whatever the correlation between looks (conservative: a
// bound that needs no joint distribution, which the distribution-free intervals lack).
//   * Pocock-type: alpha(t) = alpha · ln(1 + (e - 1) t); spends evenly, so early stops are
//     likely when the effect is clear. The default.
//   * O'Brien–Fleming-type: alpha(t) = 2 - 2 Φ(z_{1-alpha/2} / sqrt(t)); spends almost
//     nothing early and keeps nearly all of alpha for the last look.
#pragma once

#include <string>
#include <vector>

namespace isoharness::parity {

enum class Spending { kPocock, kOBrienFleming };

struct Look {
  int rounds = 0;            // samples per side at this look
  double alpha = 0;          // the error this look may spend (two-sided)
  double confidence = 0.95;  // 1 - alpha: the interval judged at this look
};

// The looks for batches of `batch` rounds up to `max_rounds` (the last look at max_rounds
// even when it is not a multiple of batch). UserError unless 1 <= batch <= max_rounds and
// confidence is in (0, 1).
std::vector<Look> spending_schedule(int batch, int max_rounds, double confidence,
                                    Spending spending = Spending::kPocock);

std::string to_string(Spending spending);

}  // namespace isoharness::parity
