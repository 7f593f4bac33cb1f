// read_posture: every way a sandbox can answer `isoprobe posture` badly becomes a named
// reason (a failing "posture" check), never an exception and never a posture.
#include <catch2/catch.hpp>

#include "harness/runner/check_tally.h"
#include "harness/runner/probe_output.h"

using namespace isoharness;
using namespace std::chrono_literals;

namespace {

transport::ExecResult answer(std::string out, int exit_code = 0) {
  transport::ExecResult r;
  r.out = std::move(out);
  r.exit_code = exit_code;
  return r;
}

std::string why(const Expected<transport::ExecResult>& r) {
  auto p = runner::read_posture(r, 90s);
  REQUIRE_FALSE(p.has_value());
  return p.error().message;
}

}  // namespace

TEST_CASE("read_posture: a posture document is read", "[runner]") {
  auto p = runner::read_posture(answer(R"({"schema":"isoharness.posture/v1","observations":[]})"), 90s);
  REQUIRE(p.has_value());
  CHECK(p.value()["schema"] == "isoharness.posture/v1");
}

TEST_CASE("read_posture: hostile answers are named, not believed", "[runner]") {
  auto flood = answer(std::string(runner::kMaxProbeOutput, 'x'));
  flood.out_truncated = true;
  CHECK(why(flood) == "isoprobe wrote more than 8 MiB; the channel was closed at the bound");

  auto stuck = answer("");
  stuck.timed_out = true;
  stuck.exit_code = -1;
  CHECK(why(stuck) == "isoprobe did not finish within its deadline of 90 s; the channel was closed");

  CHECK_THAT(
      why(answer("{\"schema\": [", 0)),
      Catch::StartsWith(
          "isoprobe printed no posture document (not a JSON document (or not UTF-8), 12 bytes, exit 0)"));

  auto cut = answer("{\"schema\": \"isoharness.posture/v1\", \"obs", -1);
  cut.err = "partial\x01\xff";
  CHECK_THAT(why(cut), Catch::Contains("no exit status: the channel closed early"));
  CHECK_THAT(why(cut), Catch::EndsWith("stderr ends: partial??"));

  auto killed = answer("", -1);
  killed.exit_signal = "KILL";
  CHECK_THAT(why(killed), Catch::Contains("signal KILL"));

  CHECK_THAT(
      why(Error{"channel closed by peer"}),
      Catch::StartsWith("the channel to the sandbox failed while isoprobe ran: channel closed by peer"));

  auto check = runner::posture_unreadable("isoprobe wrote more than 8 MiB");
  CHECK(check.control == "posture");
  CHECK(check.status == isoharness::CheckStatus::fail);
  CHECK_THAT(check.reason, Catch::Contains("no control of this sandbox can be verified"));
}

TEST_CASE("agent_upload compares the agent's digest of its file with what was sent", "[runner]") {
  const std::string sha(64, 'a');
  const transport::UploadedFile sent{".isoprobe/isoprobe", 2048, sha, transport::UploadCheck::size};
  auto posture_with = [](nlohmann::json file) {
    return nlohmann::json{{"schema", "isoharness.posture/v1"},
                          {"context", {{"verified_file", std::move(file)}}},
                          {"observations", nlohmann::json::array()}};
  };
  auto same = runner::check_agent_upload(
      posture_with({{"path", ".isoprobe/isoprobe"}, {"bytes", 2048}, {"sha256", sha}}), sent);
  CHECK(same.control == "agent_upload");
  CHECK(same.status == isoharness::CheckStatus::pass);

  auto other = runner::check_agent_upload(
      posture_with({{"path", ".isoprobe/isoprobe"}, {"bytes", 2048}, {"sha256", std::string(64, 'b')}}),
      sent);
  CHECK(other.status == isoharness::CheckStatus::fail);
  CHECK_THAT(other.reason, Catch::Contains("nothing it reported is trusted"));
  CHECK(runner::check_agent_upload(posture_with({{"bytes", 2047}, {"sha256", sha}}), sent).status ==
        isoharness::CheckStatus::fail);
  CHECK(runner::check_agent_upload(posture_with({{"bytes", "2048"}, {"sha256", sha}}), sent).status ==
        isoharness::CheckStatus::fail);
  CHECK(runner::check_agent_upload(posture_with({{"bytes", -2048}, {"sha256", sha}}), sent).status ==
        isoharness::CheckStatus::fail);

  auto unreadable = runner::check_agent_upload(posture_with({{"path", "x"},
                                                             {"error",
                                                              "x: Permission\x01"
                                                              "denied"}}),
                                               sent);
  CHECK(unreadable.status == isoharness::CheckStatus::fail);
  CHECK_THAT(unreadable.observed, Catch::Contains("x: Permission?denied"));

  auto missing = runner::check_agent_upload(nlohmann::json{{"schema", "isoharness.posture/v1"}}, sent);
  CHECK(missing.status == isoharness::CheckStatus::fail);
  CHECK_THAT(missing.observed, Catch::Contains("no context.verified_file"));
  CHECK(runner::check_agent_upload(nlohmann::json::array(), sent).status == isoharness::CheckStatus::fail);
}

