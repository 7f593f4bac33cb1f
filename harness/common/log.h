// The diagnostic log: what the harness did, step by step (every program it ran, with its
// argv, pid, exit and time), for the person debugging a run. It is not the result: the
// verdict and the evidence live in the result document.
//
// Level from `--log-level` or else ISOHARNESS_LOG (trace, debug, info, warn, error, off;
// default warn): that much goes to stderr. A run directory, once named, gets the whole
// debug log in isoharness.log whatever the level.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace isoharness::log {

// Sets the stderr level: `level` when not empty, else $ISOHARNESS_LOG, else "warn".
// Throws UserError naming the bad value.
void configure(const std::string& level);

// Appends the debug log to <dir>/isoharness.log from now on (one file at a time).
void write_to_directory(const std::string& dir);

// The logger; safe to use before configure (stderr, warn).
spdlog::logger& get();

}  // namespace isoharness::log
