// render_selftest_junit: the detection matrix as JUnit XML, a testsuite per runtime.
#include <fmt/format.h>

#include "reports/selftest_reports.h"
#include "reports/selftest_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {
namespace {

struct Suite {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  std::string cases;
};

void add_case(Suite& s, const std::string& classname, const std::string& name, const std::string& status,
              const std::string& detail) {
  ++s.tests;
  s.cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", escape_xml(classname),
                         escape_xml(name));
  if (status == "caught" || status == "clean") {
    s.cases += fmt::format("><system-out>{}</system-out></testcase>\n", escape_xml(status + " " + detail));
    return;
  }
  s.cases += ">\n";
  if (status == "n/a") {
    ++s.skipped;
    s.cases += fmt::format("      <skipped message=\"{}\"/>\n", escape_xml("not applicable: " + detail));
  } else if (status == "missed" || status == "false_alarm") {
    ++s.failures;
    s.cases += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n", escape_xml(status),
                           escape_xml(truncate_text(detail, 500)), escape_xml(detail));
  } else {
    ++s.errors;
    s.cases += fmt::format("      <error message=\"{}\">{}</error>\n", escape_xml(truncate_text(detail, 500)),
                           escape_xml(detail));
  }
  s.cases += "    </testcase>\n";
}

}  // namespace

std::string render_selftest_junit(const nlohmann::json& result) {
  const auto& s = selftest_section(result);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"isoharness selftest\">\n";
  for (const auto& r : s["runtimes"]) {
    const std::string runtime = json_to_text(r);
    Suite suite;
    for (const auto& c : s["clean"])
      if (str_or(c, "runtime") == runtime)
        add_case(suite, "selftest." + runtime, "clean control", str_or(c, "status", "error"),
                 str_or(c, "status") == "false_alarm" ? "failed: " + join_list(c["failed_controls"])
                                                      : str_or(c, "reason"));
    for (const auto& w : s["weakenings"]) {
      const auto cell = w["cells"].value(runtime, nlohmann::json::object());
      add_case(suite, "selftest." + runtime, str_or(w, "name"), cell_status(cell), cell_detail(cell));
    }
    out += fmt::format(
        "  <testsuite name=\"selftest.{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
        "time=\"0\">\n",
        escape_xml(runtime), suite.tests, suite.failures, suite.errors, suite.skipped);
    out += suite.cases + "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

}  // namespace isoharness::reports
