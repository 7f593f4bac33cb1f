// render_markdown: the run's summary for people and for $GITHUB_STEP_SUMMARY.
#include <fmt/format.h>

#include <map>

#include "reports/document_shape.h"
#include "reports/parity_view.h"
#include "reports/refusal_view.h"
#include "reports/reports.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

constexpr std::size_t kMdEvidenceBytes = 3000;  // per check; keeps the summary far below 1 MiB
constexpr std::size_t kMdReasonBytes = 1000;    // a check's reason may quote sandbox text

struct Counts {
  int pass = 0, fail = 0, na = 0, unwitnessed = 0;
};

Counts count_checks(const nlohmann::json& sandbox) {
  Counts c;
  for (const auto& check : sandbox["checks"]) {
    const std::string s = check["status"];
    if (s == "pass") ++c.pass;
    if (s == "fail") ++c.fail;
    if (s == "n/a") ++c.na;
    if (s == "unwitnessed") ++c.unwitnessed;
  }
  return c;
}

bool has_error(const nlohmann::json& sandbox) {
  return sandbox.contains("error") && !sandbox["error"].is_null();
}

std::string md_error_text(const nlohmann::json& error) {
  if (error.is_object()) return str_or(error, "message", json_to_text(error));
  return json_to_text(error);
}

std::string where(const nlohmann::json& sb) {
  if (is_refusal_record(sb))
    return fmt::format("{} · a config the platform must refuse", sb["scenario"].get<std::string>());
  return fmt::format("{} · {} · {} / {} · attempt {}", sb["scenario"].get<std::string>(),
                     sb["item_id"].get<std::string>(), sb["runtime"].get<std::string>(),
                     sb["node_class"].get<std::string>(), sb["attempt"].get<int>());
}

std::string inline_code(const nlohmann::json& value) {
  return "<code>" + escape_md_inline(truncate_text(json_to_text(value), 400)) + "</code>";
}

std::string context_line(const nlohmann::json& ctx) {
  std::string out = fmt::format("isoharness {} (git {})", str_or(ctx, "tool_version", "?"),
                                str_or(ctx, "git_revision", "?"));
  auto add = [&](const char* label, const char* key) {
    const std::string v = str_or(ctx, key);
    if (!v.empty()) out += fmt::format(" · {} {}", label, v);
  };
  add("backend", "backend");
  add("host", "host");
  add("kernel", "kernel");
  add("runc", "runc");
  add("runsc", "runsc");
  add("platform", "runsc_platform");
  add("network", "runsc_network");
  if (ctx.contains("cpus") && ctx["cpus"].is_number())
    out += fmt::format(" · {} CPUs", ctx["cpus"].get<int>());
  const std::string started = str_or(ctx, "started"), finished = str_or(ctx, "finished");
  if (!started.empty()) out += fmt::format(" · {} → {}", started, finished.empty() ? "?" : finished);
  return escape_md_inline(out);
}

// The table of sandboxes (refusal records have their own section).
std::string sandbox_table(const std::vector<const nlohmann::json*>& sandboxes) {
  std::string out = "| scenario | item | runtime / node | attempt | pass | fail | n/a | result |\n";
  out += "|---|---|---|---:|---:|---:|---:|---|\n";
  for (const auto* sbp : sandboxes) {
    const auto& sb = *sbp;
    if (is_refusal_record(sb)) continue;
    const Counts c = count_checks(sb);
    const char* res = has_error(sb)       ? "⚠️ error"
                      : c.fail > 0        ? "❌ fail"
                      : c.unwitnessed > 0 ? "⚠️ unwitnessed"
                                          : "✅ pass";
    out += fmt::format("| {} | {} | {} / {} | {} | {} | {} | {} | {} |\n",
                       escape_md_inline(sb["scenario"].get<std::string>()),
                       escape_md_inline(sb["item_id"].get<std::string>()),
                       escape_md_inline(sb["runtime"].get<std::string>()),
                       escape_md_inline(sb["node_class"].get<std::string>()), sb["attempt"].get<int>(),
                       c.pass, c.fail, c.na, res);
  }
  return out;
}

