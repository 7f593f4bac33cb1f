// render_junit: JUnit XML as CI systems read it (testsuites > testsuite > testcase with
// failure / error / skipped children).
#include <fmt/format.h>

#include <map>

#include "reports/document_shape.h"
#include "reports/parity_view.h"
#include "reports/refusal_view.h"
#include "reports/reports.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

constexpr std::size_t kJunitEvidenceBytes = 8000;

struct RunSuite {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  std::string properties;
  std::string cases;
};

std::string attr(const std::string& s) {
  return escape_xml(s);
}

std::string sandbox_class(const nlohmann::json& sb) {
  return fmt::format("{}.{}.{}.{}", sb["scenario"].get<std::string>(), sb["item_id"].get<std::string>(),
                     sb["runtime"].get<std::string>(), sb["node_class"].get<std::string>());
}

void add_check(RunSuite& s, const nlohmann::json& sb, const nlohmann::json& check) {
  const std::string status = check["status"];
  const std::string name =
      fmt::format("attempt {}: {}", sb["attempt"].get<int>(), check["control"].get<std::string>());
  ++s.tests;
  s.cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", attr(sandbox_class(sb)),
                         attr(name));
  if (status == "pass") {
    s.cases += "/>\n";
    return;
  }
  s.cases += ">\n";
  const std::string reason = str_or(check, "reason");
  if (status == "n/a") {
    ++s.skipped;
    s.cases += fmt::format("      <skipped message=\"{}\"/>\n", attr("not applicable: " + reason));
  } else if (status == "unwitnessed") {
    // The evidence the check needs is missing: the harness's failure, not the sandbox's.
    ++s.errors;
    s.cases += fmt::format("      <error type=\"unwitnessed\" message=\"{}\">{}</error>\n",
                           attr(truncate_text("unwitnessed: " + reason, 500)),
                           escape_xml(truncate_text(str_or(check, "evidence"), kJunitEvidenceBytes)));
  } else {
    ++s.failures;
    const std::string expected = json_to_text(check.value("expected", nlohmann::json()));
    const std::string observed = json_to_text(check.value("observed", nlohmann::json()));
    const std::string body =
        fmt::format("reason: {}\nexpected: {}\nobserved: {}\nevidence:\n{}", reason, expected, observed,
                    truncate_text(str_or(check, "evidence"), kJunitEvidenceBytes));
    s.cases += fmt::format(
        "      <failure type=\"{}\" message=\"{}\">{}</failure>\n", attr(check["control"].get<std::string>()),
        attr(truncate_text(fmt::format("expected {}, observed {}", expected, observed), 500)),
        escape_xml(body));
  }
  s.cases += "    </testcase>\n";
}

std::string junit_error_text(const nlohmann::json& error) {
  if (error.is_object()) return str_or(error, "message", json_to_text(error));
  return json_to_text(error);
}

void write_suite(std::string& out, const std::string& name, const RunSuite& s, const std::string& timestamp,
                 const std::string& host) {
  out += fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"0\"",
      attr(name), s.tests, s.failures, s.errors, s.skipped);
  if (!timestamp.empty()) out += fmt::format(" timestamp=\"{}\"", attr(timestamp));
  if (!host.empty()) out += fmt::format(" hostname=\"{}\"", attr(host));
  out += ">\n";
  if (!s.properties.empty()) out += "    <properties>\n" + s.properties + "    </properties>\n";
  out += s.cases;
  out += "  </testsuite>\n";
}

// The suites in the order they were first named.
struct RunSuites {
  std::vector<std::string> order;
  std::map<std::string, RunSuite> by_name;
  RunSuite& at(const std::string& name) {
    if (!by_name.count(name)) order.push_back(name);
    return by_name[name];
  }
};

// A testsuite per scenario: a testcase per check, and one for a sandbox that could not be checked.
void add_sandbox_suites(RunSuites& suites, const std::vector<const nlohmann::json*>& sandboxes) {
  for (const auto* sbp : sandboxes) {
    const auto& sb = *sbp;
    if (is_refusal_record(sb)) continue;  // in "refused as required"
    RunSuite& s = suites.at(sb["scenario"]);
    for (const auto& check : sb["checks"]) add_check(s, sb, check);
    if (sb.contains("error") && !sb["error"].is_null()) {
      ++s.tests;
      ++s.errors;
      const std::string text = truncate_text(junit_error_text(sb["error"]), kJunitEvidenceBytes);
      s.cases += fmt::format(
          "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n      <error message=\"{}\">{}</error>\n  "
          "  </testcase>\n",
          attr(sandbox_class(sb)), attr(fmt::format("attempt {}: sandbox", sb["attempt"].get<int>())),
          attr(truncate_text(text, 500)), escape_xml(text));
    }
  }
}

// An attempt the run never reached is an error of its scenario's suite, so CI counts it.
void add_not_run_cases(RunSuites& suites, const nlohmann::json& result) {
  for (const auto* e : not_run_entries(result)) {
    const auto& entry = *e;
    RunSuite& s = suites.at(str_or(entry, "scenario", "?"));
    ++s.tests;
    ++s.errors;
    const std::string cls =
        fmt::format("{}.{}.{}.{}", str_or(entry, "scenario", "?"), str_or(entry, "item_id", "?"),
                    str_or(entry, "runtime", "?"), str_or(entry, "node_class", "?"));
    const std::string text = truncate_text(str_or(entry, "reason", "not run"), kJunitEvidenceBytes);
    s.cases += fmt::format(
        "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n      <error type=\"not_run\" "
        "message=\"{}\">{}</error>\n    </testcase>\n",
        attr(cls), attr(fmt::format("attempt {}: sandbox", entry.value("attempt", 0))),
        attr(truncate_text(text, 500)), escape_xml(text));
  }
}

