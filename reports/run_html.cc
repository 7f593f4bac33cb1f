// render_run_html: the run's page for people (report.html beside report.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "reports/document_shape.h"
#include "reports/html_page.h"
#include "reports/reports.h"
#include "reports/run_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

constexpr std::size_t kEvidenceBytes = 3000;  // per side of a check, as report.md cuts it
constexpr std::size_t kReasonBytes = 1000;
constexpr std::size_t kValueBytes = 400;
constexpr std::size_t kMaxChangeRows = 200;  // per since-last-run list
constexpr std::size_t kMaxTimeRows = 40;     // the items whose harness time moved most

std::string run_style() {
  return page_style(
      {.max_width_px = 1240,
       .headings = "h2 { font-size: 18px; margin: 26px 0 6px; border-bottom: 1px solid #d0d7de; "
                   "padding-bottom: 4px; }\nh3 { font-size: 15px; margin: 16px 0 4px; }\n",
       .verdicts = ".pass { background: #dafbe1; color: #116329; }\n"
                   ".fail { background: #ffebe9; color: #a40e26; }\n"
                   ".unwitnessed, .error { background: #fff8c5; color: #7d4e00; }\n"
                   ".na { background: #f6f8fa; color: #57606a; }\n",
       .cells = "th, td { padding: 3px 8px; border: 1px solid #d8dee4; text-align: left; "
                "vertical-align: top; }\n",
       .extra = ".scroll { overflow-x: auto; max-width: 100%; }\n"
                "table.matrix td.m { text-align: center; white-space: nowrap; font-weight: 600; }\n"
                "table.matrix th.f { writing-mode: vertical-rl; transform: rotate(180deg); "
                "white-space: nowrap; }\n"
                "pre { white-space: pre-wrap; word-break: break-all; font-size: 12px; background: #f6f8fa; "
                "padding: 6px; margin: 2px 0; max-height: 240px; overflow: auto; }\n"
                ".check { border: 1px solid #d0d7de; border-radius: 6px; padding: 6px 10px; margin: 8px 0; "
                "break-inside: avoid; }\n"
                ".check td { overflow-wrap: anywhere; }\n"  // a capability list has no spaces
                "code { font-size: 12px; }\n.counts span { margin-right: 12px; }\n"
                "@media print {\n  body { max-width: none; margin: 0; font-size: 11px; }\n"
                "  .scroll { overflow: visible; }\n  pre { max-height: none; overflow: visible; }\n"
                "  h2 { break-after: avoid; }\n  tr { break-inside: avoid; }\n"
                "  .pass, .fail, .na, .unwitnessed, .error { -webkit-print-color-adjust: exact; "
                "print-color-adjust: exact; }\n}\n"});
}

std::string status_class(const std::string& status) {
  if (status == "n/a") return "na";
  if (status == "pass" || status == "fail" || status == "unwitnessed" || status == "error") return status;
  return "error";  // a status the renderer does not know is not shown as a pass
}

std::string e(std::string_view text) {
  return escape_html(text);
}

// One stacked bar of the check counts: colour and the counts written beside it.
std::string counts_bar(const RunCounts& c) {
  const int total = std::max(1, c.checks());
  std::string svg = "<svg width=\"600\" height=\"18\" role=\"img\" aria-label=\"checks by status\">";
  double x = 0;
  const std::pair<int, const char*> parts[] = {
      {c.pass, "#2da44e"}, {c.fail, "#cf222e"}, {c.unwitnessed, "#bf8700"}, {c.na, "#afb8c1"}};
  for (const auto& [n, colour] : parts) {
    const double w = 600.0 * n / total;
    if (n > 0)
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"0\" width=\"{:.1f}\" height=\"18\" fill=\"{}\"/>", x, w,
                         colour);
    x += w;
  }
  return svg + "</svg>\n";
}

