// The world helper's `witness` subcommand (witness.cc): the local world's outside witness.
#pragma once

#include <string>
#include <vector>

namespace isoharness::world_helper {

// witness --tag T --max-seconds N --log FILE --zone Z --zone-address A --canary C
//         [--canary-udp-port P]... [--iface IFACE]
int cmd_witness(const std::vector<std::string>& args);

}  // namespace isoharness::world_helper
