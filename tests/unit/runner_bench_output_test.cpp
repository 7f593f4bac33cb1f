// parse_bench_output reads Google Benchmark JSON printed inside a sandbox: times in any
// unit, skip and error rows, user counters, and hostile or broken input.
#include <catch2/catch.hpp>

#include "harness/runner/bench_output.h"

using namespace isoharness::runner;

TEST_CASE("bench output: times in seconds per operation, by workload", "[runner]") {
  auto r = parse_bench_output(R"({"context": {}, "benchmarks": [
    {"name": "getpid/min_time:0.050", "run_type": "iteration", "iterations": 100, "real_time": 80.5,
     "cpu_time": 80.1, "time_unit": "ns"},
    {"name": "compile_c", "run_type": "iteration", "real_time": 12.5, "time_unit": "ms"},
    {"name": "compile_c_mean", "run_type": "aggregate", "real_time": 99, "time_unit": "ms"}]})");
  REQUIRE(r);
  CHECK(r->seconds_per_op.at("getpid") == Approx(80.5e-9));
  CHECK(r->seconds_per_op.at("compile_c") == Approx(12.5e-3));
  CHECK(r->seconds_per_op.size() == 2);
  CHECK(r->skipped.empty());
  CHECK(r->counters.empty());  // iterations, real_time, ... are not user counters
}

TEST_CASE("bench output: skipped and failed workloads keep their reason", "[runner]") {
  auto r = parse_bench_output(R"({"benchmarks": [
    {"name": "compile_c", "run_type": "iteration", "error_occurred": true,
     "error_message": "skipped: no C compiler in the image"},
    {"name": "stat", "run_type": "iteration", "real_time": -1, "time_unit": "ns"},
    {"name": "open_close", "run_type": "iteration", "real_time": 5, "time_unit": "fortnights"}]})");
  REQUIRE(r);
  CHECK(r->seconds_per_op.empty());
  CHECK(r->skipped.at("compile_c") == "skipped: no C compiler in the image");
  CHECK(r->skipped.at("stat") == "unusable time in bench output");
  CHECK(r->skipped.at("open_close") == "unusable time in bench output");
}

TEST_CASE("bench output: user counters are kept, bounded", "[runner]") {
  std::string row =
      R"({"name": "tcp_rtt_loopback", "run_type": "iteration", "real_time": 30, "time_unit": "us",
                        "iterations": 7, "not_ready": 3, "label": "text is ignored")";
  for (int i = 0; i < 20; ++i) row += ", \"c" + std::to_string(i) + "\": " + std::to_string(i);
  row += ", \"" + std::string(40, 'x') + "\": 1}";
  auto r = parse_bench_output("{\"benchmarks\": [" + row + "]}");
  REQUIRE(r);
  const auto& c = r->counters.at("tcp_rtt_loopback");
  CHECK(c.size() == 8);
  CHECK(c.count(std::string(40, 'x')) == 0);
  CHECK(c.count("iterations") == 0);
  CHECK(c.count("label") == 0);
}

TEST_CASE("bench output: what is not Google Benchmark JSON is an error", "[runner]") {
  CHECK_FALSE(parse_bench_output(""));
  CHECK_FALSE(parse_bench_output("[1, 2]"));
  CHECK_FALSE(parse_bench_output(R"({"benchmarks": {}})"));
  CHECK_FALSE(parse_bench_output(std::string(1000, '{')));
  auto odd = parse_bench_output(R"({"benchmarks": [1, "x", {"name": 5}, {"run_type": "iteration"}]})");
  REQUIRE(odd);
  CHECK(odd->seconds_per_op.empty());
}

TEST_CASE("bench output: members of the wrong type are refused row by row, never thrown", "[runner]") {
  // json::value(key, default) throws on a type mismatch; tests/fuzz/bench_output hits it too.
  auto r = parse_bench_output(R"({"benchmarks": [
    {"name": "a", "run_type": 7, "real_time": 1, "time_unit": "ns"},
    {"name": "b", "run_type": "iteration", "error_occurred": "yes", "real_time": 2, "time_unit": "ns"},
    {"name": "c", "run_type": "iteration", "skipped": 1, "real_time": 3, "time_unit": ["ns"]},
    {"name": "d", "real_time": 4}]})");
  REQUIRE(r);
  CHECK_FALSE(r->seconds_per_op.count("a"));
  CHECK(r->seconds_per_op.at("b") == Approx(2e-9));
  CHECK(r->skipped.at("c") == "unusable time in bench output");
  CHECK(r->seconds_per_op.at("d") == Approx(4e-9));
}