std::string summary_html(const RunView& run) {
  const auto& c = run.counts;
  std::string out = fmt::format("<p class=\"verdict {}\" id=\"verdict\"><b>{}</b></p>\n",
                                status_class(run.verdict), e("verdict: " + run.verdict));
  out += fmt::format(
      "<p class=\"counts\" id=\"counts\"><span>{} sandboxes</span><span>{} checks</span><span>{} pass</span>"
      "<span>{} fail</span><span>{} n/a</span><span><b>{} unwitnessed</b></span><span><b>{} self-reported"
      "</b></span><span>{} could not be checked</span><span>{} not run</span><span>{} refusal "
      "scenarios</span>"
      "</p>\n",
      run.sandboxes.size(), c.checks(), c.pass, c.fail, c.na, c.unwitnessed, c.self_reported, c.errors,
      c.not_run, run.refusals.size());
  out += counts_bar(c);
  out +=
      "<p class=\"meta\">Unwitnessed: the evidence the check needs is missing (an infrastructure error, "
      "not a verdict). Self-reported: judged by the sandbox's own report, which a sandbox that lies could "
      "pass.</p>\n";
  return out;
}

std::string matrix_html(const RunView& run) {
  const auto families = check_families(run);
  std::string out =
      "<h2 id=\"matrix\">Sandboxes × check families</h2>\n<div class=\"scroll\">"
      "<table class=\"matrix\"><tr><th>sandbox</th>";
  for (const auto& f : families) out += "<th class=\"f\">" + e(f) + "</th>";
  out += "</tr>\n";
  for (const auto& s : run.sandboxes) {
    out += "<tr><th>" + e(s.where()) + "</th>";
    for (const auto& f : families) {
      const std::string status = family_status(s, f);
      if (status.empty()) {
        out += "<td class=\"m\"></td>";
        continue;
      }
      out += fmt::format("<td class=\"m {}\" title=\"{}\">{}</td>", status_class(status),
                         e(f + ": " + status), e(status));
    }
    out += "</tr>\n";
  }
  return out +
         "</table></div>\n<p class=\"meta\">A family is a control's name up to its first ':'; a cell "
         "is fail when any of its checks failed, else unwitnessed, else pass, else n/a; empty: no such "
         "check.</p>\n";
}

std::string pre(std::string_view text, std::size_t limit) {
  return "<pre>" + e(truncate_text(text, limit)) + "</pre>";
}

std::string check_html(const SandboxView& s, const CheckView& c) {
  std::string out =
      fmt::format("<div class=\"check\"><p><span class=\"verdict {}\">{}</span> <code>{}</code> — {}</p>\n",
                  status_class(c.status), e(c.status), e(c.control), e(s.where()));
  out += "<table><tr><th>expected</th><td>" + pre(c.expected, kValueBytes) + "</td></tr>\n";
  out += "<tr><th>observed</th><td>" + pre(c.observed, kValueBytes) + "</td></tr>\n";
  out += "<tr><th>reason</th><td>" +
         e(truncate_text(c.reason.empty() ? "no reason given" : c.reason, kReasonBytes)) + "</td></tr>\n";
  out += "<tr><th>evidence</th><td>" +
         (c.evidence.empty() ? std::string("none recorded") : pre(c.evidence, kEvidenceBytes)) +
         "</td></tr></table></div>\n";
  return out;
}

std::string problems_html(const RunView& run) {
  std::string out;
  for (const char* status : {"fail", "unwitnessed"}) {
    const int n = std::string(status) == "fail" ? run.counts.fail : run.counts.unwitnessed;
    if (n == 0) continue;
    out += fmt::format("<h2 id=\"{}\">{} ({})</h2>\n", status_class(status),
                       std::string(status) == "fail" ? "Failed checks" : "Unwitnessed checks", n);
    for (const auto& s : run.sandboxes)
      for (const auto& c : s.checks)
        if (c.status == status) out += check_html(s, c);
  }
  if (run.counts.errors + run.counts.not_run > 0) {
    out += "<h2 id=\"errors\">Sandboxes that could not be checked or were not run</h2>\n<ul>\n";
    for (const auto& s : run.sandboxes)
      if (!s.error.empty())
        out += "<li>" + e(s.where()) + ": " + e(truncate_text(s.error, kReasonBytes)) + "</li>\n";
    for (const auto& n : run.not_run) out += "<li>not run: " + e(truncate_text(n, kReasonBytes)) + "</li>\n";
    out += "</ul>\n";
  }
  return out;
}

