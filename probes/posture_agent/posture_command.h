// `isoprobe posture`: parse the arguments, run every registered probe and print the
// posture document. Shared by the full isoprobe (posture + bench) and the posture-only
// agent that `isoharness run` uploads.
#pragma once

#include <optional>

namespace isoprobe {

// The posture subcommand's usage lines (for the programs' own usage text).
inline constexpr const char* kPostureUsage =
    "usage: isoprobe posture [--target NAME=HOST:PORT[/tcp|/dns|/http]]... [--resolver IP[:PORT]]\n"
    "                        [--deadline-ms N] [--egress-deadline-ms N] [--compact]\n";

// argv[0] is "posture". Returns the exit code: 0 printed, 2 bad usage.
int posture_main(int argc, char** argv);

// What both builds do first: refuse a broken probe registry (3), then run `version` or
// `posture` when argv[1] names one. Empty when argv names neither: the caller goes on.
std::optional<int> run_shared_command(int argc, char** argv);

}  // namespace isoprobe
