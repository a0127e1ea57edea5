from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sitegen.core.strict_model import field_docstrings
from sitegen.core.text import Bilingual
from sitegen.statistics.quality import (
    IdenticalShareResult,
    NonInferiorityResult,
    Note,
    SensitivityResult,
    clopper_pearson_upper,
    greedy_identical_share,
    non_inferiority,
    pair_table,
    post_hoc,
    problem_differences,
    sensitivity,
    stratified_bootstrap_means,
)

SEEDS = (1234, 101234, 201234)
N_TEMPLATES, PER_TEMPLATE = 30, 20
N_PROBLEMS = N_TEMPLATES * PER_TEMPLATE


def _table(outcome) -> pd.DataFrame:
    """600 problems × 3 seeds × off/on; ``outcome(problem, seed_index)`` → (off, on)."""
    rows = []
    for problem in range(N_PROBLEMS):
        template = problem // PER_TEMPLATE
        for seed_index, seed in enumerate(SEEDS):
            off, on = outcome(problem, seed_index)
            for factor, correct in (("off", off), ("on", on)):
                rows.append(
                    {
                        "problem_id": f"p-{problem:03d}",
                        "template_id": f"t-{template:02d}",
                        "domain": f"d-{template // 5}",
                        "seed": seed,
                        "factor": factor,
                        "correct": correct,
                    }
                )
    return pd.DataFrame(rows)


def seed_report_table() -> pd.DataFrame:
    """Totals of the `000_…` report: off 1664/1800, on 1664/1800, 11 problems off-only.

    11 off-only pairs on 11 problems, 11 on-only pairs on 11 other problems, 125 pairs
    where both fail, all other pairs both correct (1653).
    """
    off_only = {7 + 53 * j for j in range(11)}
    on_only = {31 + 53 * j for j in range(11)}
    others = [p for p in range(N_PROBLEMS) if p not in off_only | on_only]
    both_fail = {(p, s) for p in others[:42] for s in range(3)}
    both_fail -= {(others[41], 2)}  # 41 × 3 + 2 = 125 pairs

    def outcome(problem, seed_index):
        if seed_index == 0 and problem in off_only:
            return True, False
        if seed_index == 0 and problem in on_only:
            return False, True
        failed = (problem, seed_index) in both_fail
        return not failed, not failed

    return _table(outcome)


@pytest.fixture(scope="module")
def seed_table() -> pd.DataFrame:
    return seed_report_table()


@pytest.mark.parametrize(
    "model", [NonInferiorityResult, SensitivityResult, IdenticalShareResult, Note, Bilingual]
)
def test_every_field_has_a_docstring_for_the_data_dictionary(model):
    assert [name for name in model.model_fields if name not in field_docstrings(model)] == []


def test_clopper_pearson_reproduces_the_reference_bound():
    assert f"{clopper_pearson_upper(11, 600) * 100:.3f}" == "3.016"


def test_clopper_pearson_solves_the_exact_binomial_tail():
    upper = clopper_pearson_upper(11, 600)
    tail = math.fsum(math.comb(600, i) * upper**i * (1 - upper) ** (600 - i) for i in range(12))
    assert tail == pytest.approx(0.05, abs=1e-12)
    # k = 0 has the closed form 1 − alpha^(1/n).
    assert clopper_pearson_upper(0, 600) == pytest.approx(1 - 0.05 ** (1 / 600), abs=1e-14)
    assert clopper_pearson_upper(600, 600) == 1.0
    assert clopper_pearson_upper(11, 600, alpha=0.01) > clopper_pearson_upper(11, 600)
    with pytest.raises(ValueError):
        clopper_pearson_upper(601, 600)


def test_seed_report_totals_and_pair_table(seed_table):
    table = pair_table(seed_table)
    assert table.to_dict("records") == [
        {"n_pairs": 1800, "both": 1653, "off_only": 11, "on_only": 11, "neither": 125}
    ]
    by_domain = pair_table(seed_table, by="domain")
    assert list(by_domain["domain"]) == [f"d-{i}" for i in range(6)]
    assert by_domain["n_pairs"].tolist() == [300] * 6
    assert by_domain[["both", "off_only", "on_only", "neither"]].sum().tolist() == [
        1653,
        11,
        11,
        125,
    ]


def test_sensitivity_reproduces_11_of_600(seed_table):
    result = sensitivity(seed_table)
    assert (result.k_off_only_problems, result.n_problems) == (11, 600)
    assert result.k_on_only_problems == 11
    assert f"{result.upper_bound * 100:.3f}" == "3.016"


def test_non_inferiority_on_the_seed_report_table(seed_table):
    result = non_inferiority(seed_table, margin=0.02, rng_seed=20260101, n_boot=2000)
    assert (result.n_problems, result.n_pairs, result.n_strata) == (600, 1800, 30)
    assert (result.correct_off, result.correct_on) == (1664, 1664)
    assert result.accuracy_off == pytest.approx(1664 / 1800)
    assert result.difference == pytest.approx(0.0, abs=1e-15)
    assert result.lower_bound < 0 < result.upper_percentile
    assert result.lower_bound > -0.02 and result.non_inferior
    assert not result.no_discordant_pairs and not result.interval_collapsed
    assert result.notes == () and not result.post_hoc
    again = non_inferiority(seed_table, margin=0.02, rng_seed=20260101, n_boot=2000)
    assert again == result


