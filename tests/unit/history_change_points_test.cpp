// E-divisive change points on synthetic series with a known truth. Prints the detection
// rate of a 10 % step at 2 % noise and the false-positive rate over 60 steady nights, and
// checks both against sane bounds (the rates themselves are the figures to report).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "harness/history/change_points.h"
#include "tests/unit/history_fixture.h"

using namespace isoharness;

TEST_CASE("best split of a clean step is the step", "[history][change_points]") {
  std::vector<double> v(20, 0.0);
  for (std::size_t i = 13; i < v.size(); ++i) v[i] = 1.0;
  auto s = history::best_split(v, 3);
  CHECK(s.index == 13);
  CHECK(s.statistic > 0);
  CHECK(history::best_split(std::vector<double>(5, 0.0), 3).index == 0);  // too short for two segments of 3
}

TEST_CASE("change points: two steps found, each at its place, the same on every run",
          "[history][change_points]") {
  std::vector<double> v;
  for (int i = 0; i < 45; ++i)
    v.push_back((i >= 15 ? 0.2 : 0.0) + (i >= 30 ? -0.3 : 0.0) + 0.01 * ((i * 7) % 5));
  const auto found = history::find_change_points(v);
  REQUIRE(found.size() == 2);
  CHECK(found[0].index == 15);
  CHECK(found[1].index == 30);
  CHECK(found[0].p_value <= 0.05);
  const auto again = history::find_change_points(v);
  CHECK(again[0].p_value == found[0].p_value);
}

TEST_CASE("change points refuse bad options and values", "[history][change_points]") {
  std::vector<double> v(10, 0.0);
  history::ChangePointOptions o;
  o.significance = 0;
  CHECK_THROWS(history::find_change_points(v, o));
  v[3] = NAN;
  CHECK_THROWS(history::find_change_points(v));
  CHECK(history::find_change_points(std::vector<double>{}).empty());
}

TEST_CASE("a 10 % step at 2 % noise is found within one run of its place over 100 seeds",
          "[history][change_points]") {
  int found = 0, extra = 0;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    test::NightPlan plan;
    plan.nights = 40;
    plan.step_at = 10 + static_cast<int>(seed % 21);  // nights 10..30
    plan.step = 1.10;
    plan.noise = 0.02;
    plan.seed = seed;
    const auto changes = history::find_change_points(test::synthetic_log_ratios(plan));
    bool hit = false;
    for (const auto& c : changes) {
      if (std::abs(static_cast<int>(c.index) - plan.step_at) <= 1)
        hit = true;
      else
        ++extra;
    }
    if (hit) ++found;
  }
  std::printf(
      "step detection: %d/100 found within one run (10 %% step, 2 %% noise, 40 nights); %d extra change "
      "point(s)\n",
      found, extra);
  CHECK(found >= 95);
  CHECK(extra <= 15);
}

TEST_CASE("60 steady nights give change points at most as often as the significance promises",
          "[history][change_points]") {
  int false_positives = 0;
  const history::ChangePointOptions options;  // significance 0.05
  for (std::uint64_t seed = 1001; seed <= 1100; ++seed) {
    test::NightPlan plan;
    plan.nights = 60;
    plan.noise = 0.02;
    plan.seed = seed;
    if (!history::find_change_points(test::synthetic_log_ratios(plan), options).empty()) ++false_positives;
  }
  std::printf("false positives: %d/100 steady series of 60 nights at significance %.2f\n", false_positives,
              options.significance);
  // 5 expected; P(Binomial(100, 0.05) >= 12) < 0.005.
  CHECK(false_positives <= 11);
}
