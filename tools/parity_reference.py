#!/usr/bin/python3
"""Reference values for harness/parity, computed with SciPy (Debian's python3-scipy).

Writes tests/fixtures/parity/reference.json, which tests/unit/parity_test.cpp reads, and
tests/fixtures/reports/parity_samples.json (made-up but realistic timings that the report
golden tests analyse and render); the C++ tests never run Python. Regenerate after changing the cases below with

    /usr/bin/python3 tools/parity_reference.py            # from the repository root
    /usr/bin/python3 tools/parity_reference.py --check    # only verify the file is current

(Use Debian's /usr/bin/python3: a pyenv or venv python may not see python3-scipy.)

For every case, with b = baseline times and c = candidate times:
  * p_value, u1, p_method: scipy.stats.mannwhitneyu(b, c) with its defaults (two-sided,
    continuity correction, method "auto").
  * hl_ratio: exp(median of log(c_j) - log(b_i) over all pairs), Hodges–Lehmann.
  * ci_low/ci_high: the confidence interval for the ratio, found by *inverting scipy's
    Mann–Whitney test*: a shift s belongs to the interval when mannwhitneyu(log c - s, log b)
    does not reject at 1 - confidence. The test is evaluated in every gap between
    consecutive pairwise differences (the p-value only changes at those points), so the
    interval's ends are pairwise differences. For data with ties in the pooled sample the
    interval comes from the closed form k = floor(mn/2 + 0.5 - z sqrt(mn(m+n+1)/12)) with
    z = scipy.stats.norm.ppf instead (the inversion would see the tie correction move
    with the shift); for tie-free data the script asserts that both agree.
  * mix: weighted geometric mean of hl_ratio over a workload mix, and a percentile
    bootstrap interval from scipy.stats.bootstrap (independent resampling of every
    sample). The C++ bootstrap uses a different generator, so the test compares those
    bounds with a tolerance, not exactly.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import scipy
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "parity", "reference.json")
SAMPLES_OUT = os.path.join(HERE, "..", "tests", "fixtures", "reports", "parity_samples.json")
EXACT_MAX_PAIRS = 5000  # same cap as harness/parity/mann_whitney.h


def lognormal(seed, n, median, sigma):
    rng = np.random.RandomState(seed)
    return [float(v) for v in median * np.exp(rng.normal(0.0, sigma, n))]


def has_ties(b, c):
    pooled = np.concatenate([b, c])
    return len(np.unique(pooled)) != len(pooled)


def use_exact(m, n, ties):
    if m > 8 and n > 8:
        return False
    if ties:
        return False
    return m * n <= EXACT_MAX_PAIRS


def sorted_diffs(b, c):
    return np.sort((np.log(np.asarray(c))[None, :] - np.log(np.asarray(b))[:, None]).ravel())


def closed_form_k(m, n, confidence):
    mn = m * n
    z = stats.norm.ppf(1 - (1 - confidence) / 2)
    k = math.floor(mn / 2 + 0.5 - z * math.sqrt(mn * (m + n + 1) / 12))
    return min(k, (mn + 1) // 2)


def inverted_k(b, c, confidence, method):
    """Smallest j such that the gap just above the j-th smallest difference is accepted."""
    d = sorted_diffs(b, c)
    alpha = 1 - confidence
    lb, lc = np.log(b), np.log(c)
    for j in range(0, len(d)):
        if j == 0:
            s = d[0] - 1.0
        else:
            if d[j - 1] == d[j]:
                continue
            s = (d[j - 1] + d[j]) / 2
        p = stats.mannwhitneyu(lc - s, lb, method=method).pvalue
        if p > alpha:
            return j  # j == 0: even below every difference the test accepts: not attainable
    raise AssertionError("no accepted shift")


def case(name, b, c, confidence=0.95):
    m, n = len(b), len(c)
    ties = has_ties(b, c)
    exact = use_exact(m, n, ties)
    d = sorted_diffs(b, c)
    res = stats.mannwhitneyu(b, c)
    out = {
        "name": name,
        "baseline": b,
        "candidate": c,
        "confidence": confidence,
        "hl_ratio": float(math.exp(np.median(d))),
        "p_value": float(res.pvalue),
        "u1": float(res.statistic),
        "p_method": "exact" if (not ties and (m <= 8 or n <= 8)) else "asymptotic",
        "ci_method": "exact" if exact else "normal",
    }
    if ties:
        k = closed_form_k(m, n, confidence)
    else:
        k = inverted_k(b, c, confidence, "exact" if exact else "asymptotic")
        if not exact:
            assert k == closed_form_k(m, n, confidence), (name, k, closed_form_k(m, n, confidence))
    out["attainable"] = k >= 1
    k = max(k, 1)
    out["k"] = k
    out["ci_low"] = float(math.exp(d[k - 1]))
    out["ci_high"] = float(math.exp(d[len(d) - k]))
    return out


def mix_reference(cases, weights, confidence=0.95, resamples=4000):
    names = list(weights)
    total = sum(weights.values())
    w = [weights[nm] / total for nm in names]
    by_name = {c["name"]: c for c in cases}
    est = math.exp(sum(wi * math.log(by_name[nm]["hl_ratio"]) for wi, nm in zip(w, names)))
    data = []
    for nm in names:
        data.append(np.asarray(by_name[nm]["baseline"]))
        data.append(np.asarray(by_name[nm]["candidate"]))

    def statistic(*samples):
        s = 0.0
        for i, wi in enumerate(w):
            s += wi * np.median(np.log(samples[2 * i + 1])[None, :] - np.log(samples[2 * i])[:, None])
        return s

    boot = stats.bootstrap(tuple(data), statistic, n_resamples=resamples, confidence_level=confidence,
                           method="percentile", vectorized=False, paired=False, random_state=12345)
    return {
        "weights": weights,
        "confidence": confidence,
        "estimate": est,
        "low": float(math.exp(boot.confidence_interval.low)),
        "high": float(math.exp(boot.confidence_interval.high)),
        "resamples": resamples,
    }


def build():
    cases = [
        case("exact_6x7_slower", lognormal(1, 6, 1e-6, 0.05), lognormal(2, 7, 1.3e-6, 0.05)),
        case("exact_5x5", lognormal(3, 5, 2e-3, 0.10), lognormal(4, 5, 2.1e-3, 0.10)),
        case("exact_8x40", lognormal(5, 8, 5e-5, 0.08), lognormal(6, 40, 5.5e-5, 0.08)),
        case("exact_4x4_90", lognormal(7, 4, 1e-3, 0.05), lognormal(8, 4, 1e-3, 0.05), confidence=0.90),
        case("unattainable_3x3", lognormal(9, 3, 1e-3, 0.05), lognormal(10, 3, 1e-3, 0.05)),
        case("normal_20x20_near", lognormal(11, 20, 4e-4, 0.06), lognormal(12, 20, 4.2e-4, 0.06)),
        case("normal_9x12", lognormal(13, 9, 3e-2, 0.15), lognormal(14, 12, 3.6e-2, 0.15)),
        case("normal_aa_15", lognormal(15, 15, 1e-2, 0.02), lognormal(16, 15, 1e-2, 0.02)),
        case("normal_regression_12", lognormal(17, 12, 1e-6, 0.05), lognormal(18, 12, 1.6e-6, 0.05)),
        case("normal_faster_10", lognormal(19, 10, 1e-3, 0.05), lognormal(20, 10, 0.7e-3, 0.05)),
        case("ties_30x25", [round(v, 2) for v in lognormal(21, 30, 1.0, 0.05)],
             [round(v, 2) for v in lognormal(22, 25, 1.04, 0.05)]),
        case("normal_60x60_99", lognormal(23, 60, 1e-4, 0.10), lognormal(24, 60, 1.02e-4, 0.10), confidence=0.99),
    ]
    mix = mix_reference(cases, {"normal_20x20_near": 3.0, "normal_9x12": 1.0, "normal_aa_15": 2.0})
    return {
        "generator": "tools/parity_reference.py",
        "scipy_version": scipy.__version__,
        "numpy_version": np.__version__,
        "cases": cases,
        "mix": mix,
    }


# Realistic-looking timings for the report fixtures (tests/fixtures/reports/parity_samples.json):
# workload -> (runc/tier median seconds, gVisor factor, non-tier factor, log-sd).
REPORT_WORKLOADS = {
    "getpid": (1.0e-6, 40.0, 1.05, 0.04),
    "clock_gettime": (2.5e-8, 1.0, 1.03, 0.02),
    "open_close": (2.2e-6, 18.0, 1.05, 0.05),
    "stat": (1.1e-6, 15.0, 1.05, 0.05),
    "read_4k_cached": (1.4e-6, 6.0, 1.05, 0.05),
    "fork_wait": (2.5e-4, 4.0, 1.2, 0.08),
    "pipe_pingpong": (8.0e-6, 9.0, 1.3, 0.10),
    "tcp_rtt_loopback": (2.4e-5, 3.5, 1.2, 0.10),
    "cpu_hash": (1.2e-3, 1.0, 1.06, 0.01),
    "memory_bandwidth": (4.0e-3, 1.02, 1.10, 0.02),
    "compile_c": (9.0e-2, 1.35, 1.15, 0.04),
    "shell_pipeline": (1.2e-2, 2.2, 1.10, 0.05),
    "ssh_rtt": (4.0e-3, 1.08, 1.05, 0.06),
}


def report_samples(rounds=12):
    cells = {}
    seed = 100
    for runtime in ("runc", "gvisor"):
        for node in ("tier", "non-tier"):
            cell = {}
            for name, (median, gv, nt, sd) in REPORT_WORKLOADS.items():
                factor = (gv if runtime == "gvisor" else 1.0) * (nt if node == "non-tier" else 1.0)
                spread = sd * (2.0 if node == "non-tier" else 1.0)
                seed += 1
                cell[name] = [float("%.6g" % v) for v in lognormal(seed, rounds, median * factor, spread)]
            cells[runtime + "/" + node] = cell
    return {
        "scenario": "strict",
        "baseline": "runc/tier",
        "tolerance": 1.10,
        "weights": {"cpu_hash": 3, "compile_c": 2, "shell_pipeline": 1, "ssh_rtt": 3, "memory_bandwidth": 1},
        "samples": cells,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the fixture is not current")
    args = parser.parse_args()
    outputs = {
        OUT: json.dumps(build(), indent=1, sort_keys=True) + "\n",
        SAMPLES_OUT: json.dumps(report_samples(), indent=1) + "\n",
    }
    for path, text in outputs.items():
        if args.check:
            with open(path) as f:
                if f.read() != text:
                    sys.exit(os.path.normpath(path) + " is out of date: rerun tools/parity_reference.py")
            print(os.path.normpath(path), "is current")
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        print("wrote", os.path.normpath(path))


if __name__ == "__main__":
    main()
