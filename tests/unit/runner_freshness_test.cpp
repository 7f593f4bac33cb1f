// parse_framed: the answer of the per-attempt freshness commands, split by a random
// boundary. The sandbox writes all of it, so nothing in it may break the parser.
#include <catch2/catch.hpp>

#include "harness/runner/attempt_freshness.h"

using isoharness::runner::parse_framed;

TEST_CASE("parse_framed splits a framed answer by its boundary", "[runner]") {
  const std::string b = "@@isoharness-0123456789abcdef01234567";
  const std::string text = "head: cannot open '.isoharness-attempt'\n\n" + b + " marker 1\n" +  //
                           "\n" + b + " pgrep 1\n" +                                            //
                           "127.9.8.7       STREAM name\n\n" + b + " getent 0\n";
  auto parts = parse_framed(text, b);
  REQUIRE(parts.size() == 3);
  CHECK(parts["marker"].exit_code == 1);
  CHECK(parts["marker"].out == "head: cannot open '.isoharness-attempt'\n");
  CHECK(parts["pgrep"].exit_code == 1);
  CHECK(parts["pgrep"].out.empty());
  CHECK(parts["getent"].exit_code == 0);
  CHECK(parts["getent"].out == "127.9.8.7       STREAM name\n");
}

TEST_CASE("parse_framed keeps output without a final newline", "[runner]") {
  const std::string b = "@@b";
  auto parts = parse_framed("run-1 s3\n" + b + " marker 0\n", b);
  CHECK(parts["marker"].out == "run-1 s3");
  CHECK(parts["marker"].exit_code == 0);
}

TEST_CASE("parse_framed ignores what is not one of its frame lines", "[runner]") {
  const std::string b = "@@isoharness-ffff";
  // Lookalikes, a bad exit code, a repeated name and an unterminated last line.
  const std::string text = "@@isoharness-fff marker 0\n" + b + "x marker 0\n" + b + " marker 0\n" + b +
                           " pgrep 9999\n" + b + " getent x1\n" + b + " marker 1\n" + b + " start 0";
  auto parts = parse_framed(text, b);
  REQUIRE(parts.size() == 3);
  CHECK(parts["marker"].exit_code == 0);  // the first one counts
  CHECK(parts["marker"].out == "@@isoharness-fff marker 0\n" + b + "x marker 0");
  CHECK(parts["pgrep"].exit_code == -1);   // more than three digits: no exit code
  CHECK(parts["getent"].exit_code == -1);  // not a number
  CHECK(parts.count("start") == 0);        // no newline: not a frame
  CHECK(parse_framed(text, "").empty());
  CHECK(parse_framed("", b).empty());
  CHECK(parse_framed(b + " \n", b).empty());  // a frame line needs a name
}