TEST_CASE("distrust fails every passing check it is given, and only those", "[runner]") {
  using isoharness::CheckStatus;
  std::vector<isoharness::verify::CheckResult> checks = {
      {"kernel", CheckStatus::pass, "", "", "kernel: ok", ""},
      {"seccomp", CheckStatus::na, "", "", "", ""},
      {"uid", CheckStatus::fail, "", "", "uid: 0", ""}};
  runner::distrust(checks, "agent_upload");
  CHECK(checks[0].status == CheckStatus::fail);
  CHECK(checks[0].reason == "kernel: claimed by a posture document that fails agent_upload; not trusted");
  CHECK(checks[1].status == CheckStatus::na);
  CHECK(checks[2].status == CheckStatus::fail);
  CHECK(checks[2].reason == "uid: 0");
}

TEST_CASE("an unwitnessed check makes the tally's verdict an error, named with its reason", "[runner]") {
  const nlohmann::json records = nlohmann::json::array(
      {{{"id", "sb-1"},
        {"error", nullptr},
        {"checks",
         {{{"status", "pass"},
           {"control", "egress:canary-udp"},
           {"evidence", "judged by the witnesses (rule B6"}},
          {{"status", "unwitnessed"}, {"control", "egress:canary-tcp"}, {"reason", "no drop record"}},
          {{"status", "pass"},
           {"control", "egress:jumphost"},
           {"self_reported", true},
           {"evidence", "judged by the sandbox's own report (the deployment declares witness: none)\n"}},
          // The wording alone does not make a check self-reported: the field does.
          {{"status", "pass"},
           {"control", "kernel"},
           {"evidence", "judged by the sandbox's own report (the deployment declares witness: none)\n"}},
          {{"status", "pass"}, {"control", "capabilities"}, {"self_reported", true}}}}}});
  const runner::CheckTally t = runner::tally_records(records);
  CHECK(t.checks == 5);
  CHECK(t.pass == 4);
  CHECK(t.unwitnessed == 1);
  CHECK(t.sandbox_reported == 1);
  CHECK(t.posture_self_reported == 1);
  REQUIRE(t.unwitnessed_checks.size() == 1);
  CHECK(t.unwitnessed_checks[0] == "sb-1 egress:canary-tcp: no drop record");
  CHECK(runner::verdict_of(t) == isoharness::Verdict::error);
  CHECK(isoharness::verdict_exit_code(runner::verdict_of(t)) == 3);
}

TEST_CASE("one tally counts the records' checks, errors and first failure", "[runner]") {
  const nlohmann::json records =
      nlohmann::json::array({{{"error", nullptr},
                              {"checks",
                               {{{"status", "pass"}},
                                {{"status", "fail"}, {"reason", "kernel: runc"}},
                                {{"status", "n/a"}},
                                {{"status", "forged"}}}}},
                             {{"error", "deploy failed"}, {"checks", nlohmann::json::array()}}});
  const runner::CheckTally t = runner::tally_records(records);
  CHECK(t.checks == 4);
  CHECK(t.pass == 1);
  CHECK(t.fail == 1);
  CHECK(t.na == 2);  // a status this build does not know is never a pass
  CHECK(t.errors == 1);
  CHECK(t.first_failure == "kernel: runc");
  CHECK(runner::verdict_of(t) == isoharness::Verdict::error);
  CHECK(runner::verdict_of(runner::tally_records(nlohmann::json::array({records[0]}))) ==
        isoharness::Verdict::fail);
}
