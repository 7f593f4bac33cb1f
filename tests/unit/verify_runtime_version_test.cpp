// runtime_version from data: Debian version ordering, the shipped escape table of each
// component of the runtime stack (each row, each side of each fix, release candidates,
// distribution backports), malformed and missing tables, runsc's release date, and the
// check's verdicts locally and on a deployment (the profile's node_image): what applies to
// which item (containerd to every item on a deployment, the OCI runtime of its class, the
// toolkit to GPU items), accepted escapes per component, gVisor's age and the tables' age.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "harness/verify/debian_version.h"
#include "harness/verify/runtime_escapes.h"
#include "harness/verify/verify.h"

using namespace isoharness;
using namespace isoharness::verify;
using nlohmann::json;

namespace {

const std::string kTablesDir = std::string(ISOHARNESS_SOURCE_DIR) + "/data/runtime-escapes";

const EscapeTables& rv_tables() {
  static const EscapeTables t = read_escape_tables(kTablesDir);
  return t;
}

const EscapeTable& rv_table(RuntimeComponent c) {
  const auto& t = rv_tables().of(c);
  INFO((t ? std::string() : t.error().message));
  REQUIRE(t);
  return *t;
}

const RuntimeEscape& rv_row(RuntimeComponent c, const std::string& cve) {
  const auto& t = rv_table(c);
  for (const auto& e : t.escapes)
    if (e.cve == cve) return e;
  FAIL("no row for " << cve);
  return t.escapes.front();
}

// The run's time in these tests: the day the shipped tables were reviewed.
std::chrono::system_clock::time_point rv_day(int y, unsigned m, unsigned d) {
  return std::chrono::sys_days{std::chrono::year{y} / std::chrono::month{m} / std::chrono::day{d}};
}
const auto kReviewDay = rv_day(2026, 12, 7);

// Facts as a backend records them in the result, read back the way the result's readers do.
deploy::SandboxFacts facts_of(const json& recorded) {
  return deploy::SandboxFacts::from_json(recorded);
}

struct Item {
  bool gpu = false;
  std::string oci;  // the runtime class's OCI runtime; "" = node default
  int runsc_max_age_days = 365;
  std::chrono::system_clock::time_point now = kReviewDay;
  const EscapeTables* tables = &rv_tables();
};

CheckResult rv_check(const json& recorded, const AcceptedEscapes& accepted = {}, const Item& item = {}) {
  const auto facts = facts_of(recorded);
  RuntimeVersionInput in{facts, accepted};
  in.gpu = item.gpu;
  in.oci_runtime = item.oci;
  in.now = item.now;
  in.runsc_max_age_days = item.runsc_max_age_days;
  in.tables = item.tables;
  return check_runtime_version(in);
}

CheckResult rv_local(const std::string& version_text, const AcceptedEscapes& accepted = {}) {
  return rv_check({{"backend", "local"}, {"runtime", "runc"}, {"runtime_version", version_text}}, accepted);
}

// Each side of a fix: `fixed` versions reach it, `open` ones do not.
void sides(RuntimeComponent c, const std::string& cve, std::initializer_list<const char*> fixed,
           std::initializer_list<const char*> open) {
  const auto& row = rv_row(c, cve);
  const bool branched = c != RuntimeComponent::runsc;
  for (const char* v : fixed) {
    INFO(cve << " at " << v);
    CHECK_FALSE(fixed_by(row, v, branched).empty());
  }
  for (const char* v : open) {
    INFO(cve << " at " << v);
    CHECK(fixed_by(row, v, branched).empty());
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const AcceptedEscapes kBookwormAccepted = {{{"runc", "CVE-2025-31133"}, "test world"},
                                           {{"runc", "CVE-2025-52565"}, "test world"},
                                           {{"runc", "CVE-2025-52881"}, "test world"},
                                           {{"runc", "CVE-2026-41579"}, "test world"}};

}  // namespace

TEST_CASE("Debian versions: epoch, upstream, revision, and ~ before anything", "[verify]") {
  auto lt = [](const char* a, const char* b) {
    return compare_debian_versions(a, b) < 0 && compare_debian_versions(b, a) > 0;
  };
  CHECK(lt("1.3.3~rc1", "1.3.3"));
  CHECK(lt("1.3.3~rc1", "1.3.3~rc2"));
  CHECK(lt("1.3.3~~", "1.3.3~"));
  CHECK(lt("1.0.0~rc7", "1.0.0~rc95"));  // digit runs as numbers
  CHECK(lt("1.1.5", "1.1.12"));
  CHECK(lt("1.1.12", "1.1.12+ds1"));
  CHECK(lt("1.1.12", "1.1.12-1"));
  CHECK(lt("1.1.5+ds1-1", "1.1.5+ds1-1+deb12u1"));
  CHECK(lt("1.1.5+ds1-1+deb12u1", "1.1.5+ds1-1+deb12u2"));
  CHECK(lt("1.1.5+ds1-1+deb12u9", "1.1.5+ds1-1+deb12u10"));
  CHECK(lt("9.9.9", "1:0.1"));  // the epoch first
  CHECK(lt("1.2a", "1.2+"));    // letters before other characters
  CHECK(lt("1.2", "1.2a"));     // the end before a letter
  CHECK(compare_debian_versions("1.01", "1.1") == 0);
  CHECK(compare_debian_versions("0:1.3.3", "1.3.3") == 0);
  CHECK(compare_debian_versions("1.1.99999999999999999999", "1.1.99999999999999999998") > 0);  // no overflow
  CHECK(debian_version_shape("1.1.5+ds1-1+deb12u1"));
  CHECK(debian_version_shape("1:1.3.3~rc1"));
  CHECK_FALSE(debian_version_shape("v1.1.12-0-g51d5e946"));  // upstream's commit line, not a package
  CHECK_FALSE(debian_version_shape(""));
  CHECK_FALSE(debian_version_shape("1.2 3"));
  CHECK(upstream_as_debian("v1.5.0-rc.3") == "1.5.0~rc.3");
  CHECK(upstream_as_debian("1.3.3-rc.1") == "1.3.3~rc.1");
}

TEST_CASE("escape tables: every shipped table reads, is reviewed, and cites a source per row", "[verify]") {
  for (auto c : kRuntimeComponents) {
    const auto& t = rv_table(c);
    INFO(component_name(c));
    CHECK(t.component == c);
    CHECK(t.reviewed == "2026-12-07");
    CHECK(t.source == kTablesDir + "/" + std::string(component_name(c)) + ".txt");
    for (const auto& e : t.escapes) {
      INFO(e.cve);
      CHECK_FALSE(e.source.empty());
      CHECK_FALSE(e.what.empty());
    }
  }
  CHECK(rv_table(RuntimeComponent::runc).escapes.size() == 7);
  CHECK(rv_table(RuntimeComponent::containerd).escapes.size() == 3);
  CHECK(rv_table(RuntimeComponent::crun).escapes.size() == 2);
  CHECK(rv_table(RuntimeComponent::runsc).escapes.empty());
  CHECK(rv_table(RuntimeComponent::nvidia_container_toolkit).escapes.size() == 3);
  // containerd's root mappings show from inside as the uid the sandbox runs as.
  CHECK(rv_row(RuntimeComponent::containerd, "CVE-2026-46680").seen_by == "uid");
  // Entries whose versions were not checked against the project's own words say so.
  CHECK_THAT(rv_row(RuntimeComponent::crun, "CVE-2026-47766").source,
             Catch::Contains("source not found here"));
  CHECK_THAT(rv_row(RuntimeComponent::nvidia_container_toolkit, "CVE-2025-23359").source,
             Catch::Contains("source not found here"));
  // The shipped lookup finds the folder from this build tree.
  CHECK(shipped_escape_tables().of(RuntimeComponent::containerd));
  CHECK(component_named("nvidia-container-toolkit") == RuntimeComponent::nvidia_container_toolkit);
  CHECK_FALSE(component_named("docker"));
}

TEST_CASE("runc table: each side of each fix, release candidates, Debian's backport", "[verify]") {
  using C = RuntimeComponent;
  sides(C::runc, "CVE-2019-5736", {"1.0.0~rc7", "1.1.0"}, {"1.0.0~rc6"});
  sides(C::runc, "CVE-2021-30465", {"1.0.0~rc95", "1.0.0"}, {"1.0.0~rc94"});
  sides(C::runc, "CVE-2024-21626", {"1.1.12", "1.2.0~rc.1"}, {"1.1.11"});
  for (const char* cve : {"CVE-2025-31133", "CVE-2025-52565", "CVE-2025-52881"})
    sides(C::runc, cve, {"1.2.8", "1.3.3", "1.4.0~rc.3", "1.4.0", "1.5.0"},
          {"1.2.7", "1.3.2", "1.3.3~rc1", "1.1.15", "1.4.0~rc.2"});
  sides(C::runc, "CVE-2026-41579", {"1.3.6", "1.4.3", "1.5.0~rc.3", "1.5.0", "1.6.0"},
        {"1.3.5", "1.4.2", "1.5.0~rc.2", "1.2.8", "1.1.15"});
  const auto& leaky = rv_row(C::runc, "CVE-2024-21626");
  REQUIRE(carried_by(leaky, "1.1.5+ds1-1+deb12u1"));
  CHECK(carried_by(leaky, "1.1.5+ds1-1+deb12u1")->where == "debian/bookworm");
  CHECK(carried_by(leaky, "1.1.5+ds1-1+deb12u3"));        // a later revision of the same package
  CHECK_FALSE(carried_by(leaky, "1.1.5+ds1-1"));          // before the fix
  CHECK_FALSE(carried_by(leaky, "1.1.4+ds1-1+deb12u5"));  // another upstream: not this package line
  CHECK_FALSE(carried_by(rv_row(C::runc, "CVE-2026-41579"), "1.1.5+ds1-1+deb12u1"));
}

TEST_CASE("containerd table: each side of each fix on every branch, release candidates", "[verify]") {
  using C = RuntimeComponent;
  sides(C::containerd, "CVE-2024-40635", {"1.6.38", "1.7.27", "2.0.4", "2.1.0", "2.3.2"},
        {"1.6.37", "1.7.26", "2.0.3", "2.0.4~rc.1", "1.5.18"});
  sides(C::containerd, "CVE-2026-46680", {"1.7.32", "2.0.9", "2.1.8", "2.2.4", "2.3.1", "2.4.0~rc.1"},
        {"1.7.31", "2.0.8", "2.1.7", "2.2.3", "2.3.0", "2.3.1~rc.1", "1.6.38"});
  sides(C::containerd, "CVE-2026-53488", {"1.7.33", "2.0.10", "2.1.9", "2.2.5", "2.3.2"},
        {"1.7.32", "2.0.9", "2.1.8", "2.2.4", "2.3.1", "2.3.2~rc.0"});
}

TEST_CASE("crun and NVIDIA toolkit tables: each side of each fix", "[verify]") {
  using C = RuntimeComponent;
  sides(C::crun, "CVE-2026-30892", {"1.27", "1.27.1", "1.30"}, {"1.26", "1.27~rc1", "1.19"});
  sides(C::crun, "CVE-2026-47766", {"1.28", "1.28.1", "1.30.1"}, {"1.27", "1.27.5", "1.28~rc1"});
  sides(C::nvidia_container_toolkit, "CVE-2024-0132", {"1.16.2", "1.17.0", "1.18.2"}, {"1.16.1", "1.15.9"});
  sides(C::nvidia_container_toolkit, "CVE-2025-23359", {"1.17.4", "1.18.0"}, {"1.17.3", "1.16.2"});
  sides(C::nvidia_container_toolkit, "CVE-2025-23266", {"1.17.8", "1.18.0"},
        {"1.17.7", "1.17.8~rc.1", "1.16.2"});
}

TEST_CASE("an operator's tables: backports of another component, runsc's dated releases", "[verify]") {
  const auto own =
      parse_escape_table(RuntimeComponent::containerd,
                         "reviewed: 2026-11-30\n"
                         "CVE-2026-46680 | x | 1.7.32, 2.0.9 | debian/trixie=1.7.24~ds1-6+deb13u2 |\n",
                         "own/containerd.txt");
  REQUIRE(own);
  const auto& row = own->escapes.front();
  CHECK(fixed_by(row, "1.7.24~ds1").empty());
  CHECK(carried_by(row, "1.7.24~ds1-6+deb13u2"));
  CHECK(carried_by(row, "1.7.24~ds1-6+deb13u3"));
  CHECK_FALSE(carried_by(row, "1.7.24~ds1-6+deb13u1"));
  // runsc: no branches, versions compare as YYYYMMDD.N.
  const auto runsc = parse_escape_table(RuntimeComponent::runsc,
                                        "reviewed: 2026-11-30\nCVE-2099-00001 | y | 20240513.0 |\n", "r");
  REQUIRE(runsc);
  CHECK(fixed_by(runsc->escapes.front(), "20240513.0", false) == "20240513.0");
  CHECK(fixed_by(runsc->escapes.front(), "20250101.0", false) == "20240513.0");
  CHECK(fixed_by(runsc->escapes.front(), "20221219.0", false).empty());
}

TEST_CASE("escape tables: a bad table is a clear error naming its file and line", "[verify]") {
  using C = RuntimeComponent;
  const auto bad =
      parse_escape_table(C::runc,
                         "reviewed: 2026-12-07\n"
                         "CVE-2024-21626 | x | 1.1.12\nCVE-1 | y | 1.0 |\nCVE-2024-00001 | z | one |\n"
                         "CVE-2024-00002 | w | 1.1.1 | debian-bookworm\n"
                         "CVE-2024-00003 | w | 1.1.1 | | src | not a check\n"
                         "what is this\n",
                         "t/runc.txt");
  REQUIRE_FALSE(bad);
  for (const char* at :
       {"t/runc.txt:2:", "t/runc.txt:3:", "t/runc.txt:4:", "t/runc.txt:5:", "t/runc.txt:6:", "t/runc.txt:7:"})
    CHECK_THAT(bad.error().message, Catch::Contains(at));
  CHECK_THAT(parse_escape_table(C::runc, "CVE-2024-21626 | x | 1.1.12 |\n", "a").error().message,
             Catch::Contains("no reviewed:"));
  CHECK_THAT(parse_escape_table(C::runc, "reviewed: 2026-02-30\n", "a").error().message,
             Catch::Contains("a:1: reviewed: needs a date"));
  CHECK_THAT(parse_escape_table(C::crun, "component: runc\nreviewed: 2026-12-01\nescapes: none\n", "a")
                 .error()
                 .message,
             Catch::Contains("this is the crun table"));
  CHECK_THAT(parse_escape_table(C::runc, "# only comments\nreviewed: 2026-12-01\n", "a").error().message,
             Catch::Contains("lists no escape"));
  CHECK(parse_escape_table(C::runsc, "reviewed: 2026-12-01\nescapes: none\n", "a"));
  // A folder without the tables: every component's error names the file it looked for.
  const auto missing = read_escape_tables("/nonexistent-h46");
  for (auto c : kRuntimeComponents) {
    REQUIRE_FALSE(missing.of(c));
    CHECK_THAT(missing.of(c).error().message, Catch::Contains("/nonexistent-h46/"));
  }
}

TEST_CASE("runsc's release date from its version string", "[verify]") {
  const auto debian = runsc_release_of("0.0~20221219.0");
  REQUIRE(debian);
  CHECK(debian->date == "2022-12-19");
  CHECK(debian->version == "20221219.0");
  const auto upstream = runsc_release_of("release-20240513.0");
  REQUIRE(upstream);
  CHECK(upstream->date == "2024-05-13");
  CHECK(upstream->day - debian->day == 511);
  CHECK(runsc_release_of("0.0~20221219.0-3+deb12u1"));
  CHECK(runsc_release_of("20240513.0"));
  CHECK_FALSE(runsc_release_of("release-2024"));
  CHECK_FALSE(runsc_release_of("0.0~20221319.0"));  // no 13th month
  CHECK_FALSE(runsc_release_of("0.0"));
  CHECK_FALSE(runsc_release_of("latest"));
  CHECK(day_of_date("1970-01-01") == 0);
  CHECK(day_of_date("2024-02-29"));
  CHECK_FALSE(day_of_date("2023-02-29"));
}

TEST_CASE("runtime_version locally: runc's text judged, each CVE named; open or unknown versions fail",
          "[verify]") {
  const auto current = rv_local("runc version 1.3.6\ncommit: v1.3.6-0-gd842d771\nspec: 1.2.1");
  CHECK(current.status == CheckStatus::pass);
  for (const char* cve : {"CVE-2019-5736", "CVE-2021-30465", "CVE-2024-21626", "CVE-2025-31133",
                          "CVE-2025-52565", "CVE-2025-52881", "CVE-2026-41579"})
    CHECK_THAT(current.reason, Catch::Contains(cve));
  CHECK_THAT(current.reason, Catch::Contains("runc: CVE-2019-5736") &&
                                 Catch::Contains("CVE-2026-41579 (fixed in 1.3.6)") &&
                                 Catch::Contains("containerd: not in this stack"));
  const auto older = rv_local("runc version 1.3.3");
  CHECK(older.status == CheckStatus::fail);
  CHECK_THAT(older.reason, Catch::Contains("runc CVE-2026-41579") && !Catch::Contains("runc CVE-2025-31133"));
  const auto rc = rv_local("runc version 1.5.0-rc.3");  // runc's own spelling of a candidate
  CHECK(rc.status == CheckStatus::pass);
  CHECK(rv_local("runc version 1.5.0-rc.2").status == CheckStatus::fail);
  const auto rc6 = rv_local("runc version 1.0.0-rc6");
  CHECK_THAT(rc6.reason, Catch::Contains("CVE-2019-5736") && Catch::Contains("CVE-2021-30465"));
  // Debian's build: its package carries the fix of one CVE, the others stay open until accepted.
  const auto bookworm = rv_local("runc version 1.1.5+ds1; commit: 1.1.5+ds1-1+deb12u1; spec: 1.0.2-dev");
  CHECK(bookworm.status == CheckStatus::fail);
  CHECK_THAT(bookworm.reason, !Catch::Contains("cannot read") && !Catch::Contains("runc CVE-2024-21626") &&
                                  Catch::Contains("runc CVE-2025-31133") &&
                                  Catch::Contains("runc CVE-2026-41579"));
  const auto accepted = rv_local("runc version 1.1.5+ds1; commit: 1.1.5+ds1-1+deb12u1", kBookwormAccepted);
  CHECK(accepted.status == CheckStatus::pass);
  CHECK_THAT(accepted.reason,
             Catch::StartsWith("known risk: open to runc CVE-2025-31133") &&
                 Catch::Contains("CVE-2026-41579") &&
                 Catch::Contains("accepted by the deployment profile: test world") &&
                 Catch::Contains("debian/bookworm package 1.1.5+ds1-1+deb12u1 carries the fix"));
  // Accepted under another component: not this one's.
  AcceptedEscapes elsewhere = kBookwormAccepted;
  elsewhere.erase({"runc", "CVE-2026-41579"});
  elsewhere[{"crun", "CVE-2026-41579"}] = "wrong component";
  const auto partial = rv_local("runc version 1.1.5+ds1; commit: 1.1.5+ds1-1+deb12u1", elsewhere);
  CHECK(partial.status == CheckStatus::fail);
  CHECK_THAT(partial.reason, Catch::Contains("CVE-2026-41579 (") &&
                                 Catch::Contains("known risk: open to runc CVE-2025-31133"));
  // Unknown versions fail, never pass.
  CHECK(rv_local("something else").status == CheckStatus::fail);
  CHECK(rv_local("runc version").status == CheckStatus::fail);
  CHECK_THAT(rv_local("unknown").reason, Catch::Contains("cannot read a runc version"));
  // No tables: cannot judge, so it fails.
  const EscapeTables none = read_escape_tables("/nonexistent-h46");
  Item no_tables;
  no_tables.tables = &none;
  const auto no_table = rv_check(
      {{"backend", "local"}, {"runtime", "runc"}, {"runtime_version", "runc version 1.3.6"}}, {}, no_tables);
  CHECK(no_table.status == CheckStatus::fail);
  CHECK_THAT(no_table.reason,
             Catch::Contains("cannot judge") && Catch::Contains("/nonexistent-h46/runc.txt"));
}

TEST_CASE("runtime_version on a gVisor item: runsc's table and release date, never runc's escapes",
          "[verify]") {
  const json local_gvisor = {
      {"backend", "local"}, {"runtime", "runsc"}, {"runtime_version", "runsc version 0.0~20221219.0"}};
  Item gvisor;
  gvisor.oci = "runsc";
  const auto old = rv_check(local_gvisor, {}, gvisor);
  CHECK(old.status == CheckStatus::pass);
  CHECK_THAT(old.reason,
             Catch::StartsWith("known risk: runsc released 2022-12-19 (1449 days before this run)") &&
                 Catch::Contains("runsc_max_age_days (365)") &&
                 Catch::Contains("runc's and crun's escapes do not apply") && !Catch::Contains("CVE-"));
  gvisor.runsc_max_age_days = 2000;
  const auto young = rv_check(local_gvisor, {}, gvisor);
  CHECK(young.status == CheckStatus::pass);
  CHECK_THAT(young.reason, Catch::StartsWith("checked runsc") &&
                               Catch::Contains("runsc released 2022-12-19") &&
                               !Catch::Contains("known risk"));
  // A gVisor item is never judged by runc's table, even with a runc on the node.
  const auto upstream = rv_check(
      {{"backend", "local"}, {"runtime", "runsc"}, {"runtime_version", "runsc version release-20261201.0"}},
      {}, Item{false, "runsc"});
  CHECK(upstream.status == CheckStatus::pass);
  CHECK_THAT(upstream.reason, Catch::Contains("runsc released 2026-12-01 (6 days before this run)"));
  const auto unreadable =
      rv_check({{"backend", "local"}, {"runtime", "runsc"}, {"runtime_version", "runsc version 0.0"}}, {},
               Item{false, "runsc"});
  CHECK(unreadable.status == CheckStatus::fail);
  CHECK_THAT(unreadable.reason, Catch::Contains("cannot read a runsc version from '0.0'"));
}

TEST_CASE("runtime_version on a deployment: runc 1.3.5, containerd 1.7.31 and toolkit 1.17.7 declared",
          "[verify]") {
  json hawk = {{"backend", "hawk"}, {"eval_set_id", "x"}};
  const auto unknown = rv_check(hawk);
  CHECK(unknown.status == CheckStatus::na);
  CHECK_THAT(unknown.reason, Catch::Contains("containerd: not observable from inside the sandbox") &&
                                 Catch::Contains("runc: not observable from inside the sandbox"));
  hawk["node_image"] = {{"name", "eks-al2023-1.31"},
                        {"runc_version", "1.3.5"},
                        {"containerd_version", "1.7.31"},
                        {"nvidia_container_toolkit_version", "1.17.7"}};
  const Item gpu{true, ""};
  const Item gvisor{false, "runsc"};
  const auto gpu_item = rv_check(hawk, {}, gpu);
  CHECK(gpu_item.status == CheckStatus::fail);
  CHECK_THAT(gpu_item.reason,
             Catch::Contains("runc CVE-2026-41579") && Catch::Contains("containerd CVE-2026-46680") &&
                 Catch::Contains("containerd CVE-2026-53488") &&
                 Catch::Contains("nvidia-container-toolkit CVE-2025-23266") &&
                 !Catch::Contains("CVE-2024-40635 (a User") && Catch::Contains("seen from inside by uid"));
  CHECK_THAT(gpu_item.observed, Catch::Contains("eks-al2023-1.31") && Catch::Contains("containerd 1.7.31"));
  const auto gvisor_item = rv_check(hawk, {}, gvisor);
  CHECK(gvisor_item.status == CheckStatus::fail);
  CHECK_THAT(gvisor_item.reason,
             Catch::Contains("containerd CVE-2026-46680") && Catch::Contains("containerd CVE-2026-53488") &&
                 !Catch::Contains("CVE-2026-41579") && !Catch::Contains("CVE-2025-23266") &&
                 Catch::Contains("runsc: not declared (node_image.runsc_version of eks-al2023-1.31)"));
  // A non-GPU item on the node's default runtime: no toolkit.
  CHECK_THAT(rv_check(hawk).reason,
             !Catch::Contains("CVE-2025-23266") && Catch::Contains("runc CVE-2026-41579"));
  // Each accepted by name: both pass, showing every accepted risk.
  const AcceptedEscapes accepted = {{{"runc", "CVE-2026-41579"}, "r1"},
                                    {{"containerd", "CVE-2026-46680"}, "r2"},
                                    {{"containerd", "CVE-2026-53488"}, "r3"},
                                    {{"nvidia-container-toolkit", "CVE-2025-23266"}, "r4"}};
  const auto gpu_ok = rv_check(hawk, accepted, gpu);
  CHECK(gpu_ok.status == CheckStatus::pass);
  CHECK_THAT(gpu_ok.reason,
             Catch::StartsWith("known risk: open to ") && Catch::Contains("runc CVE-2026-41579 (") &&
                 Catch::Contains("profile: r1") && Catch::Contains("containerd CVE-2026-46680 (") &&
                 Catch::Contains("profile: r2") && Catch::Contains("containerd CVE-2026-53488 (") &&
                 Catch::Contains("profile: r3") &&
                 Catch::Contains("nvidia-container-toolkit CVE-2025-23266 (") &&
                 Catch::Contains("profile: r4") && Catch::Contains("CVE-2024-40635 (fixed in 1.7.27)") &&
                 Catch::Contains("CVE-2025-23359 (fixed in 1.17.4)"));
  const auto gvisor_ok = rv_check(hawk, accepted, gvisor);
  CHECK(gvisor_ok.status == CheckStatus::pass);
  CHECK_THAT(gvisor_ok.reason, Catch::Contains("profile: r2") && Catch::Contains("profile: r3") &&
                                   !Catch::Contains("profile: r1") && !Catch::Contains("profile: r4") &&
                                   Catch::Contains("runsc: not declared"));
  // A version given but unreadable fails.
  hawk["node_image"]["containerd_version"] = "latest";
  const auto odd = rv_check(hawk, accepted, gpu);
  CHECK(odd.status == CheckStatus::fail);
  CHECK_THAT(odd.reason, Catch::Contains("cannot read a containerd version from 'latest'"));
  // containerd's own spelling (v1.7.33) and a declared runsc with its date.
  hawk["node_image"] = {{"name", "n"},
                        {"runc_version", "1.4.3"},
                        {"containerd_version", "v1.7.33"},
                        {"runsc_version", "release-20261101.0"}};
  const auto fixed = rv_check(hawk, {}, gvisor);
  CHECK(fixed.status == CheckStatus::pass);
  CHECK_THAT(fixed.reason, Catch::StartsWith("checked containerd: CVE-2024-40635") &&
                               Catch::Contains("runsc released 2026-11-01 (36 days before this run)"));
  // A node whose default runtime is crun.
  hawk["node_image"] = {{"name", "n"}, {"crun_version", "1.27"}, {"containerd_version", "2.3.2"}};
  const auto crun = rv_check(hawk);
  CHECK(crun.status == CheckStatus::fail);
  CHECK_THAT(crun.reason, Catch::Contains("crun CVE-2026-47766") && !Catch::Contains("crun CVE-2026-30892") &&
                              !Catch::Contains("runc:"));
}

TEST_CASE("runtime_version: a table reviewed long before the run is named, not failed", "[verify]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("h46-tables-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (auto c : kRuntimeComponents) {
    const std::string name(component_name(c));
    std::string text = read_text(kTablesDir + "/" + name + ".txt");
    if (c == RuntimeComponent::runc)
      text.replace(text.find("reviewed: 2026-12-07"), 20, "reviewed: 2026-01-02");
    std::ofstream(dir / (name + ".txt")) << text;
  }
  const EscapeTables own = read_escape_tables(dir.string());
  Item item;
  item.tables = &own;
  const auto r = rv_check(
      {{"backend", "local"}, {"runtime", "runc"}, {"runtime_version", "runc version 1.3.6"}}, {}, item);
  CHECK(r.status == CheckStatus::pass);
  CHECK_THAT(r.reason, Catch::Contains("the runc escape table " + (dir / "runc.txt").string() +
                                       " was last reviewed 2026-01-02, 339 days ago (more than 180)"));
  item.now = rv_day(2026, 6, 1);  // within 180 days of the review
  CHECK_THAT(rv_check({{"backend", "local"}, {"runtime", "runc"}, {"runtime_version", "runc version 1.3.6"}},
                      {}, item)
                 .reason,
             !Catch::Contains("last reviewed"));
  fs::remove_all(dir);
}
