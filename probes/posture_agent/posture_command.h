// `isoprobe posture`: parse the arguments, run every registered probe and print the
// posture document. Shared by the full isoprobe (posture + bench) and the posture-only
// agent that `isoharness run` uploads.
#pragma once

namespace isoprobe {

// The posture subcommand's usage lines (for the programs' own usage text).
inline constexpr const char* kPostureUsage =
    "usage: isoprobe posture [--target NAME=HOST:PORT[/tcp|/dns|/http]]... [--resolver IP[:PORT]]\n"
    "                        [--deadline-ms N] [--egress-deadline-ms N] [--compact]\n";

// argv[0] is "posture". Returns the exit code: 0 printed, 2 bad usage.
int posture_main(int argc, char** argv);

// `isoprobe version`: prints the version and git revision; returns 0.
int version_main();

}  // namespace isoprobe
