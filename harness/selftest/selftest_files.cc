#include "harness/selftest/selftest_files.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "harness/common/text.h"
#include "harness/common/verdict.h"
#include "reports/selftest_reports.h"

namespace isoharness::selftest {
namespace {

namespace fs = std::filesystem;

std::string write_atomically(const fs::path& path, const std::string& text) {
  if (auto written = common::write_file_atomically(path.string(), text); !written)
    throw UserError(written.error().message);
  return path.string();
}

}  // namespace

std::vector<std::string> write_selftest_reports(const nlohmann::json& result, const std::string& out_dir) {
  const std::string md = reports::render_selftest_markdown(result);
  const std::string html = reports::render_selftest_html(result);
  const std::string junit = reports::render_selftest_junit(result);
  const fs::path dir(out_dir);
  return {write_atomically(dir / "selftest.md", md), write_atomically(dir / "selftest.html", html),
          write_atomically(dir / "junit.xml", junit)};
}

void print_verdict(const nlohmann::json& section, const std::string& result_path) {
  const auto& s = section["summary"];
  for (const auto& w : section["weakenings"])
    for (const auto& [runtime, cell] : w["cells"].items())
      if (cell.value("status", "") == "missed" || cell.value("status", "") == "error")
        std::fprintf(stderr, "%s: %s (%s): %s\n",
                     cell.value("status", "") == "missed" ? "GOT THROUGH" : "ERROR",
                     w.value("name", "").c_str(), runtime.c_str(), cell.value("reason", "").c_str());
  for (const auto& c : section["clean"])
    if (c.value("status", "") == "false_alarm")
      std::fprintf(stderr, "FALSE ALARM: clean %s sandbox failed %s\n", c.value("runtime", "").c_str(),
                   c["failed_controls"].dump().c_str());
  std::string rates;
  for (const auto& [runtime, r] : s["per_runtime"].items())
    rates += (rates.empty() ? "" : ", ") + runtime + " " + std::to_string(r.value("caught", 0)) + "/" +
             std::to_string(r.value("applicable", 0));
  const std::string verdict = s.value("verdict", "error");
  std::fprintf(stderr,
               "%s: %d/%d applicable weakenings caught (%s), %zu got through, %zu false alarm(s), %d not "
               "applicable, %d error(s), %.0f s — result %s\n",
               std::string(verdict_word(verdict_from_label(verdict))).c_str(), s.value("caught", 0),
               s.value("applicable", 0), rates.c_str(), s["missed"].size(), s["false_alarms"].size(),
               s.value("not_applicable", 0), s.value("errors", 0), section.value("duration_s", 0.0),
               result_path.c_str());
}

}  // namespace isoharness::selftest
