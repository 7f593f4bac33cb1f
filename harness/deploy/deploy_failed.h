// A deploy that failed after the platform held the sandbox for a while: the error, and
// timings (seconds by name, e.g. {"hawk_held_s": 12.5}) saying how long, which the runner
// puts into the attempt's record beside its own.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "harness/common/error.h"

namespace isoharness::deploy {

class DeployFailed : public InfraError {
 public:
  DeployFailed(const std::string& what, nlohmann::json timings)
      : InfraError(what), timings_(std::move(timings)) {}
  const nlohmann::json& timings() const { return timings_; }

 private:
  nlohmann::json timings_;
};

}  // namespace isoharness::deploy
