#include "reports/selftest_view.h"

#include <fmt/format.h>

#include "harness/common/error.h"
#include "reports/text_format.h"

namespace isoharness::reports {

const nlohmann::json& selftest_section(const nlohmann::json& result) {
  std::vector<std::string> problems;
  if (!result.is_object() || !result.contains("selftest") || !result["selftest"].is_object())
    throw UserError("selftest report: $.selftest: missing (not a selftest result)");
  const auto& s = result["selftest"];
  for (const char* key : {"weakenings", "clean", "runtimes"})
    if (!s.contains(key) || !s[key].is_array())
      problems.push_back(fmt::format("$.selftest.{}: must be a list", key));
  if (!s.contains("summary") || !s["summary"].is_object())
    problems.push_back("$.selftest.summary: must be an object");
  if (problems.empty()) {
    for (std::size_t i = 0; i < s["weakenings"].size(); ++i) {
      const auto& w = s["weakenings"][i];
      if (!w.is_object() || !w.contains("name") || !w["name"].is_string() || !w.contains("cells") ||
          !w["cells"].is_object())
        problems.push_back(
            fmt::format("$.selftest.weakenings[{}]: needs a string name and an object cells", i));
    }
  }
  if (!problems.empty()) {
    std::string msg = "selftest report: the document has the wrong shape:";
    for (const auto& p : problems) msg += "\n  " + p;
    throw UserError(msg);
  }
  return s;
}

std::string cell_status(const nlohmann::json& cell) {
  return str_or(cell, "status", "error");
}

std::string join_list(const nlohmann::json& list) {
  std::string out;
  if (list.is_array())
    for (const auto& v : list) out += (out.empty() ? "" : ", ") + json_to_text(v);
  return out;
}

std::string cell_detail(const nlohmann::json& cell) {
  if (cell_status(cell) == "caught") {
    const std::string judge = str_or(cell, "judge");
    return "by " + join_list(cell.value("caught_by", nlohmann::json::array())) +
           (judge.empty() ? "" : " (judge: " + judge + ")");
  }
  return str_or(cell, "reason");
}

std::string caught_line(const nlohmann::json& summary) {
  std::string rates;
  if (summary.contains("per_runtime") && summary["per_runtime"].is_object())
    for (const auto& [runtime, r] : summary["per_runtime"].items())
      rates += fmt::format("{}{} {}/{}", rates.empty() ? "" : ", ", runtime, r.value("caught", 0),
                           r.value("applicable", 0));
  return fmt::format("{}/{} applicable weakenings caught ({})", summary.value("caught", 0),
                     summary.value("applicable", 0), rates);
}

}  // namespace isoharness::reports
