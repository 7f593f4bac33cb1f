// Renderers of a selftest's detection matrix: the `selftest` section of a result document
// (schema in reports/README.md) as Markdown, one self-contained HTML page and JUnit XML.
// Each reads only the document it is given and refuses (UserError) one without a
// well-formed `selftest` section.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace isoharness::reports {

// Verdict line, the matrix (weakening x runtime: caught by which controls / missed /
// n/a / error), the clean controls, and every reason a weakening was not applicable.
std::string render_selftest_markdown(const nlohmann::json& result);

// The same as one page: inline CSS, no scripts, nothing fetched.
std::string render_selftest_html(const nlohmann::json& result);

// A testsuite per runtime with a testcase per weakening (missed = failure, error = error,
// n/a = skipped) and one per clean control (false alarm = failure).
std::string render_selftest_junit(const nlohmann::json& result);

}  // namespace isoharness::reports
