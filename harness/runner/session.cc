#include "harness/runner/session.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "harness/common/error.h"
#include "harness/deploy/factory/backend_factory.h"
#include "harness/runner/check_tally.h"
#include "harness/runner/context.h"
#include "harness/transport/ssh_line.h"
#include "reports/reports.h"

namespace isoharness::runner {
namespace {

// What a platform said about a sandbox (e.g. config keys it does not know) joins the run's findings.
void add_platform_findings(nlohmann::json& result) {
  for (const auto& s : result["sandboxes"]) {
    if (!s.contains("facts") || !s["facts"].is_object() || !s["facts"].contains("platform_findings"))
      continue;
    for (const auto& f : s["facts"]["platform_findings"])
      result["findings"].push_back({{"scenario", s.value("scenario", "")},
                                    {"item_id", s.value("item_id", "")},
                                    {"code", f.value("code", "")},
                                    {"severity", "note"},
                                    {"message", f.value("message", "")}});
  }
}

// Every check that passed only as a known risk (the profile's accepted_risks and
// accepted_runtime_escapes) joins the run's findings, once per scenario, item and check, so
// report.md's known risks and junit's properties show it beside the plan's own.
void add_known_risk_findings(nlohmann::json& result) {
  std::set<std::string> seen;
  for (const auto& s : result["sandboxes"]) {
    if (!s.is_object() || !s.contains("checks") || !s["checks"].is_array()) continue;
    for (const auto& c : s["checks"]) {
      if (!verify::passed_as_known_risk(c)) continue;
      const std::string control = c.value("control", "");
      const std::string key = s.value("scenario", "") + "\n" + s.value("item_id", "") + "\n" + control;
      if (!seen.insert(key).second) continue;
      result["findings"].push_back({{"scenario", s.value("scenario", "")},
                                    {"item_id", s.value("item_id", "")},
                                    {"code", "known_risk:" + control},
                                    {"severity", "known_risk"},
                                    {"message", c.value("reason", "")}});
    }
  }
}

int count_known_risks(const nlohmann::json& sandboxes) {
  int n = 0;
  for (const auto& s : sandboxes)
    if (s.is_object() && s.contains("checks") && s["checks"].is_array())
      for (const auto& c : s["checks"]) n += verify::passed_as_known_risk(c) ? 1 : 0;
  return n;
}

nlohmann::json accepted_keys_json(const std::vector<transport::AcceptedKey>& keys) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : keys)
    out.push_back({{"host", k.host}, {"port", k.port}, {"key", k.key_line}, {"fingerprint", k.fingerprint}});
  return out;
}

int count_not_run(const nlohmann::json& result) {
  int n = 0;
  if (result.contains("skipped") && result["skipped"].is_array())
    for (const auto& s : result["skipped"]) n += s.is_object() && s.value("not_run", false) ? 1 : 0;
  return n;
}

// The attempts the run stopped before reaching, one line each, just above the summary line.
void print_not_run(const nlohmann::json& result) {
  const int n = count_not_run(result);
  if (n == 0) return;
  std::fprintf(stderr, "not run: %d sandbox(es), each an error of this run:\n", n);
  for (const auto& s : result["skipped"]) {
    if (!s.is_object() || !s.value("not_run", false)) continue;
    std::fprintf(stderr, "  %s %s %s %s #%d: %s\n", s.value("scenario", "").c_str(),
                 s.value("item_id", "").c_str(), s.value("runtime", "").c_str(),
                 s.value("node_class", "").c_str(), s.value("attempt", 0), s.value("reason", "").c_str());
  }
}

}  // namespace

void add_plan_findings(const std::string& scenario, const policy::Plan& plan, nlohmann::json& findings) {
  for (const auto& item : plan.items)
    for (const auto& f : item.findings)
      findings.push_back({{"scenario", scenario},
                          {"item_id", item.id},
                          {"code", f.code},
                          {"severity", std::string(policy::severity_name(f.severity))},
                          {"message", f.message}});
}

void add_escape_table_findings(nlohmann::json& findings) {
  const auto today =
      std::chrono::duration_cast<std::chrono::days>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  for (const auto& note : verify::stale_escape_tables(verify::shipped_escape_tables(), today))
    findings.push_back({{"scenario", "(run)"},
                        {"item_id", nullptr},
                        {"code", "escape_table_stale"},
                        {"severity", "note"},
                        {"message", note + ": runtime_version judges by what it lists"}});
}

