// render_selftest_markdown: the detection matrix as GitHub-flavoured Markdown.
#include <fmt/format.h>

#include "reports/selftest_reports.h"
#include "reports/selftest_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {
namespace {

std::string md_cell(const nlohmann::json& cell) {
  const std::string status = cell_status(cell);
  if (status == "caught") return "✅ caught " + escape_md_inline(cell_detail(cell));
  if (status == "missed") return "❌ **missed**: " + escape_md_inline(truncate_text(cell_detail(cell), 300));
  if (status == "n/a") return "n/a (below)";
  return "⚠️ error: " + escape_md_inline(truncate_text(cell_detail(cell), 300));
}

std::string header(const nlohmann::json& result, const nlohmann::json& s) {
  const auto& summary = s["summary"];
  const std::string verdict = str_or(summary, "verdict", "error");
  const nlohmann::json context = result.value("context", nlohmann::json::object());
  std::string out =
      fmt::format("# isoharness selftest — {}\n\n",
                  verdict == "pass" ? "✅ PASS" : (verdict == "fail" ? "❌ FAIL" : "⚠️ ERROR"));
  out += fmt::format(
      "Run `{}` · scenario `{}` · host {} · runc `{}` · runsc `{}` · {:.0f} s · parallel {}{}\n\n",
      escape_md_inline(str_or(result.value("run", nlohmann::json::object()), "id", "?")),
      escape_md_inline(str_or(s, "scenario", "?")), escape_md_inline(str_or(context, "host", "?")),
      escape_md_inline(str_or(context, "runc", "?")), escape_md_inline(str_or(context, "runsc", "?")),
      s.value("duration_s", 0.0), s.value("parallel", 0), s.value("quick", false) ? " · quick subset" : "");
  out += fmt::format("**{}** · {} got through · {} false alarm(s) · {} not applicable · {} error(s)\n\n",
                     escape_md_inline(caught_line(summary)),
                     summary.value("missed", nlohmann::json::array()).size(),
                     summary.value("false_alarms", nlohmann::json::array()).size(),
                     summary.value("not_applicable", 0), summary.value("errors", 0));
  if (s.contains("disabled_checks") && !s["disabled_checks"].empty())
    out += fmt::format(
        "> **Test seam:** judged as if verify had no check {} (ISOHARNESS_TEST_DISABLE_CHECK).\n\n",
        escape_md_inline(join_list(s["disabled_checks"])));
  return out;
}

}  // namespace

std::string render_selftest_markdown(const nlohmann::json& result) {
  const auto& s = selftest_section(result);
  std::string out = header(result, s);
  out += "## Detection matrix\n\n| weakening | layer | must be caught by |";
  std::string rule = "|---|---|---|";
  for (const auto& r : s["runtimes"]) {
    out += " " + escape_md_inline(json_to_text(r)) + " |";
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  std::string not_applicable;
  for (const auto& w : s["weakenings"]) {
    out += fmt::format("| `{}` {} | {} | {} |", escape_md_inline(str_or(w, "name")),
                       escape_md_inline(str_or(w, "what")), escape_md_inline(str_or(w, "layer")),
                       escape_md_inline(join_list(w.value("caught_by", nlohmann::json::array()))));
    for (const auto& r : s["runtimes"]) {
      const auto cell = w["cells"].value(json_to_text(r), nlohmann::json::object());
      out += " " + md_cell(cell) + " |";
      if (cell_status(cell) == "n/a")
        not_applicable += fmt::format("- `{}` under {}: {}\n", escape_md_inline(str_or(w, "name")),
                                      escape_md_inline(json_to_text(r)), escape_md_inline(cell_detail(cell)));
    }
    out += "\n";
  }
  out +=
      "\n## Clean controls\n\nThe unweakened item under each runtime: any failed check is a false alarm.\n\n";
  out += "| runtime | sandboxes | result |\n|---|---|---|\n";
  for (const auto& c : s["clean"]) {
    const std::string status = str_or(c, "status", "error");
    std::string text = status == "clean"         ? "✅ no check failed"
                       : status == "false_alarm" ? "❌ **false alarm**: " + join_list(c["failed_controls"])
                                                 : status + ": " + str_or(c, "reason");
    out += fmt::format("| {} | {} | {} |\n", escape_md_inline(str_or(c, "runtime")),
                       escape_md_inline(join_list(c.value("sandboxes", nlohmann::json::array()))),
                       escape_md_inline(text));
  }
  if (!not_applicable.empty()) out += "\n## Not applicable here\n\n" + not_applicable;
  return out;
}

}  // namespace isoharness::reports
