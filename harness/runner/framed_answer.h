// The framed answer of a remote command that runs several commands in one (the
// per-attempt freshness scripts, attempt_freshness.h): each command's output is followed by
// a line "<boundary> <name> <exit code>", with a random boundary the harness chose. It is
// sandbox output, so it is parsed on its own here (and fuzzed, tests/fuzz): nothing in it
// is trusted beyond what the checks that read it conclude.
#pragma once

#include <map>
#include <string>

namespace isoharness::runner {

// One command's part of a framed answer.
struct FramedPart {
  int exit_code = -1;
  std::string out;  // its stdout and stderr, as the sandbox sent them (bounded)
};

// Splits a framed answer: each command's output is followed by a line
// "<boundary> <name> <exit code>". Text after the last frame line is ignored; a name seen
// twice keeps its first part. Never throws.
std::map<std::string, FramedPart> parse_framed(const std::string& text, const std::string& boundary);

}  // namespace isoharness::runner