RunSession::RunSession(SessionSetup setup)
    : setup_(std::move(setup)), run_id_(random_run_id()), state_(&g_interrupted) {
  settings_.run_id = run_id_;
  settings_.isoprobe_bundle = setup_.isoprobe_bundle;
  settings_.host = verify::read_host_facts();
  settings_.posture_deadline = setup_.command.posture_deadline;
  settings_.host_key_policy.accept_new = setup_.command.accept_new_host_keys;
  if (setup_.profile) use_login(*setup_.profile);
  if (setup_.profile) {
    for (const auto& e : setup_.profile->accepted_runtime_escapes)
      settings_.accepted_escapes[{e.component, e.cve}] = e.reason;
    for (const auto& [cls, handler] : setup_.profile->runtime_handlers)
      settings_.runtime_handlers[cls] = handler;
    for (const auto& c : setup_.profile->runtime_classes)
      settings_.runtime_handlers[c] = setup_.profile->handler_of(c);
    settings_.runsc_max_age_days = setup_.profile->runsc_max_age_days;
    for (const auto& r : setup_.profile->accepted_risks) settings_.accepted_risks[r.check] = r.reason;
    // `witness: none` holds for every command that verifies sandboxes (run, check, selftest).
    settings_.witness_waived = setup_.profile->witness_none;
    settings_.node_view_waived = setup_.profile->node_view_none;
  }
  // The platform's live evals per user: no start outruns a delete (RunState::enter_held).
  // The wait for room is bounded by more than another sandbox's whole life (its start, its
  // wait for the quota, 10 minutes to verify and delete it), so only a run that holds
  // every slot for good (selftest's peer under a limit of 1) ends in that error.
  if (setup_.profile && setup_.command.backend == scenario::BackendKind::hawk && setup_.profile->hawk) {
    const auto& hawk = *setup_.profile->hawk;
    state_.set_held_limit(hawk.max_live_evals,
                          std::chrono::seconds(hawk.start_timeout_s + hawk.quota_wait_s + 600));
  }
}

RunSession::~RunSession() {
  stop_backend();
  if (prepack_.joinable()) prepack_.join();
}

// The local backend puts a key made for this run in each sandbox; on hawk the registered
// human's key is the one the platform installed, and sandbox keys may be accepted on
// first use, but only through the pinned jumphost.
void RunSession::use_login(const scenario::DeploymentProfile& profile) {
  if (setup_.command.backend == scenario::BackendKind::hawk && profile.hawk) {
    settings_.credentials.private_key_path = transport::expand_home(profile.hawk->identity_file);
    if (profile.hawk->sandbox_host_keys == "first-use") {
      settings_.jump_key_must_be_pinned = !setup_.command.accept_new_host_keys;
      settings_.host_key_policy.accept_new = true;
    }
    settings_.item_targets = [&profile](const policy::PlanItem& item) {
      std::vector<std::string> domains;
      for (const auto& d : item.expect["allow_domains"])
        if (d.is_string()) domains.push_back(d.get<std::string>());
      return deploy::allowed_domain_targets(profile, domains, item.expect.get());
    };
    return;
  }
  if (setup_.command.backend == scenario::BackendKind::local) {
    key_.emplace(run_id_);
    settings_.credentials.private_key_path = key_->private_path();
    settings_.credentials.public_key_path = key_->public_path();
    settings_.public_key_line = key_->public_line();
  }
}

void RunSession::open_journal(const HeaderParts& parts) {
  nlohmann::json header = {
      {"schema", "isoharness.result/v1"},
      {"context", run_context(setup_.command.backend, setup_.deployment_path, setup_.profile)},
      {"run", {{"id", run_id_}, {"scenarios", parts.scenario_names}, {"argv", setup_.command.argv}}},
      {"plans", parts.plans},
      {"findings", parts.findings},
      {"skipped", parts.skipped}};
  if (!parts.kind.empty()) header["run"]["kind"] = parts.kind;
  journal_ = std::make_unique<Journal>(setup_.command.out_dir, header);
}

bool RunSession::start_backend() {
  try {
    ISOHARNESS_CHECK(setup_.profile != nullptr);
    return start_backend(deploy::make_backend(
        setup_.command.backend, *setup_.profile,
        {run_id_, setup_.command.out_dir, setup_.command.accept_new_host_keys, &g_interrupted}));
  } catch (const InfraError& e) {
    infra_error_ = e.what();
    return false;
  }
}