std::string refusals_html(const RunView& run) {
  std::string out;
  if (!run.refusals.empty()) {
    out += fmt::format(
        "<h2 id=\"refusals\">Refused as required ({})</h2>\n<table><tr><th>scenario</th>"
        "<th>rule and reason expected</th><th>what the platform answered</th><th>verdict</th></tr>\n",
        run.refusals.size());
    for (const auto& r : run.refusals)
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>\n", e(r.scenario),
          e(truncate_text(r.rule.empty() ? r.expected : r.rule + ": " + r.expected, kValueBytes)),
          e(truncate_text(r.answered, kValueBytes)), status_class(r.status), e(r.status + " — " + r.verdict));
    out += "</table>\n";
  }
  if (!run.findings.empty()) {
    out += fmt::format(
        "<h2 id=\"risks\">Accepted risks and findings ({})</h2>\n<table><tr><th>scenario</th>"
        "<th>item</th><th>kind</th><th>finding</th><th>reason</th></tr>\n",
        run.findings.size());
    for (const auto& f : run.findings)
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>\n",
                         e(f.scenario), e(f.item_id),
                         f.severity == "known_risk" ? "accepted risk" : e(f.severity), e(f.code),
                         e(truncate_text(f.message, kReasonBytes)));
    out += "</table>\n";
  }
  return out;
}

struct Change {
  std::string where, control, was, now;
};

struct SinceLast {
  std::vector<Change> new_failures, fixed, new_na;
  struct Time {
    std::string where;
    double was = 0, now = 0;
  };
  std::vector<Time> times;  // items in both runs, the largest change first
};

std::string status_in(const std::map<std::string, std::map<std::string, std::string>>& runs,
                      const std::string& where, const std::string& control) {
  const auto s = runs.find(where);
  if (s == runs.end()) return "absent";
  const auto c = s->second.find(control);
  return c == s->second.end() ? "absent" : c->second;
}

SinceLast since_last(const RunView& now, const RunView& before) {
  std::map<std::string, std::map<std::string, std::string>> was;
  std::map<std::string, double> was_time;
  for (const auto& s : before.sandboxes) {
    for (const auto& c : s.checks) was[s.where()].emplace(c.control, c.status);
    if (s.timings.contains("total_s")) was_time[s.where()] = s.timings.at("total_s");
  }
  SinceLast out;
  for (const auto& s : now.sandboxes) {
    std::set<std::string> seen;
    for (const auto& c : s.checks) {
      if (!seen.insert(c.control).second) continue;
      const std::string then = status_in(was, s.where(), c.control);
      Change change{s.where(), c.control, then, c.status};
      if (c.status == "fail" && then != "fail") out.new_failures.push_back(change);
      if (c.status == "pass" && then == "fail") out.fixed.push_back(change);
      if (c.status == "n/a" && then != "n/a") out.new_na.push_back(change);
    }
    const auto t = was_time.find(s.where());
    if (t != was_time.end() && s.timings.contains("total_s"))
      out.times.push_back({s.where(), t->second, s.timings.at("total_s")});
  }
  std::stable_sort(out.times.begin(), out.times.end(), [](const auto& a, const auto& b) {
    return std::fabs(a.now - a.was) > std::fabs(b.now - b.was);
  });
  return out;
}

std::string changes_html(const char* id, const char* title, const std::vector<Change>& changes) {
  std::string out = fmt::format("<h3 id=\"{}\">{} ({})</h3>\n", id, title, changes.size());
  if (changes.empty()) return out + "<p class=\"meta\">none</p>\n";
  out += "<table><tr><th>sandbox</th><th>control</th><th>last run</th><th>this run</th></tr>\n";
  for (std::size_t i = 0; i < changes.size() && i < kMaxChangeRows; ++i) {
    const auto& c = changes[i];
    out += fmt::format(
        "<tr><td>{}</td><td><code>{}</code></td><td class=\"{}\">{}</td><td class=\"{}\">{}</td></tr>\n",
        e(c.where), e(c.control), status_class(c.was == "absent" ? "n/a" : c.was), e(c.was),
        status_class(c.now), e(c.now));
  }
  if (changes.size() > kMaxChangeRows)
    out += fmt::format("<tr><td colspan=\"4\">… and {} more</td></tr>\n", changes.size() - kMaxChangeRows);
  return out + "</table>\n";
}

