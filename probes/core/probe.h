// A posture probe is data: a descriptor with its name, what it observes, its deadline
// and the function that observes it. Probes live one per file under probes/posture/ and
// are listed once in probes/posture/probe_list.h.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/observation.h"
#include "probes/core/target_spec.h"

namespace isoprobe {

using Clock = std::chrono::steady_clock;

struct PostureOptions {
  std::vector<TargetSpec> targets;                  // egress targets; none are built in
  std::optional<ResolverSpec> resolver;             // else the first nameserver of /etc/resolv.conf
  std::chrono::milliseconds deadline{10000};        // the whole posture run
  std::chrono::milliseconds egress_deadline{3000};  // all egress checks together
  std::string nonce;  // put in every datagram target's payload or query (--nonce); "" = drawn here
};

// What a probe may know: the options and its own deadline.
struct Context {
  const PostureOptions& options;
  Clock::time_point deadline;

  std::chrono::milliseconds remaining() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() > 0 ? left : std::chrono::milliseconds(0);
  }
};

struct ProbeDescriptor {
  std::string_view name;         // the observation name (docs/CONTRACTS.md §3)
  std::string_view description;  // what it observes, one line
  std::chrono::milliseconds deadline;
  Observation (*run)(Context&);
  // A probe that mostly waits (on the network, to its deadline): the runner starts it
  // first, beside the others, instead of after them. It must not start processes or
  // change what another probe reads.
  bool overlaps = false;
};

}  // namespace isoprobe