bool RunSession::start_backend(std::unique_ptr<deploy::Backend> backend) {
  try {
    backend_ = std::move(backend);
    settings_.targets = backend_->egress_targets();
    backend_context_ = backend_->context();
    // The backend's own targets for each item, beside any the profile adds (hawk's domains).
    settings_.item_targets = [profile_targets = std::move(settings_.item_targets),
                              b = backend_.get()](const policy::PlanItem& item) {
      auto out = profile_targets ? profile_targets(item) : std::vector<deploy::EgressTarget>{};
      for (auto& t : b->item_egress_targets(item.expect.get())) out.push_back(std::move(t));
      return out;
    };
    return true;
  } catch (const InfraError& e) {
    infra_error_ = e.what();
    backend_.reset();
    return false;
  }
}

JobContext RunSession::jobs() {
  ISOHARNESS_CHECK(backend_ != nullptr && journal_ != nullptr);
  // A far link's sandboxes get the agent xz-packed: compress it during their deploys, which
  // on a platform take tens of seconds, rather than while the first of them wait to upload.
  if (!prepack_.joinable() && !settings_.isoprobe_bundle.empty())
    prepack_ = std::thread([dir = settings_.isoprobe_bundle] {
      try {
        transport::prepack_dir(dir);
      } catch (const std::exception&) {  // the upload itself reports what cannot be read
      }
    });
  if (!jumps_)
    jumps_ = std::make_unique<JumpPool>(settings_.credentials, settings_.host_key_policy,
                                        settings_.jump_key_must_be_pinned, &g_interrupted);
  JobContext ctx{settings_, *backend_, *journal_, *jumps_, state_};
  ctx.peers = &peers_;
  return ctx;
}

void RunSession::stop_backend() {
  if (jumps_) jumps_->close();
  backend_.reset();  // every sandbox, and the world, go here, also when a job failed
}

// The harness's own peak resident memory (this process, not the sandboxes, runtimes or the
// platform CLI it starts), the most sandboxes it held at once, and the peak per sandbox held.
nlohmann::json harness_memory(int max_in_flight) {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const double peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
  nlohmann::json out = {
      {"peak_rss_mib", std::round(peak_mib * 10) / 10},
      {"most_sandboxes_held", max_in_flight > 0 ? nlohmann::json(max_in_flight) : nlohmann::json(nullptr)}};
  if (max_in_flight > 0)
    out["peak_rss_mib_per_sandbox_held"] = std::round(peak_mib / max_in_flight * 10) / 10;
  return out;
}

nlohmann::json RunSession::collect() {
  stop_backend();
  // A journal that had to move off --out is an infrastructure failure that says where it is.
  if (infra_error_.empty()) infra_error_ = journal_->write_error();
  nlohmann::json result = result_from_journal(journal_->path());
  for (auto& [k, v] : backend_context_.items()) result["context"][k] = v;
  result["context"]["finished"] = utc_now();
  result["context"]["harness_memory"] = harness_memory(state_.most_held());
  return result;
}

RunOutcome RunSession::finish(int planned_sandboxes) {
  nlohmann::json result = collect();
  result["parity"] = nullptr;
  result["accepted_host_keys"] =
      accepted_keys_json(jumps_ ? jumps_->accepted_keys() : std::vector<transport::AcceptedKey>{});
  add_platform_findings(result);
  add_known_risk_findings(result);
  const bool interrupted = g_interrupted.load();
  result["summary"] = summarise(result, planned_sandboxes, infra_error_, interrupted);

  RunOutcome outcome;
  outcome.result_path = journal_->finalise(result);
  outcome.reports = reports::write_all(result, setup_.command.out_dir, report_inputs(setup_.command, result));
  outcome.exit_code = exit_code_of(result);
  if (!infra_error_.empty()) std::fprintf(stderr, "infrastructure failure: %s\n", infra_error_.c_str());
  if (interrupted) std::fprintf(stderr, "interrupted: every sandbox was torn down\n");
  print_not_run(result);
  print_summary_line(result, outcome.result_path);
  outcome.result = std::move(result);
  return outcome;
}

nlohmann::json summarise(const nlohmann::json& result, std::optional<int> planned_sandboxes,
                         const std::string& infra_error, bool interrupted) {
  const CheckTally t = tally_records(result["sandboxes"]);
  const bool incomplete =
      planned_sandboxes && static_cast<int>(result["sandboxes"].size()) < *planned_sandboxes;
  const int not_run = count_not_run(result);
  const Verdict verdict = verdict_from(
      !infra_error.empty() || t.errors || t.unwitnessed || interrupted || incomplete || not_run > 0,
      t.fail > 0);
  return {
      {"sandboxes", result["sandboxes"].size()},
      {"planned_sandboxes", planned_sandboxes ? nlohmann::json(*planned_sandboxes) : nlohmann::json(nullptr)},
      {"checks", t.checks},
      {"pass", t.pass},
      {"fail", t.fail},
      {"na", t.na},
      {"known_risks", count_known_risks(result["sandboxes"])},
      {"unwitnessed", t.unwitnessed},
      {"unwitnessed_checks", t.unwitnessed_checks},
      {"egress_sandbox_reported", t.sandbox_reported},
      {"posture_self_reported", t.posture_self_reported},
      {"errors", t.errors},
      {"not_run", not_run},
      {"interrupted", interrupted},
      {"infrastructure_error", infra_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(infra_error)},
      {"verdict", verdict_label(verdict)}};
}

