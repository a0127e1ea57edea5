"""Time the stratified bootstrap against a replicate-by-replicate reference.

Reference shape (the reference report's quality evaluation): 600 problems in 30 template strata, 3 seeds, B = 20,000.
Both implementations draw ``rng.integers(0, n_s, size=(B, n_s))`` per stratum, in
stratum order, from the same ``Generator(PCG64(seed))``, so their lower bounds must
agree; the script fails if they differ in the printed digits.

Run: ``.venv/bin/python benchmarks/bootstrap.py``
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import pandas as pd

from sitegen.statistics.quality import (
    QUANTILE_METHOD,
    non_inferiority,
    problem_differences,
    stratified_bootstrap_means,
)

N_STRATA, PER_STRATUM, SEEDS = 30, 20, (1234, 101234, 201234)
N_BOOT, RNG_SEED, ALPHA, MARGIN = 20_000, 20260101, 0.05, 0.02
FAST_REPEATS = 5
TARGET_S = 0.5


def synthetic_table(data_seed: int = 0) -> pd.DataFrame:
    """Answers with ~92% accuracy off and a few flips on, like the reference report."""
    rng = np.random.default_rng(data_seed)
    rows = []
    for problem in range(N_STRATA * PER_STRATUM):
        for seed in SEEDS:
            off = bool(rng.random() < 0.92)
            on = off if rng.random() < 0.98 else not off
            for factor, correct in (("off", off), ("on", on)):
                rows.append(
                    {
                        "problem_id": f"p-{problem:03d}",
                        "template_id": f"t-{problem // PER_STRATUM:02d}",
                        "seed": seed,
                        "factor": factor,
                        "correct": correct,
                    }
                )
    return pd.DataFrame(rows)


def reference_lower_bound(strata: list[np.ndarray], n_boot: int, rng_seed: int) -> float:
    """Straightforward version: the same draws, then a Python loop over replicates."""
    rng = np.random.Generator(np.random.PCG64(rng_seed))
    draws = [rng.integers(0, len(values), size=(n_boot, len(values))) for values in strata]
    plain = [values.tolist() for values in strata]
    n_total = sum(len(values) for values in plain)
    means = []
    for replicate in range(n_boot):
        total = 0.0
        for values, indices in zip(plain, draws, strict=True):
            for index in indices[replicate].tolist():
                total += values[index]
        means.append(total / n_total)
    return float(np.quantile(means, ALPHA, method=QUANTILE_METHOD))


def main() -> None:
    table = synthetic_table()
    per_problem = problem_differences(table)
    strata = [g["difference"].to_numpy() for _, g in per_problem.groupby("template_id", sort=True)]

    core_times, full_times = [], []
    for _ in range(FAST_REPEATS):
        start = time.perf_counter()
        means = stratified_bootstrap_means(strata, N_BOOT, RNG_SEED)
        fast_core = float(np.quantile(means, ALPHA, method=QUANTILE_METHOD))
        core_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = non_inferiority(table, MARGIN, rng_seed=RNG_SEED, n_boot=N_BOOT)
        full_times.append(time.perf_counter() - start)

    start = time.perf_counter()
    reference = reference_lower_bound(strata, N_BOOT, RNG_SEED)
    reference_time = time.perf_counter() - start

    core, full = statistics.median(core_times), statistics.median(full_times)
    print(
        f"problems={len(per_problem)} strata={len(strata)} seeds={len(SEEDS)} "
        f"B={N_BOOT} rng_seed={RNG_SEED}"
    )
    print(f"point estimate d            = {result.difference:+.6f}")
    print(
        f"lower bound, vectorized     = {fast_core:+.6f}  (non_inferiority: {result.lower_bound:+.6f})"
    )
    print(f"lower bound, reference loop = {reference:+.6f}")
    print(f"vectorized bootstrap  median of {FAST_REPEATS}: {core:.3f} s")
    print(f"non_inferiority(df)   median of {FAST_REPEATS}: {full:.3f} s  (target <= {TARGET_S} s)")
    print(f"reference loop        one run: {reference_time:.3f} s")
    print(f"speed-up reference / vectorized: {reference_time / core:.0f}x")
    same = f"{fast_core:.6f}" == f"{reference:.6f}" == f"{result.lower_bound:.6f}"
    print(f"lower bounds equal to 6 decimals: {same}")
    print(f"target met: {full <= TARGET_S}")
    assert same, "vectorized and reference lower bounds differ"


if __name__ == "__main__":
    main()
