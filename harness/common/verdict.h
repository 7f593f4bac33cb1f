// The one word a command ends in (Verdict) and the one word a check ends in (CheckStatus),
// each with its single mapping to the label the documents carry and, for a verdict, the
// exit code. Every document keeps these exact labels (docs/CONTRACTS.md); a label this
// build does not know reads as the worst case (error, n/a), never as a pass.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "harness/common/error.h"

namespace isoharness {

enum class Verdict { pass, fail, error };
// unwitnessed: a check whose judgement needs a witness's evidence that is missing (no drop
// record for a blocked way out, a dead or incomplete witness): neither a pass nor a verdict
// on the sandbox, it makes the run an infrastructure error.
enum class CheckStatus { pass, fail, na, unwitnessed };

namespace verdict_detail {
// Indexed by the enums above, in their order.
inline constexpr std::array<std::string_view, 3> kVerdictLabels{"pass", "fail", "error"};
inline constexpr std::array<std::string_view, 3> kVerdictWords{"PASS", "FAIL", "ERROR"};
inline constexpr std::array<int, 3> kVerdictExitCodes{kExitPass, kExitVerdictFailed, kExitInfrastructure};
inline constexpr std::array<std::string_view, 4> kStatusLabels{"pass", "fail", "n/a", "unwitnessed"};
constexpr std::size_t index(Verdict v) {
  return static_cast<std::size_t>(v);
}
constexpr std::size_t index(CheckStatus s) {
  return static_cast<std::size_t>(s);
}
}  // namespace verdict_detail

// "pass", "fail", "error": the `verdict` of a result, parity or selftest summary.
constexpr std::string_view verdict_label(Verdict v) {
  return verdict_detail::kVerdictLabels.at(verdict_detail::index(v));
}

// "PASS", "FAIL", "ERROR": the summary line people read.
constexpr std::string_view verdict_word(Verdict v) {
  return verdict_detail::kVerdictWords.at(verdict_detail::index(v));
}

// kExitPass, kExitVerdictFailed, kExitInfrastructure.
constexpr int verdict_exit_code(Verdict v) {
  return verdict_detail::kVerdictExitCodes.at(verdict_detail::index(v));
}

constexpr Verdict verdict_from_label(std::string_view text) {
  if (text == verdict_label(Verdict::pass)) return Verdict::pass;
  if (text == verdict_label(Verdict::fail)) return Verdict::fail;
  return Verdict::error;
}

// An error outweighs a failure, a failure outweighs a pass.
constexpr Verdict verdict_from(bool error, bool failed) {
  return error ? Verdict::error : (failed ? Verdict::fail : Verdict::pass);
}

// "pass", "fail", "n/a", "unwitnessed": a check's `status`.
constexpr std::string_view status_label(CheckStatus s) {
  return verdict_detail::kStatusLabels.at(verdict_detail::index(s));
}

constexpr CheckStatus check_status_from_label(std::string_view text) {
  if (text == status_label(CheckStatus::pass)) return CheckStatus::pass;
  if (text == status_label(CheckStatus::fail)) return CheckStatus::fail;
  if (text == status_label(CheckStatus::unwitnessed)) return CheckStatus::unwitnessed;
  return CheckStatus::na;
}

constexpr CheckStatus pass_or_fail(bool pass) {
  return pass ? CheckStatus::pass : CheckStatus::fail;
}

// Who judged a check, carried on it (a check's `judges`): the sandbox's posture report, the
// sandbox's own word on a way out, the arrival witness, the drop point, the node's view of
// the sandbox (node_view.h), the cluster's API objects. A failing check names the judges
// whose evidence failed it; a passing one the judges that agreed.
enum class Judge { posture, sandbox_report, witness, drop_point, node, api };
inline constexpr std::array<std::string_view, 6> kJudgeLabels{"posture",    "sandbox report", "witness",
                                                              "drop point", "node",           "api"};
constexpr std::string_view judge_label(Judge j) {
  return kJudgeLabels.at(static_cast<std::size_t>(j));
}
// The judge a label names; false when it names none.
constexpr bool judge_from_label(std::string_view text, Judge& out) {
  for (std::size_t i = 0; i < kJudgeLabels.size(); ++i)
    if (kJudgeLabels[i] == text) {
      out = static_cast<Judge>(i);
      return true;
    }
  return false;
}

}  // namespace isoharness
