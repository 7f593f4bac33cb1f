// harness/parity: Hodges–Lehmann ratios, Mann–Whitney intervals and p-values against
// SciPy reference values (tools/parity_reference.py), verdicts, the mix bootstrap and the
// parity section.
#include "harness/parity/parity.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "harness/common/error.h"
#include "harness/parity/mann_whitney.h"
#include "tests/support/test_support.h"

using namespace isoharness;
using namespace isoharness::parity;

namespace {

nlohmann::json reference() {
  static const nlohmann::json ref =
      nlohmann::json::parse(test::read_text(test::source_dir() + "/tests/fixtures/parity/reference.json"));
  return ref;
}

std::vector<double> doubles(const nlohmann::json& j) {
  return j.get<std::vector<double>>();
}

// Log-normal samples from our own Box–Muller over mt19937_64 (same on every platform).
std::vector<double> lognormal(std::uint64_t seed, std::size_t n, double median, double sigma) {
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0; };
  std::vector<double> out;
  while (out.size() < n) {
    const double r = std::sqrt(-2 * std::log(uniform()));
    const double t = 2 * M_PI * uniform();
    out.push_back(median * std::exp(sigma * r * std::cos(t)));
    if (out.size() < n) out.push_back(median * std::exp(sigma * r * std::sin(t)));
  }
  return out;
}

}  // namespace

TEST_CASE("exact Mann-Whitney distribution matches hand counts", "[parity]") {
  // m = n = 2: the 6 arrangements give U = 0,1,2,2,3,4.
  const auto pmf = mann_whitney_pmf(2, 2);
  REQUIRE(pmf.size() == 5);
  CHECK(pmf[0] == Approx(1.0 / 6));
  CHECK(pmf[2] == Approx(2.0 / 6));
  CHECK(pmf[4] == Approx(1.0 / 6));
  // Symmetric, sums to one, and does not depend on which side is larger.
  const auto a = mann_whitney_pmf(3, 11);
  const auto b = mann_whitney_pmf(11, 3);
  double total = 0;
  for (std::size_t u = 0; u < a.size(); ++u) {
    total += a[u];
    CHECK(a[u] == Approx(a[a.size() - 1 - u]));
    CHECK(a[u] == Approx(b[u]));
  }
  CHECK(total == Approx(1.0));
  CHECK(a[0] == Approx(1.0 / 364));  // 1 / C(14, 3)
}

TEST_CASE("ratios, intervals and p-values agree with SciPy", "[parity]") {
  const auto ref = reference();
  REQUIRE(ref.at("cases").size() >= 10);
  for (const auto& c : ref.at("cases")) {
    const std::string name = c.at("name");
    INFO("case " << name);
    const auto b = doubles(c.at("baseline"));
    const auto cand = doubles(c.at("candidate"));
    const double confidence = c.at("confidence");
    const auto r = compare(name, b, cand, 1.10, confidence);
    CHECK(r.n_baseline == b.size());
    CHECK(r.n_candidate == cand.size());
    CHECK(r.ratio.estimate == Approx(c.at("hl_ratio").get<double>()).epsilon(1e-9));
    CHECK(r.ratio.low == Approx(c.at("ci_low").get<double>()).epsilon(1e-9));
    CHECK(r.ratio.high == Approx(c.at("ci_high").get<double>()).epsilon(1e-9));
    CHECK(r.p_value == Approx(c.at("p_value").get<double>()).epsilon(1e-7));
    CHECK(r.p_method == c.at("p_method").get<std::string>());
    CHECK(r.ci_method == c.at("ci_method").get<std::string>());
    CHECK(mann_whitney_p(b, cand).u1 == Approx(c.at("u1").get<double>()));
    const bool attainable = c.at("attainable");
    if (!attainable) {
      CHECK(r.verdict == kInconclusive);
      CHECK_FALSE(r.warnings.empty());
    }
    CHECK(r.ratio.low <= r.ratio.estimate);
    CHECK(r.ratio.estimate <= r.ratio.high);
  }
}

TEST_CASE("achieved confidence of a small exact interval", "[parity]") {
  // 3 x 3: P(U = 0) = 1/20, so the widest interval covers 1 - 2/20 = 90 % < 95 %.
  const auto crit = mann_whitney_critical_index(3, 3, 0.95, true);
  CHECK_FALSE(crit.attainable);
  CHECK(crit.k == 1);
  CHECK(crit.achieved_confidence == Approx(0.9));
  const auto crit90 = mann_whitney_critical_index(3, 3, 0.89, true);
  CHECK(crit90.attainable);
}

