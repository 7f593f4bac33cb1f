#include "tests/unit/baselines_fixture.h"

#include <cstdio>

#include "harness/history/history.h"
#include "harness/parity/parity.h"
#include "tests/support/test_support.h"

namespace isoharness::test {

std::string baseline_night_id(int night) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "b%02d", night);
  return buf;
}

std::string baseline_night_started(int night) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "2026-06-%02dT02:00:00Z", 1 + night);
  return buf;
}

nlohmann::json baseline_night(int night) {
  const auto in =
      nlohmann::json::parse(read_text(source_dir() + "/tests/fixtures/reports/parity_samples.json"));
  auto result = nlohmann::json::parse(read_text(source_dir() + "/tests/fixtures/reports/result.json"));
  parity::SectionInput input;
  input.scenario = "parity";
  input.baseline = in.at("baseline");
  input.tolerance = 1.25;
  input.weights = in.at("weights").get<std::map<std::string, double>>();
  input.samples = in.at("samples").get<parity::Samples>();
  const bool upgraded = night >= kUpgradeNight;
  if (upgraded)
    for (const char* cell : {"gvisor/tier", "gvisor/non-tier"})
      for (auto& [workload, times] : input.samples[cell])
        for (double& t : times) t *= kUpgradeSlowdown;
  result["parity"] = parity::analyse(input);
  result["run"]["id"] = baseline_night_id(night);
  result["context"]["started"] = baseline_night_started(night);
  result["context"]["runsc"] = upgraded ? "release-20260612.0" : "release-20260301.0";
  result["summary"]["verdict"] = "pass";
  return result;
}

void make_baselines_history(const std::string& path) {
  history::Database db(path);
  for (int n = 0; n < kNights; ++n) db.record(baseline_night(n));
  db.annotate(baseline_night_id(kUpgradeNight), kUpgradeNote);
}

nlohmann::json deployment_night(bool platform, int night) {
  const auto in =
      nlohmann::json::parse(read_text(source_dir() + "/tests/fixtures/reports/parity_samples.json"));
  auto result = nlohmann::json::parse(read_text(source_dir() + "/tests/fixtures/reports/result.json"));
  parity::SectionInput input;
  input.scenario = "parity";
  input.baseline = "runc/tier";
  input.tolerance = 1.25;
  input.weights = in.at("weights").get<std::map<std::string, double>>();
  const auto all = in.at("samples").get<parity::Samples>();
  input.samples["runc/tier"] = all.at("runc/tier");
  // gvisor/tier: the baseline's times at the deployment's ratio, a little noise per sample
  // (+-1 %) and per night (+-0.5 %).
  const double ratio = (platform ? kPlatformRatio : kLocalBoxRatio) * (1 + 0.005 * (night % 3 - 1));
  for (const auto& [workload, times] : all.at("runc/tier")) {
    auto& out = input.samples["gvisor/tier"][workload];
    for (std::size_t k = 0; k < times.size(); ++k)
      out.push_back(times[k] * ratio * (1 + 0.01 * (static_cast<int>(k % 3) - 1)));
  }
  result["parity"] = parity::analyse(input);
  char id[8], started[32];
  std::snprintf(id, sizeof id, "%c%02d", platform ? 'p' : 'l', night);
  std::snprintf(started, sizeof started, "2026-05-%02dT02:00:00Z", platform ? 1 + night : 10 + night);
  result["run"]["id"] = id;
  result["context"]["started"] = started;
  result["context"]["backend"] = platform ? "hawk" : "local";
  if (platform) {
    nlohmann::json host = nlohmann::json::object();
    for (const char* k : {"runc", "runsc", "runsc_platform", "runsc_network", "kernel"}) {
      host[k] = result["context"].value(k, nlohmann::json());
      result["context"][k] = nullptr;
    }
    result["context"]["harness_host"] = host;
  }
  result["parity"]["provenance"] = {{"backend", platform ? "hawk" : "local"},
                                    {"deployment", platform ? "staging" : "local-2core"},
                                    {"runtime", nlohmann::json::object()}};
  result["summary"]["verdict"] = "pass";
  return result;
}

void make_two_deployment_history(const std::string& path) {
  history::Database db(path);
  for (int n = 0; n < kPlatformNights; ++n) db.record(deployment_night(true, n));
  for (int n = 0; n < kLocalBoxNights; ++n) db.record(deployment_night(false, n));
}

std::string baselines_csv() {
  return "task,item,human,duration_s,recorded_at,runtime,node_class,mix,notes\n"
         "swe,fix_bug,alice,5400,2026-05-20,runc,tier,,before the series\n"
         "swe,add_test,bob,3600,2026-06-02T10:00:00Z,runc,tier,,\n"
         "swe,refactor,carol,7200,2026-06-04,runc,tier,compile_heavy,\n"
         "swe,port,dan,1800.5,2026-06-10T08:30:00+02:00,runc,tier,,after the upgrade\n"
         "swe,bisect,erin,2400,2026-06-11,runc,tier,interactive,\n"
         "ops,rotate_keys,alice,900,2026-06-02,runc,non-tier,,\n"
         "ops,patch_host,bob,1500,2026-06-05,runc,non-tier,default,\n"
         "ops,audit_logs,carol,2700,2026-06-09,runc,non-tier,interactive,\n"
         "ops,tune_db,dan,3300,2026-06-11,runc,non-tier,compile_heavy,\n"
         "ctf,pwn_1,erin,4200,2026-06-02,gvisor,tier,,\n"
         "ctf,pwn_2,alice,3900,2026-06-05T23:00:00Z,gvisor,tier,,\n"
         "ctf,web_1,bob,2100,2026-06-03,gvisor,tier,interactive,\n"
         "ctf,web_2,carol,2500,2026-06-08,gvisor,tier,,after the upgrade\n"
         "ctf,rev_1,dan,6000,2026-06-10,gvisor,tier,compile_heavy,after the upgrade\n"
         "ctf,crypto_1,erin,3000,2026-06-12,gvisor,tier,,\n"
         "ml,train_small,alice,8000,2026-06-01T12:00:00Z,gvisor,non-tier,,\n"
         "ml,eval_run,bob,4000,2026-06-04,gvisor,non-tier,compile_heavy,\n"
         "ml,tune_lr,carol,5000,2026-06-09,gvisor,non-tier,,\n"
         "ml,data_prep,dan,1200,2026-06-11,gvisor,non-tier,interactive,\n"
         "swe,fix_gpu,erin,3000,2026-06-03,runc,gpu,,no parity run times this cell\n"
         "swe,doc_pass,alice,600,2026-06-06,runc,tier,,\n"
         "ops,failover,bob,2000,2026-06-07,runc,non-tier,,\n"
         "ctf,misc_1,carol,1700,2026-06-06,gvisor,tier,,the upgrade's own night\n"
         "ctf,misc_2,dan,1900,2026-06-07,gvisor,tier,,\n";
}

}  // namespace isoharness::test
