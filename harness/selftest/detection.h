// Judging a selftest from the sandboxes it ran: per weakening and runtime, caught (a
// control the catalogue names failed, by the judge the catalogue names), missed, not applicable (with the
// reason) or error; per clean control sandbox, clean or a false alarm. Pure: reads the result document's
// sandbox records, writes the `selftest` section (schema in reports/README.md).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "harness/selftest/catalogue.h"

namespace isoharness::selftest {

struct JudgeInput {
  std::vector<const Weakening*> weakenings;
  std::vector<std::string> runtimes;
  // (weakening name, runtime) -> why it was not applied; absent = it was applied.
  std::map<std::pair<std::string, std::string>, std::string> not_applicable;
  const nlohmann::json* sandboxes = nullptr;  // the result's sandboxes[]
  // Test seam: checks treated as if verify had none of them ("name", or "prefix*").
  std::vector<std::string> disabled_checks;
};

// The `selftest` section: weakenings with their cells, clean controls, summary (verdict
// "pass", "fail" or "error").
nlohmann::json judge(const JudgeInput& input);

// The exit code for a judged section: 0 pass, 1 a weakening got through or a clean
// sandbox failed, 3 a sandbox could not be deployed or probed.
int exit_code_of(const nlohmann::json& section);

// Which judges failed one check (a result's check object): the labels of its typed
// `judges` (verify's CheckResult::judges: "posture", "sandbox report", "witness", "drop
// point", "node", "api"), never read from its words. Empty for a check that did not fail.
std::vector<std::string> judges_of(const nlohmann::json& check);

// Whether `control` is removed by a disabled-check pattern.
bool is_disabled(const std::string& control, const std::vector<std::string>& patterns);

}  // namespace isoharness::selftest
