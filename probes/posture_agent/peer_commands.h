// `isoprobe peer-serve`, `peer-record` and `reach` (probes/core/peer_serve.h): argument
// parsing for both builds. argv[0] is the subcommand. Exit 0 done, 2 bad usage, 3 cannot
// listen / no record.
#pragma once

namespace isoprobe {

inline constexpr const char* kPeerUsage =
    "       isoprobe peer-serve [--port P] [--window-ms N] [--max-connections N] [--record FILE]\n"
    "       isoprobe peer-record [--record FILE] [--after-unix-ms T] [--wait-ms N]\n"
    "       isoprobe reach --nonce HEX [--deadline-ms N] --target NAME=ADDR:PORT...\n";

int peer_serve_main(int argc, char** argv);
int peer_record_main(int argc, char** argv);
int reach_main(int argc, char** argv);

}  // namespace isoprobe