std::string failures_section(const std::vector<const nlohmann::json*>& sandboxes, int failures) {
  std::string out = fmt::format("\n### Failures ({})\n", failures);
  for (const auto* sbp : sandboxes) {
    const auto& sb = *sbp;
    for (const auto& check : sb["checks"]) {
      if (check["status"] != "fail") continue;
      out += fmt::format("\n#### ❌ `{}` — {}\n\n", escape_md_inline(check["control"].get<std::string>()),
                         escape_md_inline(where(sb)));
      out += "- **expected:** " + inline_code(check.value("expected", nlohmann::json())) + "\n";
      out += "- **observed:** " + inline_code(check.value("observed", nlohmann::json())) + "\n";
      const std::string reason = str_or(check, "reason");
      if (!reason.empty())
        out += "- **reason:** " + escape_md_inline(truncate_text(reason, kMdReasonBytes)) + "\n";
      const std::string evidence = str_or(check, "evidence");
      if (!evidence.empty()) {
        out += "\n<details><summary>evidence</summary>\n\n" +
               md_code_block(truncate_text(evidence, kMdEvidenceBytes)) + "\n</details>\n";
      }
    }
  }
  return out;
}

std::string errors_section(const std::vector<const nlohmann::json*>& sandboxes, int errors) {
  std::string out = fmt::format("\n### Sandboxes that could not be checked ({})\n\n", errors);
  for (const auto* sbp : sandboxes) {
    const auto& sb = *sbp;
    if (!has_error(sb)) continue;
    out += "- ⚠️ " + escape_md_inline(where(sb)) + ": " +
           escape_md_inline(truncate_text(md_error_text(sb["error"]), 1000)) + "\n";
  }
  return out;
}

// Attempts the run never reached (it stopped: a lost jumphost, a signal), each with why.
std::string not_run_section(const std::vector<const nlohmann::json*>& entries) {
  std::string out = fmt::format("\n### Sandboxes not run ({})\n\n", entries.size());
  for (const auto* e : entries)
    out += "- ⚠️ " + escape_md_inline(not_run_where(*e)) + ": " +
           escape_md_inline(truncate_text(str_or(*e, "reason", "no reason given"), 1000)) + "\n";
  return out;
}

std::string findings_section(const nlohmann::json& findings) {
  std::string out = fmt::format("\n### Known risks and findings ({})\n\n", findings.size());
  out += "| scenario | item | finding | message |\n|---|---|---|---|\n";
  for (const auto& f : findings) {
    out += fmt::format("| {} | {} | `{}` | {} |\n", escape_md_inline(f["scenario"].get<std::string>()),
                       escape_md_inline(str_or(f, "item_id", "-")),
                       escape_md_inline(f["code"].get<std::string>()),
                       escape_md_inline(f["message"].get<std::string>()));
  }
  return out;
}

std::string not_applicable_section(const std::vector<const nlohmann::json*>& sandboxes, int na) {
  std::string out = fmt::format("\n### Not applicable ({})\n\n", na);
  for (const auto* sbp : sandboxes) {
    const auto& sb = *sbp;
    for (const auto& check : sb["checks"]) {
      if (check["status"] != "n/a") continue;
      out += fmt::format("- {}: `{}` — {}\n", escape_md_inline(where(sb)),
                         escape_md_inline(check["control"].get<std::string>()),
                         escape_md_inline(str_or(check, "reason", "no reason given")));
    }
  }
  return out;
}

// Who judged the egress checks: an outside witness, or the sandbox's own report,
// and why not the witness, counted over every sandbox. Empty when no check says (a result
// from before the witness existed).
std::string egress_judges_section(const std::vector<const nlohmann::json*>& sandboxes) {
  constexpr std::string_view kSandbox = "judged by the sandbox's own report (";
  int witnessed = 0, reported = 0;
  std::map<std::string, int> why_not;
  // Counted by the checks' typed fields (`judges`, `self_reported`); the evidence's words
  // only group the sandbox-reported ones by why, for people.
  const auto judged_outside = [](const nlohmann::json& check) {
    const auto judges = check.find("judges");
    if (judges == check.end() || !judges->is_array()) return false;
    for (const auto& j : *judges)
      if (j == "witness" || j == "drop point") return true;
    return false;
  };
  for (const auto* sb : sandboxes) {
    for (const auto& check : (*sb)["checks"]) {
      const std::string control = str_or(check, "control");
      if (control != "egress" && control.rfind("egress:", 0) != 0) continue;
      const auto flag = check.find("self_reported");
      const bool self = flag != check.end() && flag->is_boolean() && flag->get<bool>();
      if (!self && judged_outside(check)) ++witnessed;
      if (!self) continue;
      ++reported;
      const std::string evidence = str_or(check, "evidence");
      const auto end = evidence.find(")\n");
      const bool worded = evidence.rfind(kSandbox, 0) == 0 && end != std::string::npos;
      ++why_not[worded ? evidence.substr(kSandbox.size(), end - kSandbox.size())
                       : std::string("no reason given")];
    }
  }
  if (witnessed + reported == 0) return "";
  std::string out =
      fmt::format("\n### Egress: who judged ({} witnessed · {} sandbox-reported)\n\n", witnessed, reported);
  out += fmt::format("- judged by an outside witness (what arrived outside the sandbox): {}\n", witnessed);
  out += fmt::format("- judged by the sandbox's own report (a sandbox that lies could pass these): {}\n",
                     reported);
  for (const auto& [why, n] : why_not) out += fmt::format("  - {}: {}\n", escape_md_inline(why), n);
  return out;
}

