// Fixtures shared by the report tests: the hand-built result document and the same
// document with a parity section computed from tests/fixtures/reports/parity_samples.json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace isoharness::test {

nlohmann::json result_fixture();              // tests/fixtures/reports/result.json
nlohmann::json parity_section_fixture();      // analysed parity_samples.json
nlohmann::json result_with_parity_fixture();  // both

// The run page's fixture: result_fixture() with harness times, one unwitnessed check, one
// self-reported egress check and the items' places in their files, and the night before it
// (`previous`): there the failing egress check passed, the n/a check passed, a kernel check
// failed that passes now, and each item took a different time.
struct RunPageFixture {
  nlohmann::json current, previous;
};
RunPageFixture run_page_fixture();

// Golden-file check: strips times, hosts, paths and revisions from `actual`, compares it
// with tests/golden/<name>.approved.<ext>; on mismatch writes <name>.unapproved.<ext> next
// to it and returns false.
// Values of `context` (host, kernel, git_revision, tool_version) are replaced too.
bool matches_golden(const std::string& name, const std::string& ext, const std::string& actual,
                    const nlohmann::json& context);
std::string normalize_for_golden(std::string text, const nlohmann::json& context);

}  // namespace isoharness::test
