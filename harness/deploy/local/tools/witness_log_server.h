// The world helper's `serve-witness-log` subcommand (witness_log_server.cc).
#pragma once

#include <string>
#include <vector>

namespace isoharness::world_helper {

// serve-witness-log --tag T --max-seconds N --listen ADDR:PORT --file FILE --path /P
int cmd_serve_witness_log(const std::vector<std::string>& args);

}  // namespace isoharness::world_helper