TEST_CASE("equivalence verdicts against the tolerance", "[parity]") {
  const auto base = lognormal(1, 30, 1e-3, 0.02);
  SECTION("a clear slowdown within tolerance is parity") {
    const auto r = compare("w", base, lognormal(2, 30, 1.03e-3, 0.02), 1.10);
    CHECK(r.verdict == "parity");
    CHECK(r.ratio.high < 1.10);
    CHECK_FALSE(r.rounds_to_decide);
    CHECK(r.warnings.empty());
  }
  SECTION("a slowdown beyond tolerance is a regression") {
    const auto r = compare("w", base, lognormal(3, 30, 1.25e-3, 0.02), 1.10);
    CHECK(r.verdict == "regression");
    CHECK(r.ratio.low > 1.10);
    CHECK(r.p_value < 1e-6);
  }
  SECTION("an interval straddling the line is inconclusive and says how many more rounds") {
    const auto b = lognormal(4, 8, 1e-3, 0.10);
    const auto c = lognormal(5, 8, 1.06e-3, 0.10);
    const auto r = compare("w", b, c, 1.10);
    REQUIRE(r.verdict == "inconclusive");
    REQUIRE(r.rounds_to_decide);
    CHECK(*r.rounds_to_decide >= 1);
    // Measuring that many more rounds (twice over, for noise) from the same distributions
    // decides it.
    const std::size_t more = 8 + 2 * static_cast<std::size_t>(*r.rounds_to_decide);
    const auto decided =
        compare("w", lognormal(4, more, 1e-3, 0.10), lognormal(5, more, 1.06e-3, 0.10), 1.10);
    CHECK(decided.verdict == "parity");
  }
  SECTION("faster than baseline beyond tolerance is outside the band: 'faster', flagged") {
    // Two-sided: a 40 % faster candidate is as far from comparable as a regression (the
    // baselines command calls the same interval "adjust").
    const auto r = compare("w", base, lognormal(6, 30, 0.6e-3, 0.02), 1.10);
    CHECK(r.verdict == "faster");
    CHECK(r.ratio.high < 1 / 1.10);
    CHECK(r.faster);
    REQUIRE_FALSE(r.warnings.empty());
    CHECK_THAT(r.warnings.back(), Catch::Contains("faster"));
  }
  SECTION("an interval straddling 1/T is inconclusive, not parity") {
    const auto r = compare("w", lognormal(4, 8, 1e-3, 0.10), lognormal(5, 8, 0.9e-3, 0.10), 1.10);
    CHECK(r.ratio.low < 1 / 1.10);
    CHECK(r.ratio.high > 1 / 1.10);
    CHECK(r.verdict == "inconclusive");
    CHECK(r.rounds_to_decide);
  }
  SECTION("an A/A comparison reads parity at about 1.00") {
    const auto r = compare("cpu_hash", lognormal(7, 40, 2e-3, 0.005), lognormal(8, 40, 2e-3, 0.005), 1.02);
    CHECK(r.verdict == "parity");
    CHECK(r.ratio.estimate == Approx(1.0).margin(0.005));
    CHECK(r.ratio.low > 0.98);
    CHECK(r.ratio.high < 1.02);
  }
}

TEST_CASE("too few samples and degenerate intervals are warned about", "[parity]") {
  const std::vector<double> one{1e-3};
  const auto r = compare("w", one, one, 1.10);
  CHECK(r.verdict == "inconclusive");
  REQUIRE(r.rounds_to_decide);
  CHECK(*r.rounds_to_decide == 4);
  CHECK(r.warnings.size() >= 2);
  CHECK_THAT(r.warnings[0], Catch::Contains("fewer than 5"));

  const std::vector<double> same(10, 2e-3);
  const auto flat = compare("w", same, same, 1.10);
  CHECK(flat.ratio.low == flat.ratio.high);
  CHECK(flat.p_value == 1.0);
  bool zero_width = false;
  for (const auto& w : flat.warnings) zero_width = zero_width || w.find("zero width") != std::string::npos;
  CHECK(zero_width);
}

TEST_CASE("bad input names the workload and the sample", "[parity]") {
  const std::vector<double> ok{1, 2, 3};
  const std::vector<double> bad{1, -2, 3};
  CHECK_THROWS_WITH(compare("getpid", ok, bad, 1.1),
                    Catch::Contains("getpid") && Catch::Contains("candidate sample 1"));
  CHECK_THROWS_WITH(compare("getpid", std::vector<double>{}, ok, 1.1),
                    Catch::Contains("no baseline samples"));
  CHECK_THROWS_WITH(compare("getpid", ok, ok, 0.9), Catch::Contains("tolerance"));
  CHECK_THROWS_AS(compare("getpid", ok, ok, 1.1, 1.5), UserError);
}

