// What came back from `isoprobe posture` inside a sandbox, judged before anything in it is
// believed. Everything here was produced (or could have been replaced) by code inside a
// possibly hostile sandbox: output past the cap, a probe that never finishes, a channel
// closed midway, text that is not a posture document. Each of these is a verdict about
// that sandbox (a failing "posture" check naming what happened), not a failure of the
// harness: the run goes on with the other sandboxes. See docs/SECURITY.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "harness/common/expected.h"
#include "harness/transport/transport.h"
#include "harness/verify/verify.h"

namespace isoharness::runner {

// The cap on each of isoprobe's stdout and stderr (a real posture document is ~20 KiB).
inline constexpr std::size_t kMaxProbeOutput = 8u << 20;

// Text a sandbox sent, fit for the result document: at most max bytes, every byte outside
// printable ASCII (newlines too, unless keep_newlines) replaced by '?'.
std::string sandbox_text(std::string_view text, std::size_t max, bool keep_newlines = false);

// The posture document, or why the sandbox's answer is not one.
Expected<nlohmann::json> read_posture(const Expected<transport::ExecResult>& result,
                                      std::chrono::milliseconds deadline);

// The failing check a sandbox gets when read_posture refused its answer.
verify::CheckResult posture_unreadable(const std::string& why);

// "agent_upload": whether the agent that wrote the posture document ran from the file the
// harness uploaded. The upload was checked by size only (transport::UploadCheck::size);
// the agent reports the size and SHA-256 of that file (context.verified_file, from
// `isoprobe posture --verify-file`), and both must equal what was sent.
verify::CheckResult check_agent_upload(const nlohmann::json& posture, const transport::UploadedFile& sent);

// Turns every passing check in `checks` into a failure: they rest on a document the
// control named by `because` found untrustworthy.
void distrust(std::vector<verify::CheckResult>& checks, const std::string& because);

}  // namespace isoharness::runner