std::string times_html(const std::vector<SinceLast::Time>& times) {
  std::string out =
      fmt::format("<h3 id=\"since-time\">Harness time per item ({} in both runs)</h3>\n", times.size());
  if (times.empty()) return out + "<p class=\"meta\">no item with a recorded time in both runs</p>\n";
  out += "<table><tr><th>sandbox</th><th>last run</th><th>this run</th><th>change</th></tr>\n";
  for (std::size_t i = 0; i < times.size() && i < kMaxTimeRows; ++i) {
    const auto& t = times[i];
    const double d = t.now - t.was;
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}{}{}</td></tr>\n", e(t.where),
                       format_seconds(t.was), format_seconds(t.now), d >= 0 ? "+" : "−",
                       format_seconds(std::fabs(d)),
                       t.was > 0 ? fmt::format(" ({:+.0f} %)", 100.0 * d / t.was) : "");
  }
  return out + "</table>\n";
}

std::string since_html(const RunView& run, const nlohmann::json& previous) {
  if (previous.is_null()) return "";
  std::string out = "<h2 id=\"since\">Since the last run</h2>\n";
  if (previous.is_string())
    return out + "<p class=\"error\">The previous run could not be read: " +
           e(truncate_text(previous.get<std::string>(), kReasonBytes)) + "</p>\n";
  RunView before;
  try {
    check_result_shape(previous);
    before = run_view(previous);
  } catch (const std::exception& ex) {
    return out + "<p class=\"error\">The previous run could not be read: " +
           e(truncate_text(ex.what(), kReasonBytes)) + "</p>\n";
  }
  out += fmt::format(
      "<p class=\"meta\">compared with run <code>{}</code> started {} (same scenarios and deployment)</p>\n",
      e(before.run_id.empty() ? "?" : before.run_id), e(before.started.empty() ? "?" : before.started));
  const SinceLast d = since_last(run, before);
  out += changes_html("since-new-failures", "New failures", d.new_failures);
  out += changes_html("since-fixed", "Fixed checks", d.fixed);
  out += changes_html("since-new-na", "New n/a", d.new_na);
  return out + times_html(d.times);
}

std::string context_html(const nlohmann::json& ctx) {
  std::string out = fmt::format("isoharness {} (git {})", str_or(ctx, "tool_version", "?"),
                                str_or(ctx, "git_revision", "?"));
  for (const char* key : {"backend", "deployment", "host", "kernel", "runc", "runsc", "runsc_platform",
                          "started", "finished"}) {
    const std::string v = str_or(ctx, key);
    if (!v.empty()) out += fmt::format(" · {} {}", key, v);
  }
  return "<footer>" + e(out) + "</footer>\n";
}

}  // namespace

std::string render_run_html(const nlohmann::json& result, const nlohmann::json& previous) {
  check_result_shape(result);
  const RunView run = run_view(result);
  std::string scenarios;
  for (const auto& s : run.scenarios) scenarios += (scenarios.empty() ? "" : ", ") + s;
  std::string out = page_head(e("isoharness run " + run.run_id), run_style());
  out += "<h1>isoharness run</h1>\n";
  out += fmt::format("<p class=\"meta\">run <code>{}</code> · scenarios {}</p>\n",
                     e(run.run_id.empty() ? "?" : run.run_id), e(scenarios.empty() ? "?" : scenarios));
  out += summary_html(run);
  out += since_html(run, previous);
  if (!run.sandboxes.empty()) out += matrix_html(run);
  out += problems_html(run);
  out += refusals_html(run);
  out += context_html(result["context"]);
  return out + "</body>\n</html>\n";
}

}  // namespace isoharness::reports
