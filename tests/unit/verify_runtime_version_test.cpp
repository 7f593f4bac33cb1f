// runtime_version from data: Debian version ordering, the shipped table of runc escapes
// (each row), backports by package version, and the check's verdicts locally and on a
// deployment (the profile's node_image).
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "harness/verify/debian_version.h"
#include "harness/verify/runc_escapes.h"
#include "harness/verify/verify.h"

using namespace isoharness;
using namespace isoharness::verify;
using nlohmann::json;

namespace {

Expected<RuncEscapeTable> rv_table() {
  std::ifstream in(std::string(ISOHARNESS_SOURCE_DIR) + "/data/runc-escapes.txt");
  std::stringstream s;
  s << in.rdbuf();
  return parse_runc_escapes(s.str());
}

const RuncEscape& rv_row(const RuncEscapeTable& t, const std::string& cve) {
  for (const auto& e : t.escapes)
    if (e.cve == cve) return e;
  FAIL("no row for " << cve);
  return t.escapes.front();
}

// Facts as a backend records them in the result, read back the way the result's readers do.
deploy::SandboxFacts facts_of(const json& recorded) {
  return deploy::SandboxFacts::from_json(recorded);
}

CheckResult rv_local(const std::string& version_text) {
  static const auto table = rv_table();
  return check_runtime_version(facts_of({{"runtime", "runc"}, {"runtime_version", version_text}}), table);
}

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
}

TEST_CASE("runc escape table: the shipped file's rows, and malformed tables refused", "[verify]") {
  const auto t = rv_table();
  REQUIRE(t);
  REQUIRE(t->escapes.size() == 6);
  CHECK(rv_row(*t, "CVE-2019-5736").fixed == std::vector<std::string>{"1.0.0~rc7"});
  CHECK(rv_row(*t, "CVE-2021-30465").fixed == std::vector<std::string>{"1.0.0~rc95"});
  CHECK(rv_row(*t, "CVE-2024-21626").fixed == std::vector<std::string>{"1.1.12"});
  for (const char* cve : {"CVE-2025-31133", "CVE-2025-52565", "CVE-2025-52881"}) {
    const auto& r = rv_row(*t, cve);
    CHECK(fixed_by(r, "1.2.8") == "1.2.8");
    CHECK(fixed_by(r, "1.3.3") == "1.3.3");
    CHECK(fixed_by(r, "1.2.7").empty());
    CHECK(fixed_by(r, "1.3.2").empty());
    CHECK(fixed_by(r, "1.3.3~rc1").empty());  // a candidate of the fixed release is not it
    CHECK(fixed_by(r, "1.1.15").empty());     // an older branch with no fix listed
    CHECK(fixed_by(r, "1.4.0~rc.2").empty());
    CHECK(fixed_by(r, "1.4.0") == "1.4.0~rc.3");
    CHECK(fixed_by(r, "1.5.0") == "1.4.0~rc.3");  // a later branch than every listed one
  }
  const auto& leaky = rv_row(*t, "CVE-2024-21626");
  CHECK(fixed_by(leaky, "1.1.11").empty());
  CHECK(fixed_by(leaky, "1.2.0~rc.1") == "1.1.12");
  REQUIRE(carried_by(leaky, "1.1.5+ds1-1+deb12u1"));
  CHECK(carried_by(leaky, "1.1.5+ds1-1+deb12u1")->where == "debian/bookworm");
  CHECK(carried_by(leaky, "1.1.5+ds1-1+deb12u3"));        // a later revision of the same package
  CHECK_FALSE(carried_by(leaky, "1.1.5+ds1-1"));          // before the fix
  CHECK_FALSE(carried_by(leaky, "1.1.4+ds1-1+deb12u5"));  // another upstream: not this package line
  CHECK_FALSE(parse_runc_escapes("# only comments\n"));
  const auto bad = parse_runc_escapes(
      "CVE-2024-21626 | x | 1.1.12\nCVE-1 | y | 1.0 |\nCVE-2024-00001 | z | one |\n"
      "CVE-2024-00002 | w | 1.1.1 | debian-bookworm\n");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("line 1") && Catch::Contains("line 2") &&
                                      Catch::Contains("line 3") && Catch::Contains("line 4"));
}

