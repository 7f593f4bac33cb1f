#include "harness/runner/probe_output.h"

namespace isoharness::runner {

namespace {

std::string stderr_tail(const transport::ExecResult& r) {
  if (r.err.empty()) return "";
  std::string tail = r.err.size() > 300 ? r.err.substr(r.err.size() - 300) : r.err;
  // Bytes from the sandbox go into the result document: keep them printable ASCII.
  for (char& c : tail)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return "; stderr ends: " + tail;
}

}  // namespace

Expected<nlohmann::json> read_posture(const Expected<transport::ExecResult>& result,
                                      std::chrono::milliseconds deadline) {
  if (!result)
    return Error{"the channel to the sandbox failed while isoprobe ran: " + result.error().message};
  const auto& r = *result;
  if (r.timed_out) {
    return Error{"isoprobe did not finish within its deadline of " + std::to_string(deadline.count() / 1000) +
                 " s; the channel was closed"};
  }
  if (r.out_truncated || r.err_truncated) {
    return Error{"isoprobe wrote more than " + std::to_string(kMaxProbeOutput >> 20) +
                 " MiB; the channel was closed at the bound"};
  }
  auto posture = verify::parse_posture(r.out);
  if (!posture) {
    std::string how =
        r.exit_signal.empty() ? "exit " + std::to_string(r.exit_code) : "signal " + r.exit_signal;
    if (r.exit_code < 0 && r.exit_signal.empty()) how = "no exit status: the channel closed early";
    return Error{"isoprobe printed no posture document (" + posture.error().message + ", " +
                 std::to_string(r.out.size()) + " bytes, " + how + ")" + stderr_tail(r)};
  }
  return posture;
}

verify::CheckResult posture_unreadable(const std::string& why) {
  return verify::CheckResult{"posture",
                             "fail",
                             "a posture document from isoprobe",
                             "none",
                             "posture: " + why + "; no control of this sandbox can be verified",
                             ""};
}

}  // namespace isoharness::runner