// One testcase per config the platform must refuse: a failure says what was accepted (or
// which refusal did not say why), an error what could not be submitted.
void add_refusal_suite(RunSuite& s, const std::vector<RefusalRow>& rows) {
  for (const auto& r : rows) {
    ++s.tests;
    s.cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"",
                           attr("refused." + r.scenario), attr(r.scenario + ": fail_loudly"));
    if (r.status == "pass") {
      s.cases += "/>\n";
      continue;
    }
    const std::string body =
        fmt::format("rule: {}\nexpected: {}\nthe platform answered: {}\nreason: {}\nevidence:\n{}", r.rule,
                    r.expected, r.answered, r.reason, truncate_text(r.evidence, kJunitEvidenceBytes));
    if (r.status == "fail") {
      ++s.failures;
      s.cases += fmt::format(">\n      <failure type=\"fail_loudly\" message=\"{}\">{}</failure>\n",
                             attr(truncate_text(r.reason, 500)), escape_xml(body));
    } else {
      ++s.errors;
      s.cases += fmt::format(">\n      <error message=\"{}\">{}</error>\n",
                             attr(truncate_text(r.answered, 500)), escape_xml(body));
    }
    s.cases += "    </testcase>\n";
  }
}

// One parity testcase: a workload's ratio is output only; the mix decides (the
// human-baseline question): regression = failure, inconclusive = skipped.
void add_parity_case(RunSuite& s, const nlohmann::json& sec, const nlohmann::json& cell,
                     const std::string& name, const nlohmann::json& holder, const nlohmann::json& interval,
                     bool decides) {
  const std::string cls =
      fmt::format("parity.{}.{}", str_or(sec, "scenario", "-"), cell["name"].get<std::string>());
  ++s.tests;
  const std::string verdict = holder["verdict"];
  const std::string text =
      fmt::format("{} vs {}: ratio {}, tolerance {}: {}", cell["name"].get<std::string>(),
                  sec["baseline"].get<std::string>(), interval_text(interval),
                  format_tolerance(num_or(holder, "tolerance", sec["tolerance"])), verdict_label(holder));
  s.cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n", attr(cls), attr(name));
  if (decides && verdict == "regression") {
    ++s.failures;
    s.cases += fmt::format("      <failure type=\"parity\" message=\"{}\">{}</failure>\n", attr(text),
                           escape_xml(text));
  } else if (decides && verdict != "parity") {
    ++s.skipped;
    s.cases += fmt::format("      <skipped message=\"{}\"/>\n", attr(text));
  } else {
    s.cases += fmt::format("      <system-out>{}</system-out>\n", escape_xml(text));
  }
  s.cases += "    </testcase>\n";
}

// A testsuite per parity section: a testcase per workload (a single workload far beyond the
// tolerance, getpid under gVisor, is expected) and one for the mix.
void add_parity_suites(RunSuites& suites, const nlohmann::json& result) {
  const auto sections = parity_sections(result.contains("parity") ? result["parity"] : nlohmann::json());
  for (const auto& sec : sections) {
    RunSuite& s = suites.at("parity: " + str_or(sec, "scenario", "-"));
    for (const auto& cell : sec["cells"]) {
      for (const auto& c : cell["comparisons"])
        add_parity_case(s, sec, cell, c["workload"], c, c["ratio"], false);
      add_parity_case(s, sec, cell, "mix (human-baseline validity)", cell["mix"], cell["mix"]["slowdown"],
                      true);
    }
  }
}

}  // namespace

std::string render_junit(const nlohmann::json& result) {
  check_result_shape(result);
  RunSuites suites;
  const auto sandboxes = sandboxes_in_order(result);
  add_sandbox_suites(suites, sandboxes);
  add_not_run_cases(suites, result);
  for (const auto& f : result["findings"]) {
    suites.at(f["scenario"]).properties +=
        fmt::format("      <property name=\"finding\" value=\"{}\"/>\n",
                    attr(fmt::format("{} [{}]: {}", f["code"].get<std::string>(), str_or(f, "item_id", "-"),
                                     f["message"].get<std::string>())));
  }
  const auto refusals = refusal_rows(sandboxes);
  if (!refusals.empty()) add_refusal_suite(suites.at("refused as required"), refusals);
  add_parity_suites(suites, result);

  int tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const auto& [_, s] : suites.by_name) {
    tests += s.tests;
    failures += s.failures;
    errors += s.errors;
    skipped += s.skipped;
  }
  const auto& ctx = result["context"];
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"isoharness\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
      "time=\"0\">\n",
      tests, failures, errors, skipped);
  for (const auto& name : suites.order)
    write_suite(out, name, suites.by_name[name], str_or(ctx, "started"), str_or(ctx, "host"));
  out += "</testsuites>\n";
  return out;
}

}  // namespace isoharness::reports