def test_non_inferiority_runs_with_the_reference_20000_replicates(seed_table):
    result = non_inferiority(seed_table, margin=0.02, rng_seed=1)
    assert result.n_boot == 20_000 and result.rng_seed == 1
    assert -0.02 < result.lower_bound < 0 and result.non_inferior


def test_a_clearly_inferior_on_condition_fails():
    # On loses every seed of one problem in ten: d = −0.1 on average.
    table = _table(lambda problem, seed: (True, problem % 10 != 0))
    result = non_inferiority(table, margin=0.02, rng_seed=3, n_boot=2000)
    assert result.difference == pytest.approx(-0.1)
    assert result.upper_percentile < -0.02
    assert not result.non_inferior


def test_no_discordant_pair_collapses_the_interval_and_says_so():
    table = _table(lambda problem, seed: (problem % 7 != 0,) * 2)
    result = non_inferiority(table, margin=0.02, rng_seed=3, n_boot=500)
    assert result.no_discordant_pairs and result.interval_collapsed
    assert result.lower_bound == result.upper_percentile == 0.0
    assert result.non_inferior  # by the rule; the note keeps it from reading as proof
    assert [note.code for note in result.notes] == ["no-discordant-pairs"]
    assert "not proof" in result.notes[0].text.en
    assert "証明ではありません" in result.notes[0].text.ja


def test_discordant_pairs_that_cancel_within_problems_are_flagged():
    def outcome(problem, seed):
        if problem == 5 and seed in (0, 1):
            return (True, False) if seed == 0 else (False, True)
        return True, True

    result = non_inferiority(_table(outcome), margin=0.02, rng_seed=3, n_boot=500)
    assert not result.no_discordant_pairs and result.interval_collapsed
    assert [note.code for note in result.notes] == ["interval-collapsed"]


def test_post_hoc_is_labelled_and_leaves_the_primary_alone(seed_table):
    reason = Bilingual(ja="設問の表現が曖昧だったため。", en="The wording was ambiguous.")
    primary = non_inferiority(seed_table, margin=0.02, rng_seed=9, n_boot=1000)
    result = post_hoc(
        seed_table,
        exclude_templates=["t-03"],
        label="exclude-t-03",
        reason=reason,
        margin=0.02,
        rng_seed=9,
        n_boot=1000,
    )
    assert result.post_hoc and result.label == "exclude-t-03" and result.reason == reason
    assert result.excluded_templates == ("t-03",)
    assert (result.n_problems, result.n_pairs, result.n_strata) == (580, 1740, 29)
    assert [note.code for note in result.notes] == ["post-hoc"]
    assert non_inferiority(seed_table, margin=0.02, rng_seed=9, n_boot=1000) == primary
    with pytest.raises(ValueError, match="t-99"):
        post_hoc(
            seed_table,
            exclude_templates=["t-99"],
            label="x",
            reason=reason,
            margin=0.02,
            rng_seed=9,
        )


def test_the_problem_is_the_unit_of_the_difference():
    table = _table(lambda problem, seed: (True, not (problem == 0 and seed == 0)))
    per_problem = problem_differences(table)
    first = per_problem.set_index("problem_id").loc["p-000"]
    assert first["difference"] == pytest.approx(-1 / 3)
    assert (first["n_seeds"], first["correct_off"], first["correct_on"]) == (3, 3, 2)


def test_bootstrap_matches_a_replicate_by_replicate_loop():
    strata = [np.array([0.0, -1 / 3, 1 / 3, 0.0]), np.array([1.0, 0.0]), np.array([0.5])]
    fast = stratified_bootstrap_means(strata, n_boot=300, rng_seed=42)
    rng = np.random.Generator(np.random.PCG64(42))
    draws = [rng.integers(0, len(values), size=(300, len(values))) for values in strata]
    slow = [
        sum(values[d[b]].sum() for values, d in zip(strata, draws, strict=True)) / 7
        for b in range(300)
    ]
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-15)
    assert not np.array_equal(fast, stratified_bootstrap_means(strata, n_boot=300, rng_seed=43))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda df: df.iloc[1:], "incomplete pair"),
        (lambda df: pd.concat([df, df.iloc[:1]]), "more than one"),
        (lambda df: df.assign(factor=df["factor"].replace("on", "yes")), "factor"),
        (lambda df: df.drop(columns="correct"), "missing columns"),
        (lambda df: df.assign(correct=df["correct"].astype(str)), "True or False"),
    ],
)
def test_malformed_pairs_are_rejected(seed_table, mutate, message):
    with pytest.raises(ValueError, match=message):
        pair_table(mutate(seed_table))


def test_identical_share_compares_tokens_when_both_sides_have_them():
    rows = [
        ("a", 1, "off", "x", [1, 2, 3]),
        ("a", 1, "on", "x", [1, 2, 4]),  # same text, different tokens: not identical
        ("b", 1, "off", "y", (5, 6)),
        ("b", 1, "on", "y", [5, 6]),
        ("c", 1, "off", "z", None),
        ("c", 1, "on", "z", [7]),  # one side lacks tokens: compared by text
        ("d", 1, "off", "u", None),
        ("d", 1, "on", "v", None),
    ]
    df = pd.DataFrame(rows, columns=["problem_id", "seed", "factor", "text", "tokens"])
    result = greedy_identical_share(df)
    assert (result.n_pairs, result.n_identical) == (4, 2)
    assert (result.n_compared_by_tokens, result.n_compared_by_text) == (2, 2)
    assert result.share == 0.5
    by_text = greedy_identical_share(df.drop(columns="tokens"))
    assert (by_text.n_identical, by_text.n_compared_by_text) == (3, 4)