TEST_CASE("runtime_version: a pass names each CVE it checked; open or unknown versions fail", "[verify]") {
  const auto current = rv_local("runc version 1.3.3\ncommit: v1.3.3-0-gd842d771\nspec: 1.2.1");
  CHECK(current.status == CheckStatus::pass);
  for (const char* cve : {"CVE-2019-5736", "CVE-2021-30465", "CVE-2024-21626", "CVE-2025-31133",
                          "CVE-2025-52565", "CVE-2025-52881"})
    CHECK_THAT(current.reason, Catch::Contains(cve));
  CHECK_THAT(current.reason, Catch::Contains("CVE-2025-52881 (fixed in 1.3.3)"));
  CHECK(rv_local("runc version 1.2.8").status == CheckStatus::pass);
  const auto leaky = rv_local("runc version 1.1.12");
  CHECK(leaky.status == CheckStatus::fail);
  CHECK_THAT(leaky.reason, Catch::Contains("CVE-2025-31133") && !Catch::Contains("CVE-2024-21626"));
  const auto rc = rv_local("runc version 1.3.3-rc.1");  // runc's own spelling of a candidate
  CHECK(rc.status == CheckStatus::fail);
  CHECK_THAT(rc.reason, Catch::Contains("CVE-2025-52565"));
  const auto rc6 = rv_local("runc version 1.0.0-rc6");
  CHECK_THAT(rc6.reason, Catch::Contains("CVE-2019-5736") && Catch::Contains("CVE-2021-30465"));
  CHECK_THAT(rv_local("runc version 1.0.0-rc7").reason, !Catch::Contains("CVE-2019-5736 ("));
  // Debian's build: the package named on the commit line carries the fix of one CVE, the
  // others stay open (this is bookworm's runc).
  const auto bookworm = rv_local("runc version 1.1.5+ds1\ncommit: 1.1.5+ds1-1+deb12u1\n");
  CHECK(bookworm.status == CheckStatus::fail);
  CHECK_THAT(bookworm.reason, !Catch::Contains("CVE-2024-21626") && Catch::Contains("CVE-2025-31133"));
  // The local backend reports runc --version's lines joined by "; ".
  const auto joined = rv_local("runc version 1.1.5+ds1; commit: 1.1.5+ds1-1+deb12u1; spec: 1.0.2-dev");
  CHECK(joined.status == CheckStatus::fail);
  CHECK_THAT(joined.reason, !Catch::Contains("cannot read") && !Catch::Contains("CVE-2024-21626") &&
                                Catch::Contains("CVE-2025-31133"));
  CHECK_THAT(rv_local("runc version 1.1.5+ds1\ncommit: 1.1.5+ds1-1\n").reason,
             Catch::Contains("CVE-2024-21626"));
  // Unknown versions fail, never pass.
  CHECK(rv_local("something else").status == CheckStatus::fail);
  CHECK(rv_local("runc version").status == CheckStatus::fail);
  CHECK(rv_local("runc version v1.3.3").status == CheckStatus::fail);
  CHECK(check_runtime_version(facts_of({{"runtime", "runsc"}, {"runtime_version", "runsc version 0.0"}}),
                              rv_table())
            .status == CheckStatus::na);
  // No table: cannot judge, so it fails.
  const auto no_table =
      check_runtime_version(facts_of({{"runtime", "runc"}, {"runtime_version", "runc version 1.3.3"}}),
                            Expected<RuncEscapeTable>(Error{"not found: here"}));
  CHECK(no_table.status == CheckStatus::fail);
  CHECK_THAT(no_table.reason, Catch::Contains("cannot judge") && Catch::Contains("not found: here"));
}

TEST_CASE("runtime_version on a deployment: the profile's node image, or n/a", "[verify]") {
  const auto table = rv_table();
  json hawk = {{"backend", "hawk"}, {"eval_set_id", "x"}};
  const auto unknown = check_runtime_version(facts_of(hawk), table);
  CHECK(unknown.status == CheckStatus::na);
  CHECK_THAT(unknown.reason, Catch::Contains("not observable from inside the sandbox"));
  hawk["node_image"] = {{"name", "eks-al2023-1.31"}, {"runc_version", "1.2.8"}, {"runc_package", ""}};
  const auto declared = check_runtime_version(facts_of(hawk), table);
  CHECK(declared.status == CheckStatus::pass);
  CHECK_THAT(declared.observed, Catch::Contains("eks-al2023-1.31") && Catch::Contains("1.2.8"));
  hawk["node_image"] = {
      {"name", "old"}, {"runc_version", "1.1.5+ds1"}, {"runc_package", "1.1.5+ds1-1+deb12u1"}};
  CHECK(check_runtime_version(facts_of(hawk), table).status == CheckStatus::fail);
  hawk["node_image"] = {{"name", "odd"}, {"runc_version", "latest"}};
  CHECK(check_runtime_version(facts_of(hawk), table).status == CheckStatus::fail);
  // The shipped lookup finds the table from this build tree.
  CHECK(shipped_runc_escapes());
}

TEST_CASE("runtime_version: escapes the profile accepts are named as known risks, the rest still fail",
          "[verify]") {
  const auto table = rv_table();
  const json bookworm = {{"runtime", "runc"},
                         {"runtime_version", "runc version 1.1.5+ds1\ncommit: 1.1.5+ds1-1+deb12u1\n"}};
  const AcceptedEscapes all = {
      {"CVE-2025-31133", "test world"}, {"CVE-2025-52565", "test world"}, {"CVE-2025-52881", "test world"}};
  const auto accepted = check_runtime_version(facts_of(bookworm), table, all);
  CHECK(accepted.status == CheckStatus::pass);
  CHECK_THAT(accepted.reason, Catch::StartsWith("known risk: open to CVE-2025-31133") &&
                                  Catch::Contains("accepted by the deployment profile: test world") &&
                                  Catch::Contains("CVE-2025-52881") &&
                                  Catch::Contains("checked CVE-2019-5736"));
  // One left out: the check fails and names only that one as open.
  AcceptedEscapes two = all;
  two.erase("CVE-2025-52565");
  const auto partial = check_runtime_version(facts_of(bookworm), table, two);
  CHECK(partial.status == CheckStatus::fail);
  CHECK_THAT(partial.reason, Catch::Contains("CVE-2025-52565") && !Catch::Contains("CVE-2025-31133"));
  // Accepting an escape the runtime is not open to changes nothing.
  const auto fixed = check_runtime_version(
      facts_of({{"runtime", "runc"}, {"runtime_version", "runc version 1.3.3"}}), table, all);
  CHECK(fixed.status == CheckStatus::pass);
  CHECK_THAT(fixed.reason, Catch::StartsWith("checked "));
}