// The checks whose witness evidence was missing, each with why: the run's infrastructure
// error, not a verdict on the sandbox.
std::string unwitnessed_section(const std::vector<const nlohmann::json*>& sandboxes, int count) {
  std::string out =
      fmt::format("\n### Unwitnessed ({}): the evidence these checks need is missing\n\n", count);
  for (const auto* sb : sandboxes)
    for (const auto& check : (*sb)["checks"])
      if (str_or(check, "status") == "unwitnessed")
        out += fmt::format("- `{}` `{}`: {}\n", escape_md_inline(str_or(*sb, "id")),
                           escape_md_inline(str_or(check, "control")),
                           escape_md_inline(str_or(check, "reason", "no reason given")));
  return out;
}

std::string headline(const std::string& verdict, const Counts& total, int checks, int errors) {
  if (verdict == "pass")
    return fmt::format("## ✅ isoharness: PASS — all {} applicable checks passed\n\n", total.pass);
  if (verdict == "fail")
    return fmt::format("## ❌ isoharness: FAIL — {} of {} checks failed\n\n", total.fail, checks);
  if (total.unwitnessed > 0 && errors == 0)
    return fmt::format("## ⚠️ isoharness: {} — {} check(s) unwitnessed\n\n", escape_md_inline(verdict),
                       total.unwitnessed);
  return fmt::format("## ⚠️ isoharness: {} — {} sandbox(es) could not be checked\n\n",
                     escape_md_inline(verdict), errors);
}

}  // namespace

std::string render_markdown(const nlohmann::json& result) {
  check_result_shape(result);
  const auto sandboxes = sandboxes_in_order(result);
  const auto refusals = refusal_rows(sandboxes);
  const auto& findings = result["findings"];
  Counts total;
  int errors = 0;
  for (const auto* sb : sandboxes) {
    const Counts c = count_checks(*sb);
    total.pass += c.pass;
    total.fail += c.fail;
    total.na += c.na;
    total.unwitnessed += c.unwitnessed;
    errors += has_error(*sb) ? 1 : 0;
  }
  const auto not_run = not_run_entries(result);
  const int checks = total.pass + total.fail + total.na + total.unwitnessed;
  std::string out =
      headline(result["summary"]["verdict"], total, checks, errors + static_cast<int>(not_run.size()));
  out += fmt::format("**{} sandboxes", sandboxes.size() - refusals.size());
  if (!refusals.empty()) out += fmt::format(" · {} refusal scenarios", refusals.size());
  out += fmt::format(" · {} checks · {} pass · {} fail · {} n/a", checks, total.pass, total.fail, total.na);
  if (total.unwitnessed > 0) out += fmt::format(" · {} unwitnessed", total.unwitnessed);
  out += fmt::format(" · {} errors**", errors);
  if (result.contains("run") && result["run"].is_object()) {
    const std::string id = str_or(result["run"], "id");
    if (!id.empty()) out += " · run `" + escape_md_inline(id) + "`";
  }
  out += "\n\n";
  if (sandboxes.size() > refusals.size()) out += sandbox_table(sandboxes);
  out += refusal_markdown(refusals);
  if (total.fail > 0) out += failures_section(sandboxes, total.fail);
  if (total.unwitnessed > 0) out += unwitnessed_section(sandboxes, total.unwitnessed);
  if (errors > 0) out += errors_section(sandboxes, errors);
  if (!not_run.empty()) out += not_run_section(not_run);
  if (!findings.empty()) out += findings_section(findings);
  if (total.na > 0) out += not_applicable_section(sandboxes, total.na);
  out += egress_judges_section(sandboxes);

  const auto sections = parity_sections(result.contains("parity") ? result["parity"] : nlohmann::json());
  if (!sections.empty()) {
    out += "\n### Timing parity (human-baseline validity)\n\n";
    out += parity_mix_table(sections);
    out += "\nPer-workload ratios: `parity.md`; charts: `parity.html`.\n";
  }
  out += "\n---\n<sub>" + context_line(result["context"]) + "</sub>\n";
  return out;
}

std::string render_json(const nlohmann::json& result) {
  return result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace isoharness::reports
