// render_parity_markdown: per cell, the mix verdict and a table of workload ratios.
#include <fmt/format.h>

#include "reports/document_shape.h"
#include "reports/parity_view.h"
#include "reports/reports.h"
#include "reports/text_format.h"

namespace isoharness::reports {

double num_or(const nlohmann::json& object, const char* key, double fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string verdict_label(const nlohmann::json& v) {
  const std::string verdict = str_or(v, "verdict", "?");
  std::string out;
  if (verdict == "parity") {
    out = "✅ parity";
  } else if (verdict == "faster") {
    out = "⚠️ faster (outside the band)";
  } else if (verdict == "regression") {
    out = "❌ regression";
  } else if (verdict == "no_mix") {
    out = "➖ no weighted mix";
  } else if (verdict == "inconclusive") {
    out = "❔ inconclusive";
    if (v.contains("rounds_to_decide") && v["rounds_to_decide"].is_number_integer()) {
      out += fmt::format(" (≈ {} more rounds)", v["rounds_to_decide"].get<int>());
    }
  } else {
    out = verdict;
  }
  return out;
}

std::string interval_text(const nlohmann::json& i) {
  if (!i.is_object()) return "none (every timed workload weighs 0)";
  return fmt::format("{} [{}, {}]", format_ratio(num_or(i, "estimate", 0)), format_ratio(num_or(i, "low", 0)),
                     format_ratio(num_or(i, "high", 0)));
}

std::string percent(double fraction) {
  return fmt::format("{:g} %", fraction * 100);
}

std::string cell_file_stem(const std::string& scenario, const std::string& cell) {
  std::string out = scenario.empty() ? cell : scenario + "." + cell;
  for (char& c : out) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  if (out.empty() || out[0] == '.') out = "_" + out;
  return out;
}

std::string parity_mix_table(const std::vector<nlohmann::json>& sections) {
  std::string out =
      "| scenario | candidate | baseline | mix slowdown [CI] | tolerance | human-baseline verdict |\n";
  out += "|---|---|---|---|---:|---|\n";
  for (const auto& s : sections) {
    for (const auto& cell : s["cells"]) {
      const auto& mix = cell["mix"];
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", escape_md_inline(str_or(s, "scenario", "-")),
                         escape_md_inline(cell["name"].get<std::string>()),
                         escape_md_inline(s["baseline"].get<std::string>()), interval_text(mix["slowdown"]),
                         format_tolerance(num_or(mix, "tolerance", s["tolerance"].get<double>())),
                         verdict_label(mix));
    }
  }
  return out;
}

namespace {

// One candidate cell against the baseline: its mix verdict, the per-workload table, warnings.
std::string cell_section(const nlohmann::json& cell, const std::string& baseline, double tol, double conf) {
  const auto& mix = cell["mix"];
  std::string out = fmt::format("\n## {} vs {}\n\n", escape_md_inline(cell["name"].get<std::string>()),
                                escape_md_inline(baseline));
  std::string weights;
  if (mix.contains("weights") && mix["weights"].is_object()) {
    for (const auto& [w, share] : mix["weights"].items()) {
      weights += fmt::format("{}{} {:.0f} %", weights.empty() ? "" : ", ", escape_md_inline(w),
                             share.get<double>() * 100);
    }
  }
  out += fmt::format("**Human-baseline validity: {}** — mix slowdown {}{}{}\n\n", verdict_label(mix),
                     interval_text(mix["slowdown"]), mix_confidence_note(mix, conf),
                     weights.empty() ? "" : " over " + weights);
  out += fmt::format("| workload | n (baseline / candidate) | ratio | {} CI | p | verdict | tolerance |\n",
                     percent(conf));
  out += "|---|---:|---:|---|---:|---|---:|\n";
  std::vector<std::string> warnings;
  for (const auto& c : cell["comparisons"]) {
    const auto& r = c["ratio"];
    const std::string name = c["workload"];
    out += fmt::format("| {} | {} / {} | {} | [{}, {}] | {} | {} | {} |\n", escape_md_inline(name),
                       c["n_baseline"].get<int>(), c["n_candidate"].get<int>(),
                       format_ratio(r["estimate"].get<double>()), format_ratio(r["low"].get<double>()),
                       format_ratio(r["high"].get<double>()), format_p(c["p_value"].get<double>()),
                       verdict_label(c), format_tolerance(num_or(c, "tolerance", tol)));
    if (c.contains("warnings") && c["warnings"].is_array()) {
      for (const auto& w : c["warnings"]) warnings.push_back(name + ": " + json_to_text(w));
    }
  }
  for (const char* holder : {"mix", "cell"}) {
    const auto& src = std::string(holder) == "mix" ? mix : cell;
    if (src.contains("warnings") && src["warnings"].is_array()) {
      for (const auto& w : src["warnings"]) warnings.push_back(std::string(holder) + ": " + json_to_text(w));
    }
  }
  if (!warnings.empty()) {
    out += "\nWarnings:\n";
    for (const auto& w : warnings) out += "- " + escape_md_inline(w) + "\n";
  }
  return out;
}

// Where the section's timings come from: backend, deployment, runtime and whose versions
// they are, and what each cell's sandbox saw of its node.
std::string provenance_markdown(const nlohmann::json& s) {
  const ProvenanceView v = provenance_view(s);
  if (!v.recorded)
    return "\nWhere it ran: not recorded (a run from before parity sections carried their provenance: "
           "compared "
           "only with other such runs).\n";
  std::string out =
      "\nWhere it ran: " + escape_md_inline(v.where) + ". Runtime: " + escape_md_inline(v.runtime) + ".\n";
  if (v.cells.empty()) return out;
  out +=
      "\n| cell | node class | runtime class | kernel the sandbox reports | node |\n|---|---|---|---|---|\n";
  for (const auto& c : v.cells)
    out +=
        fmt::format("| {} | {} | {} | {} | {} |\n", escape_md_inline(c.cell), escape_md_inline(c.node_class),
                    escape_md_inline(c.runtime), escape_md_inline(c.kernel), escape_md_inline(c.node));
  return out;
}

// A --until-decided run: how many rounds each cell needed, decided or not, at which look.
std::string sequential_markdown(const nlohmann::json& s) {
  const SequentialView v = sequential_view(s);
  if (!v.present) return "";
  std::string out = "\nUntil decided: " + escape_md_inline(v.summary) + ".\n\n";
  out += "| cell | rounds | state | look's confidence | verdict |\n|---|---:|---|---:|---|\n";
  for (const auto& r : v.rows)
    out += fmt::format("| {} | {} | {} | {} | {} |\n", escape_md_inline(r.cell), r.rounds,
                       escape_md_inline(r.state), confidence_text(r.confidence), escape_md_inline(r.verdict));
  return out;
}

// The getpid cross-check of a section, when it has one.
std::string crosscheck_section(const nlohmann::json& s) {
  const auto& cross = s.contains("getpid_crosscheck") ? s["getpid_crosscheck"] : nlohmann::json();
  if (!cross.is_array() || cross.empty()) return "";
  std::string out = "\n## getpid cross-check\n\n";
  out +=
      "The raw-syscall ratio from isoprobe's `getpid` workload against a static C loop "
      "(`getpid_static`) run in the same cell and round; agreement = isoprobe / static.\n\n";
  out += "| candidate | isoprobe getpid ratio | static loop ratio | agreement |\n|---|---:|---:|---:|\n";
  for (const auto& x : cross) {
    out += fmt::format("| {} | {} | {} | {:.3f} |\n", escape_md_inline(str_or(x, "cell", "?")),
                       format_ratio(num_or(x, "isoprobe_ratio", 0)),
                       format_ratio(num_or(x, "static_ratio", 0)), num_or(x, "agreement", 0));
  }
  return out;
}

// The run's context: the harness host. Its runtime versions are shown only where the host
// is the node (the local backend); a deployment's are in "Where it ran".
std::string context_markdown(const nlohmann::json& context) {
  if (!context.is_object() || context.empty()) return "";
  if (str_or(context, "backend", "local") != "local")
    return fmt::format(
        "<sub>harness host {} · {} · {} backend · {}</sub>\n", escape_md_inline(str_or(context, "host", "?")),
        escape_md_inline(str_or(context, "kernel", "?")), escape_md_inline(str_or(context, "backend", "?")),
        escape_md_inline(str_or(context, "started", "?")));
  return fmt::format(
      "<sub>host {} · {} · runc {} · runsc {} ({}) · {}</sub>\n",
      escape_md_inline(str_or(context, "host", "?")), escape_md_inline(str_or(context, "kernel", "?")),
      escape_md_inline(str_or(context, "runc", "?")), escape_md_inline(str_or(context, "runsc", "?")),
      escape_md_inline(str_or(context, "runsc_platform", "?")),
      escape_md_inline(str_or(context, "started", "?")));
}

}  // namespace

std::string render_parity_markdown(const nlohmann::json& parity, const nlohmann::json& context) {
  const auto sections = parity_sections(parity);
  std::string out;
  for (const auto& s : sections) {
    const double tol = s["tolerance"];
    const double conf = num_or(s, "confidence", 0.95);
    const std::string scenario = str_or(s, "scenario", "-");
    const std::string baseline = s["baseline"].get<std::string>();
    out += fmt::format("# Timing parity — scenario `{}`\n\n", escape_md_inline(scenario));
    out += fmt::format(
        "Baseline **{}** · tolerance **{}** ({}) · {} intervals "
        "(Hodges–Lehmann ratio of log times with its Mann–Whitney interval; mix: weighted geometric mean)\n",
        escape_md_inline(baseline), format_tolerance(tol), band_text(tol), percent(conf));
    out += provenance_markdown(s) + sequential_markdown(s);
    for (const auto& cell : s["cells"]) out += cell_section(cell, baseline, tol, conf);
    out += crosscheck_section(s);
    out += "\n";
  }
  out += context_markdown(context);
  return out;
}

}  // namespace isoharness::reports
