// Starting an eval on a busy platform. `hawk human eval start` can fail for three kinds of
// reason, and each is met differently:
//   - the user's live-eval quota is full ("Too many live evals", "429 Too Many Requests",
//     a message naming a quota): back-pressure, not a failure. The start waits (a pause
//     growing from hawk's base to 30 s, with jitter so waiting starts do not all come back at
//     once) and is tried again, for at most hawk.quota_wait_s in all;
//   - anything else the platform says (a 503, an image it cannot pull): tried again at most
//     hawk.start_retries times, pauses growing the same way, then the item's error carries
//     the platform's last message and how many tries it took;
//   - a usage error of the CLI (exit 2): not tried again. A CLI that waits for a person to
//     log in stops the run (RunStoppingError): no later start can do better.
// The classification reads text only and is unit-tested; the loop is in hawk_backend.cc.
#pragma once

#include <chrono>
#include <string>

#include "harness/common/expected.h"

namespace isoharness::deploy::hawk {

enum class StartFailure { quota, retry, final };

// What kind of failure a failed `human eval start` is (see above).
StartFailure classify_start_failure(const Error& error);

// The pause before the round-th try again (1-based): base × 2^(round-1), at most 30 s,
// times a jitter factor from 0.5 to 1.5 (jitter01 is uniform in [0, 1)).
std::chrono::milliseconds retry_pause(int round, std::chrono::milliseconds base, double jitter01);

// What the start of one eval took, for the sandbox's facts and the console.
struct StartTally {
  int tries = 0;          // calls of `human eval start`
  int quota_waits = 0;    // of them refused for the quota
  int other_retries = 0;  // of them failed otherwise and tried again
  double waited_s = 0;    // time spent pausing between tries
};

}  // namespace isoharness::deploy::hawk
