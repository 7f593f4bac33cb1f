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

// Writes result.json, report.md, junit.xml and, when the document has a parity section,
// parity.md, parity.html and cells/*.json into out_dir (created if missing). Each file is
// written to a temporary name and renamed into place. Returns the paths written. Throws
// UserError when out_dir cannot be created or written.
std::vector<std::string> write_all(const nlohmann::json& result, const std::string& out_dir);

}  // namespace isoharness::reports
