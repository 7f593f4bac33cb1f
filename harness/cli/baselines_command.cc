// `isoharness baselines BASELINES --for RUNTIME/NODE_CLASS`: is each recorded human baseline
// still a fair yardstick for agents in the target cell, and if not, the corrected time.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "harness/baselines/baselines.h"
#include "harness/cli/commands.h"
#include "harness/common/error.h"
#include "harness/common/install_paths.h"
#include "harness/history/history.h"
#include "harness/runner/context.h"
#include "harness/scenario/scenario.h"
#include "reports/baselines_reports.h"

namespace isoharness::cli {

namespace {

constexpr std::uintmax_t kMaxInputBytes = 64u << 20;

struct BaselinesOptions {
  std::string file, target, db = history::default_path(), at, scenario, format = "text", out;
  baselines::AssessOptions assess;
};

std::string read_bounded(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw UserError(path + ": cannot read (" + ec.message() + ")");
  if (size > kMaxInputBytes) throw UserError(path + ": larger than 64 MiB; split the baseline file");
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) throw UserError(path + ": cannot read");
  return ss.str();
}

// The target date: --at (a date alone means the end of that day), else now.
std::string target_date(const std::string& at, const std::string& now) {
  if (at.empty()) return now;
  const auto t = baselines::normalise_time(at);
  if (!t) throw UserError("--at: '" + at + "' is not an ISO 8601 date or time (e.g. 2026-03-03)");
  std::string end = at.size() == 10 ? t->substr(0, 10) + "T23:59:59Z" : *t;
  if (end > now) throw UserError("--at: " + at + " is in the future (now is " + now + ")");
  return end;
}

// The scenario's named mixes: --scenario, else the shipped parity scenario when found.
baselines::Mixes load_mixes(const std::string& given) {
  std::string path = given;
  if (path.empty()) {
    const auto dir = resolve_path(kScenariosDir);
    if (dir.found() && std::filesystem::exists(dir.path + "/parity/default.yaml"))
      path = dir.path + "/parity/default.yaml";
  }
  if (path.empty()) return {};
  const auto s = scenario::load_scenario(path);
  return {s.mixes, s.name, s.mix_compute_fractions};
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f || !(f << text) || !f.flush()) throw InfraError(path.string() + ": cannot write");
}

int run_baselines(const BaselinesOptions& o) {
  const auto cell = baselines::parse_cell(o.target);
  if (!cell) throw UserError("--for: '" + o.target + "' is not RUNTIME/NODE_CLASS (e.g. gvisor/non-tier)");
  if (!o.assess.deployment.empty() && !baselines::parse_deployment(o.assess.deployment))
    throw UserError("--deployment: '" + o.assess.deployment +
                    "' is not BACKEND/PROFILE (e.g. hawk/staging or local/local-2core)");
  const std::string now = runner::utc_now();
  const baselines::Target target{cell->first, cell->second, target_date(o.at, now)};
  const auto mixes = load_mixes(o.scenario);
  baselines::ParseOptions parse{now, target.at_utc, std::set<std::string>{}};
  for (const auto& [name, _] : mixes.named) parse.mixes->insert(name);
  const auto file = baselines::parse_baselines(read_bounded(o.file), o.file, parse);
  // A SQLite file that does not exist would be created empty: say so instead, write nothing.
  if (!history::is_postgres_uri(o.db) && !std::filesystem::exists(o.db))
    throw UserError(o.db + ": no history database (record parity runs with `isoharness history record`)");
  const history::Database db(o.db);
  const auto doc =
      baselines::assess(file, baselines::read_history(db, target.at_utc), target, mixes, o.assess);
  const std::string text = baselines::to_text(doc), json = doc.dump(2) + "\n";
  const std::string csv = reports::render_baselines_csv(doc);
  if (!o.out.empty()) {
    const std::filesystem::path dir(o.out);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw InfraError(o.out + ": cannot create (" + ec.message() + ")");
    write_file(dir / "baselines.json", json);
    write_file(dir / "baselines.csv", csv);
    write_file(dir / "baselines.md", reports::render_baselines_markdown(doc));
    write_file(dir / "baselines.html", reports::render_baselines_html(doc));
    std::fprintf(stderr, "wrote %s/baselines.{json,csv,md,html}\n", o.out.c_str());
  }
  const std::string& shown = o.format == "json" ? json : o.format == "csv" ? csv : text;
  std::fwrite(shown.data(), 1, shown.size(), stdout);
  return kExitPass;
}

}  // namespace

Command baselines_command(CLI::App& app) {
  auto o = std::make_shared<BaselinesOptions>();
  CLI::App* sub = app.add_subcommand(
      "baselines",
      "Per human baseline record (CSV or JSON Lines): the slowdown ratio between its cell and the target "
      "cell from the newest parity run that timed both, the corrected duration with its interval, the "
      "change points since it was recorded, and a verdict (comparable, adjust, inconclusive, stale, "
      "unknown, unstable). Exit 0 when every record got a verdict, 2 bad input, 3 infrastructure.");
  sub->add_option("baselines", o->file, "Baseline file: CSV with a header, or JSON Lines")->required();
  sub->add_option("--for", o->target, "Target cell RUNTIME/NODE_CLASS, e.g. gvisor/non-tier")->required();
  CLI::Option* db = sub->add_option(
      "--db", o->db, "History database: a SQLite file or a postgresql:// URI (as `isoharness history --db`)");
  if (!history::is_postgres_uri(o->db)) db->capture_default_str();  // a URI may hold a password
  sub->add_option("--at", o->at, "Target date (ISO 8601; a date alone means its end; default now)");
  sub->add_option("--scenario", o->scenario,
                  "Scenario with the named mixes, whose parity runs are used (default: "
                  "<scenarios-dir>/parity/default.yaml)");
  sub->add_option(
      "--deployment", o->assess.deployment,
      "Judge records that name no deployment (no deployment column) against runs of this deployment "
      "only, BACKEND/PROFILE (e.g. hawk/staging; runs recorded before runs carried their deployment are "
      "BACKEND/unknown). Default: the history's only deployment; when it holds several, such records are "
      "unknown");
  sub->add_flag("--other-deployments", o->assess.other_deployments,
                "When the deployment has no run that timed a record's cells, use another deployment's runs, "
                "marked \"from another deployment\" (off: such a record is unknown, with the reason)");
  sub->add_option("--nights", o->assess.nights,
                  "Runs combined per record (random effects over nights; 1 = the newest run only)")
      ->capture_default_str()
      ->check(CLI::Range(1, 50));
  sub->add_option("--compute-fraction", o->assess.compute_fraction,
                  "Share of a record's time that is sandbox compute when the record has no compute_fraction "
                  "column (1 = all of it, the largest correction)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--format", o->format, "What to print on standard output")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json", "csv"}));
  sub->add_option("--out", o->out,
                  "Write baselines.md, baselines.html, baselines.json and baselines.csv here");
  return {sub, [o]() -> int { return run_baselines(*o); }};
}

}  // namespace isoharness::cli
