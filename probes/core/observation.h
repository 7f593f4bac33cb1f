// One posture observation, as docs/CONTRACTS.md §3 shapes it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace isoprobe {

enum class ObsStatus { ok, error, skipped };

struct Observation {
  std::string name;  // filled in by the runner from the descriptor
  ObsStatus status = ObsStatus::ok;
  nlohmann::json value = nullptr;
  int err = 0;           // errno of the syscall that failed, 0 otherwise
  std::string evidence;  // raw text read, at most kMaxEvidence bytes
  std::string message;   // why it is an error or skipped; empty when ok
  double elapsed_ms = 0;

  // Marks the observation failed with a reason and (optionally) the errno.
  Observation& fail(std::string why, int errno_value = 0);
  Observation& skip(std::string why);
};

std::string_view status_name(ObsStatus s);

// {name, status, value, errno, evidence[, message], elapsed_ms}; evidence is cut to
// kMaxEvidence bytes here as a last guard.
nlohmann::json to_json(const Observation& o);

}  // namespace isoprobe