int exit_code_of(const nlohmann::json& result) {
  return verdict_exit_code(verdict_from_label(result["summary"].value("verdict", "")));
}

namespace {

// The checks a witness could not judge, each with why: they make the run an infrastructure
// error, and the console says which.
void print_unwitnessed(const nlohmann::json& sum) {
  const int count = sum.value("unwitnessed", 0);
  if (count == 0) return;
  std::fprintf(stderr,
               "unwitnessed: %d check(s) lack the witness evidence they need (infrastructure, exit 3):\n",
               count);
  const auto shown = sum.find("unwitnessed_checks");
  if (shown != sum.end() && shown->is_array())
    for (const auto& line : *shown)
      if (line.is_string()) std::fprintf(stderr, "  %s\n", line.get<std::string>().c_str());
  const int listed = shown != sum.end() && shown->is_array() ? static_cast<int>(shown->size()) : 0;
  if (count > listed) std::fprintf(stderr, "  ... %d more in the result\n", count - listed);
}

}  // namespace

void print_summary_line(const nlohmann::json& result, const std::string& result_path) {
  const auto& sum = result["summary"];
  const Verdict verdict = verdict_from_label(sum.value("verdict", ""));
  // Refusal records (a config the platform had to refuse) are listed with the sandboxes
  // but are none: the line counts them apart.
  int refusals = 0;
  for (const auto& r : result["sandboxes"]) refusals += r.contains("refusal") ? 1 : 0;
  const int sandboxes = static_cast<int>(result["sandboxes"].size()) - refusals;
  const std::string refused = refusals ? fmt::format(" and {} refusal(s)", refusals) : "";
  print_unwitnessed(sum);
  const int unwitnessed = sum.value("unwitnessed", 0);
  const int self_reported = sum.value("egress_sandbox_reported", 0);
  const std::string witnessed =
      (unwitnessed ? fmt::format(", {} unwitnessed", unwitnessed) : "") +
      (self_reported
           ? fmt::format(
                 " ({} egress checks judged on the sandboxes' own reports: the profile says witness: none)",
                 self_reported)
           : "") +
      (sum.value("posture_self_reported", 0)
           ? fmt::format(" ({} posture checks self-reported: the profile says node_view: none)",
                         sum.value("posture_self_reported", 0))
           : "");
  const int known = sum.value("known_risks", 0);
  const std::string known_text =
      known ? fmt::format(" ({} of them known risks the profile accepts)", known) : "";
  std::fprintf(stderr, "%s: %d sandboxes%s, %d checks: %d pass%s, %d fail, %d n/a%s, %d errors — result %s\n",
               std::string(verdict_word(verdict)).c_str(), sandboxes, refused.c_str(), sum.value("checks", 0),
               sum.value("pass", 0), known_text.c_str(), sum.value("fail", 0), sum.value("na", 0),
               witnessed.c_str(), sum.value("errors", 0), result_path.c_str());
}

RunOutcome report_from_journal(const std::string& journal_path, const std::string& out_dir) {
  nlohmann::json result = result_from_journal(journal_path);
  if (result.value("schema", "") != "isoharness.result/v1")
    throw UserError(journal_path + ": not an isoharness journal (no result header on its first line)");
  if (out_dir.empty()) throw UserError("report: pass --out DIR for the rebuilt result and reports");
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InfraError("report: cannot create " + out_dir + ": " + ec.message());
  if (!result.contains("parity")) result["parity"] = nullptr;
  add_platform_findings(result);
  add_known_risk_findings(result);
  result["summary"] = summarise(result, std::nullopt,
                                "rebuilt from the journal " + journal_path +
                                    " of a run that did not finish: sandboxes it had not reached are missing",
                                false);
  result["summary"]["rebuilt_from_journal"] = journal_path;
  RunOutcome outcome;
  outcome.result_path = write_result(out_dir, result, "; the journal " + journal_path + " is unchanged");
  outcome.reports = reports::write_all(result, out_dir);
  outcome.exit_code = exit_code_of(result);
  print_summary_line(result, outcome.result_path);
  outcome.result = std::move(result);
  return outcome;
}

}  // namespace isoharness::runner
