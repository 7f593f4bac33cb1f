// Renderers from one result document (isoharness.result/v1, docs/CONTRACTS.md §5) to the
// files people and CI read. Every renderer reads only the document it is given.
//
// A document that does not have the expected shape is refused with UserError listing every
// problem found (with its JSON path), not rendered half-way.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::reports {

// The document itself, pretty-printed (2 spaces) with a trailing newline.
std::string render_json(const nlohmann::json& result);

// Summary table per sandbox, then failures with their evidence, sandbox errors, findings
// (known risks), not-applicable checks and the parity verdicts. GitHub-flavoured Markdown
// that fits $GITHUB_STEP_SUMMARY (evidence is cut to a few KiB per check).
std::string render_markdown(const nlohmann::json& result);

// JUnit XML: a testsuite per scenario with one testcase per check (failures carry expected,
// observed and evidence; n/a checks are skipped; a sandbox that could not be checked is an
// error), and a testsuite per parity section: a testcase per workload (its verdict as
// output) and one for the mix, the human-baseline verdict (regression = failure,
// inconclusive = skipped).
std::string render_junit(const nlohmann::json& result);

// The parity section(s): `parity` of the result document, one section object or an array
// of them (schema in reports/README.md). The context block labels the output.
std::string render_parity_markdown(const nlohmann::json& parity, const nlohmann::json& context = {});

// One self-contained HTML page (inline CSS and SVG, no scripts, no external resources):
// per cell the ratio and interval of every workload against the tolerance line, the mix
// verdict, and the per-cell distributions of the samples.
std::string render_parity_html(const nlohmann::json& parity, const nlohmann::json& context = {});

// Per measured cell, a Google-Benchmark-format JSON document (context + benchmarks[], one
// "iteration" entry per sample, times in ns) that benchmark's tools/compare.py can read.
// Keys are file names, e.g. "strict.gvisor_non-tier.json".
std::map<std::string, nlohmann::json> render_benchmark_cells(const nlohmann::json& parity,
                                                             const nlohmann::json& context = {});

// The run's page for people (report.html): the verdict with the unwitnessed and
// self-reported counts, a matrix of sandboxes by check family (each cell's status in colour
// and in words), every failed or unwitnessed check with expected, observed, reason and
// evidence (escaped, cut as report.md cuts them), refusals and accepted risks with their
// reasons and, when `previous` is an earlier run's result document of the same scenarios
// and deployment, what changed since: new failures, fixed checks, new n/a and each item's
// harness time (a string in place of `previous` says why it could not be read, and is
// shown). One self-contained page: inline CSS and SVG, no script, nothing fetched.
std::string render_run_html(const nlohmann::json& result, const nlohmann::json& previous = {});

// One finding located in a file, for SARIF (render_sarif).
struct SarifFinding {
  std::string rule_id;    // one per kind of finding, e.g. "plan.refused", "check.failed"
  std::string rule_text;  // the rule's short description
  std::string level;      // "error", "warning" or "note"
  std::string message;
  std::string file;          // as the user named it; empty when no file is known
  int line = 0, column = 0;  // 1-based; 0 when unknown
};

// A SARIF 2.1.0 log with one run of the tool "isoharness": a rule per distinct rule_id (in
// the order they first appear), a result per finding, located at its file, line and column.
std::string render_sarif(const std::vector<SarifFinding>& findings, const std::string& tool_version);

// The findings of a run: each failed check (error, at its item's line in the eval-set file,
// which the result's plans give), each refusal scenario whose platform accepted it (error),
// each unwitnessed check (warning), each accepted known risk (warning) and note (note).
std::vector<SarifFinding> sarif_findings(const nlohmann::json& result);

// OpenMetrics text of a run: checks by status, scenario and runtime (a refusal record's
// fail_loudly too, under its scenario and runtime "-", so the counts add up to the
// result's); unwitnessed and self-reported checks; harness seconds per phase; sandboxes not
// run; parity ratios with their interval bounds per cell and workload; the verdict (a
// stateset); the run's time. Ends with "# EOF".
std::string render_openmetrics(const nlohmann::json& result);

// What the reports read besides the result document: an earlier run of the same scenarios
// and deployment (null: none), and where the SARIF log and the OpenMetrics file go (empty:
// not written). Given by the command that ran (--previous/--history, --sarif, --metrics).
struct ReportInputs {
  nlohmann::json previous;
  std::string sarif_path;
  std::string metrics_path;
};

// Writes result.json, report.md, report.html, junit.xml and, when the document has a parity section,
// parity.md, parity.html and cells/*.json into out_dir (created if missing). Each file is
// written to a temporary name and renamed into place. Returns the paths written. Throws
// UserError when out_dir cannot be created or written.
// SARIF and metrics go to the paths `inputs` names, outside out_dir when they say so.
std::vector<std::string> write_all(const nlohmann::json& result, const std::string& out_dir,
                                   const ReportInputs& inputs = {});

}  // namespace isoharness::reports
