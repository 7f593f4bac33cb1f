// The world helper's `relay` subcommand (relay.cc): a TCP forwarder that holds every byte
// for a fixed time in each direction, so the connections through it see a far link's round
// trip without the kernel's netem qdisc.
#pragma once

#include <string>
#include <vector>

namespace isoharness::world_helper {

// relay --tag T --max-seconds N --listen ADDR:PORT --to ADDR:PORT --delay-us D
//       [--max-connections N] [--buffer-bytes B]
int cmd_relay(const std::vector<std::string>& args);

}  // namespace isoharness::world_helper