TEST_CASE("the mix: weighted geometric mean with a bootstrap interval close to SciPy's", "[parity]") {
  const auto ref = reference();
  const auto& mref = ref.at("mix");
  std::vector<WorkloadComparison> comps;
  for (const auto& c : ref.at("cases")) {
    comps.push_back(compare(c.at("name"), doubles(c.at("baseline")), doubles(c.at("candidate")), 1.10));
  }
  const auto weights = mref.at("weights").get<std::map<std::string, double>>();
  MixOptions options;
  options.resamples = 4000;
  options.welch_below = 0;  // the bootstrap SciPy's reference used (one workload has 9 rounds)
  const auto mix = combine(comps, weights, 1.10, options);
  CHECK(mix.slowdown.estimate == Approx(mref.at("estimate").get<double>()).epsilon(1e-9));
  // Different generators: the bounds agree to within a fraction of the interval's width.
  const double width = std::log(mref.at("high").get<double>()) - std::log(mref.at("low").get<double>());
  CHECK(std::fabs(std::log(mix.slowdown.low) - std::log(mref.at("low").get<double>())) < 0.1 * width);
  CHECK(std::fabs(std::log(mix.slowdown.high) - std::log(mref.at("high").get<double>())) < 0.1 * width);
  CHECK(mix.weights.at("normal_20x20_near") == Approx(0.5));
  CHECK(mix.verdict == verdict_for(mix.slowdown, 1.10));

  // Deterministic: the same input gives the same interval, bit for bit.
  const auto again = combine(comps, weights, 1.10, options);
  CHECK(again.slowdown.low == mix.slowdown.low);
  CHECK(again.slowdown.high == mix.slowdown.high);
}

TEST_CASE("the mix warns about weighted workloads that were not measured", "[parity]") {
  std::vector<WorkloadComparison> comps{
      compare("a", lognormal(1, 10, 1, 0.01), lognormal(2, 10, 1, 0.01), 1.1)};
  const auto mix = combine(comps, {{"a", 2.0}, {"compile_c", 1.0}}, 1.1);
  REQUIRE(mix.warnings.size() == 1);
  CHECK_THAT(mix.warnings[0], Catch::Contains("compile_c"));
  CHECK(mix.weights.size() == 1);
  CHECK(mix.verdict == "parity");
  CHECK_THROWS_WITH(combine(comps, {{"a", -1.0}}, 1.1), Catch::Contains("'a'") && Catch::Contains("weight"));
  const auto none = combine({}, {{"a", 1.0}}, 1.1);
  CHECK(none.verdict == kNoMix);  // nothing measured to combine: no mix, not an undecided one
}

TEST_CASE("a cell whose workloads all weigh 0 has no weighted mix", "[parity]") {
  SectionInput in;
  in.scenario = "parity";
  in.baseline = "runc/tier";
  in.weights = {{"getpid", 0}, {"getpid_static", 0}};  // `--workloads getpid`
  in.samples["runc/tier"] = {{"getpid", lognormal(1, 12, 1e-6, 0.05)},
                             {"getpid_static", lognormal(2, 12, 1e-6, 0.05)}};
  in.samples["gvisor/tier"] = {{"getpid", lognormal(3, 12, 40e-6, 0.05)},
                               {"getpid_static", lognormal(4, 12, 40e-6, 0.05)}};
  const auto j = analyse(in);
  const auto& mix = j.at("cells")[0].at("mix");
  CHECK(mix.at("verdict") == kNoMix);
  CHECK(mix.at("slowdown").is_null());  // no 1.000 [1.000, 1.000] that nothing measured
  CHECK(mix.at("weights").empty());
  CHECK(j.at("cells")[0].at("comparisons").size() == 2);  // the workloads are still compared
}

TEST_CASE("the parity section compares every cell with the baseline", "[parity]") {
  SectionInput in;
  in.scenario = "strict";
  in.baseline = "runc/tier";
  in.tolerance = 1.10;
  in.weights = {{"getpid", 1}, {"cpu_hash", 3}};
  in.samples["runc/tier"] = {{"getpid", lognormal(1, 12, 1e-6, 0.05)},
                             {"cpu_hash", lognormal(2, 12, 1e-3, 0.01)}};
  in.samples["gvisor/tier"] = {{"getpid", lognormal(3, 12, 40e-6, 0.05)},
                               {"cpu_hash", lognormal(4, 12, 1e-3, 0.01)}};
  in.samples["gvisor/non-tier"] = {{"cpu_hash", lognormal(5, 12, 1.2e-3, 0.05)}};
  const auto j = analyse(in);
  CHECK(j.at("baseline") == "runc/tier");
  REQUIRE(j.at("cells").size() == 2);
  const auto& nontier = j.at("cells")[0];
  CHECK(nontier.at("name") == "gvisor/non-tier");
  CHECK(nontier.at("comparisons").size() == 1);
  CHECK_THAT(nontier.at("warnings")[0].get<std::string>(), Catch::Contains("getpid"));
  const auto& tier = j.at("cells")[1];
  CHECK(tier.at("comparisons")[1].at("workload") == "getpid");
  CHECK(tier.at("comparisons")[1].at("verdict") == "regression");
  CHECK(tier.at("comparisons")[0].at("verdict") == "parity");
  CHECK(tier.at("mix").at("verdict") == "regression");
  CHECK(tier.at("mix").at("weights").at("cpu_hash") == Approx(0.75));
  CHECK(j.at("samples").at("runc/tier").at("getpid").size() == 12);

  in.baseline = "runc/non-tier";
  CHECK_THROWS_WITH(analyse(in), Catch::Contains("runc/non-tier") && Catch::Contains("gvisor/tier"));
}
