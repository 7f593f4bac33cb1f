#include "probes/core/observation.h"

#include <cmath>

#include "probes/core/text_util.h"

namespace isoprobe {

Observation& Observation::fail(std::string why, int errno_value) {
  status = ObsStatus::error;
  message = std::move(why);
  err = errno_value;
  return *this;
}

Observation& Observation::skip(std::string why) {
  status = ObsStatus::skipped;
  message = std::move(why);
  return *this;
}

std::string_view status_name(ObsStatus s) {
  switch (s) {
    case ObsStatus::ok:
      return "ok";
    case ObsStatus::error:
      return "error";
    case ObsStatus::skipped:
      return "skipped";
  }
  return "error";
}

nlohmann::json to_json(const Observation& o) {
  nlohmann::json j;
  j["name"] = o.name;
  j["status"] = status_name(o.status);
  j["value"] = o.value;
  j["errno"] = o.err;
  j["evidence"] = o.evidence.size() > kMaxEvidence ? o.evidence.substr(0, kMaxEvidence) : o.evidence;
  if (!o.message.empty()) j["message"] = o.message;
  j["elapsed_ms"] = std::round(o.elapsed_ms * 1000.0) / 1000.0;
  return j;
}

}  // namespace isoprobe
