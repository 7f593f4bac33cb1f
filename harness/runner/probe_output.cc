#include "harness/runner/probe_output.h"

namespace isoharness::runner {

namespace {

std::string stderr_tail(const transport::ExecResult& r) {
  if (r.err.empty()) return "";
  return "; stderr ends: " + sandbox_text(r.err.size() > 300 ? r.err.substr(r.err.size() - 300) : r.err, 300);
}

}  // namespace

std::string sandbox_text(std::string_view text, std::size_t max, bool keep_newlines) {
  std::string out(text.substr(0, max));
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && !(keep_newlines && c == '\n')) || u > 0x7e) c = '?';
  }
  return out;
}

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
                             CheckStatus::fail,
                             "a posture document from isoprobe",
                             "none",
                             "posture: " + why + "; no control of this sandbox can be verified",
                             ""};
}

verify::CheckResult check_agent_upload(const nlohmann::json& posture, const transport::UploadedFile& sent) {
  const std::string expected = "the agent reports " + std::to_string(sent.bytes) + " bytes, sha256 " +
                               sent.sha256 + " for " + sent.remote_path;
  verify::CheckResult c{"agent_upload", CheckStatus::fail, expected, "", "", ""};
  const nlohmann::json* file = nullptr;
  if (posture.is_object() && posture.contains("context") && posture["context"].is_object() &&
      posture["context"].contains("verified_file") && posture["context"]["verified_file"].is_object())
    file = &posture["context"]["verified_file"];
  auto text = [&](const char* key) {
    return file && file->contains(key) && (*file)[key].is_string() ? (*file)[key].get<std::string>() : "";
  };
  const std::string sha = text("sha256"), error = text("error");
  const bool sized = file && file->contains("bytes") && (*file)["bytes"].is_number_integer() &&
                     (*file)["bytes"].get<std::int64_t>() >= 0;
  const std::uint64_t bytes = sized ? (*file)["bytes"].get<std::uint64_t>() : 0;
  if (!file) {
    c.observed = "no context.verified_file in the posture document";
  } else if (!error.empty()) {
    c.observed = "the agent could not read its file: " + sandbox_text(error, 300);
  } else {
    c.observed = std::to_string(bytes) + " bytes, sha256 " + sandbox_text(sha, 64);
  }
  const bool same = file && error.empty() && sized && bytes == sent.bytes && sha == sent.sha256;
  c.status = pass_or_fail(same);
  c.reason = same ? "the agent ran from the file the harness uploaded"
                  : "agent_upload: the agent that ran does not vouch for the file the harness uploaded (" +
                        c.observed + "), so nothing it reported is trusted";
  return c;
}

void distrust(std::vector<verify::CheckResult>& checks, const std::string& because) {
  for (auto& c : checks) {
    if (c.status != CheckStatus::pass) continue;
    c.status = CheckStatus::fail;
    c.reason = verify::untrusted_reason(c.control, because);
  }
}

}  // namespace isoharness::runner
