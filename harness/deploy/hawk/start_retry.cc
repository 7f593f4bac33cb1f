#include "harness/deploy/hawk/start_retry.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "harness/deploy/hawk/hawk_cli.h"

namespace isoharness::deploy::hawk {
namespace {

std::string start_error_lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

StartFailure classify_start_failure(const Error& error) {
  if (error.code == kNeedsLogin || error.code == 2) return StartFailure::final;
  const std::string text = start_error_lowercase(error.message);
  static const std::array<std::string_view, 4> quota_words = {"too many live evals", "quota",
                                                              "429 too many requests", "too many requests"};
  for (const auto word : quota_words)
    if (text.find(word) != std::string::npos) return StartFailure::quota;
  return StartFailure::retry;
}

std::chrono::milliseconds retry_pause(int round, std::chrono::milliseconds base, double jitter01) {
  const int doublings = std::clamp(round - 1, 0, 16);
  const double grown =
      std::min(30000.0, static_cast<double>(base.count()) * static_cast<double>(1 << doublings));
  const double factor = 0.5 + std::clamp(jitter01, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<long>(grown * factor));
}

}  // namespace isoharness::deploy::hawk
