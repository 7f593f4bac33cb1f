// read_posture: every way a sandbox can answer `isoprobe posture` badly becomes a named
// reason (a failing "posture" check), never an exception and never a posture.
#include <catch2/catch.hpp>

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
  CHECK(check.status == "fail");
  CHECK_THAT(check.reason, Catch::Contains("no control of this sandbox can be verified"));
}
