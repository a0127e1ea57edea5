"""Quality statistics over paired off/on results.

Input: one row per scored answer with at least the columns

- ``problem_id`` – the problem (or document task) answered;
- ``template_id`` – its template, the bootstrap stratum (non-inferiority only);
- ``seed`` – the sampling seed; a *pair* is one problem × seed run with the factor off and on;
- ``factor`` – ``"off"`` or ``"on"``;
- ``correct`` – bool, True only for the outcome ``correct``.

Every (problem, seed) must have exactly one ``off`` row and one ``on`` row; anything else
raises ``ValueError`` rather than silently dropping answers. Warm-ups and failed attempts
must be filtered out by the caller. All functions are pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from sitegen.core.strict_model import StrictModel
from sitegen.core.text import Bilingual

FACTOR_LEVELS = ("off", "on")
PAIR_COUNT_COLUMNS = ("n_pairs", "both", "off_only", "on_only", "neither")
QUANTILE_METHOD: Final = "linear"
RNG_NAME = "numpy.random.Generator(PCG64)"


class Note(StrictModel):
    """A caveat a page must show next to a result."""

    code: str
    """Stable id of the caveat, e.g. ``no-discordant-pairs``."""
    text: Bilingual
    """What the page says."""


class NonInferiorityResult(StrictModel):
    """Stratified-bootstrap non-inferiority test of accuracy(on) − accuracy(off).

    Estimator: each problem's difference is its mean correctness with the factor on minus
    off over its seeds (the problem is the unit). The point estimate is the mean of these
    differences over problems. Problems are resampled with replacement within each template
    stratum (each stratum keeps its size); the lower bound is the ``alpha`` quantile of the
    bootstrap means (percentile method, numpy ``linear`` interpolation).
    """

    margin: float
    """Pre-registered non-inferiority margin as a proportion (0.02 = 2 percentage points)."""
    alpha: float
    """One-sided error rate; the lower bound is a one-sided (1 − alpha) bound."""
    n_boot: int
    """Bootstrap replicates B (reference: 20,000)."""
    rng_seed: int
    """Seed of the bootstrap random generator, recorded for reproduction."""
    rng: str
    """Random generator used."""
    quantile_method: str
    """numpy quantile interpolation used for the percentiles."""
    n_problems: int
    """Problems (the unit of analysis)."""
    n_pairs: int
    """Off/on pairs (problem × seed)."""
    n_strata: int
    """Template strata the bootstrap resamples within."""
    correct_off: int
    """Correct answers with the factor off, over all pairs."""
    correct_on: int
    """Correct answers with the factor on, over all pairs."""
    accuracy_off: float
    """Mean over problems of the per-problem accuracy with the factor off."""
    accuracy_on: float
    """Mean over problems of the per-problem accuracy with the factor on."""
    difference: float
    """Point estimate of accuracy(on) − accuracy(off) (problem-level mean)."""
    lower_bound: float
    """One-sided (1 − alpha) lower bound: the alpha quantile of the bootstrap means."""
    upper_percentile: float
    """The (1 − alpha) quantile of the bootstrap means (shown for context, not a test)."""
    non_inferior: bool
    """True iff lower_bound > −margin."""
    no_discordant_pairs: bool
    """True when no pair differs between off and on: the interval collapses to 0, which is
    not proof that the difference is zero."""
    interval_collapsed: bool
    """True when every bootstrap mean is the same value (zero-width interval)."""
    post_hoc: bool
    """True for an analysis added after results were seen; it never replaces the primary."""
    label: str | None
    """Identifier of a post-hoc analysis; null for the pre-registered primary result."""
    reason: Bilingual | None
    """Why a post-hoc analysis was added; null for the primary result."""
    excluded_templates: tuple[str, ...]
    """Templates removed before the analysis (post hoc only)."""
    notes: tuple[Note, ...]
    """Caveats a page must show with this result."""


class SensitivityResult(StrictModel):
    """How many problems got worse on at least one seed, with an exact binomial bound."""

    k_off_only_problems: int
    """Problems where at least one seed was correct off and wrong on."""
    k_on_only_problems: int
    """Problems where at least one seed was correct on and wrong off (for context)."""
    n_problems: int
    """Problems N."""
    share: float
    """k_off_only_problems / N."""
    upper_bound: float
    """One-sided (1 − alpha) Clopper–Pearson upper bound of that share, assuming problems
    are independent binomial trials."""
    alpha: float
    """One-sided error rate of the bound."""


class IdenticalShareResult(StrictModel):
    """How many off/on pairs produced exactly the same output."""

    n_pairs: int
    """Pairs compared."""
    n_identical: int
    """Pairs whose outputs are identical."""
    share: float
    """n_identical / n_pairs."""
    n_compared_by_tokens: int
    """Pairs compared by full token sequences (both sides had tokens)."""
    n_compared_by_text: int
    """Pairs compared by output text because a token sequence was unavailable."""


def _require(df: pd.DataFrame, columns: Iterable[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"missing columns: {', '.join(missing)}")


def _pairs(df: pd.DataFrame, keys: Sequence[str], values: Sequence[str]) -> pd.DataFrame:
    """One row per pair: ``keys`` plus ``<value>_off`` and ``<value>_on`` for each value."""
    keys, values = list(keys), list(values)
    _require(df, [*keys, "factor", *values])
    if df[keys].isna().any().any():
        raise ValueError(f"null values in {', '.join(keys)}")
    unknown = set(df["factor"].unique()) - set(FACTOR_LEVELS)
    if unknown:
        raise ValueError(f"factor must be 'off' or 'on', got {sorted(map(str, unknown))}")
    halves = {}
    for level in FACTOR_LEVELS:
        half = df.loc[df["factor"] == level, keys + values]
        duplicated = half[half.duplicated(keys, keep=False)]
        if not duplicated.empty:
            first = duplicated.iloc[0][keys].to_dict()
            raise ValueError(f"more than one {level!r} row for {first}")
        halves[level] = half
    merged = halves["off"].merge(
        halves["on"], on=keys, how="outer", suffixes=("_off", "_on"), indicator=True
    )
    unmatched = merged[merged["_merge"] != "both"]
    if not unmatched.empty:
        first = unmatched.iloc[0][keys].to_dict()
        raise ValueError(f"{len(unmatched)} incomplete pair(s), e.g. {first}")
    return merged.drop(columns="_merge").sort_values(keys, kind="stable").reset_index(drop=True)


def _correct_pairs(df: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    pairs = _pairs(df, keys, ["correct"])
    for column in ("correct_off", "correct_on"):
        # A string such as "False" would silently cast to True.
        if not pairs[column].isin([True, False]).all():
            raise ValueError("correct must be True or False on every row")
        pairs[column] = pairs[column].astype(bool)
    return pairs


def pair_table(df: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Counts of pairs by result: both correct, off only, on only, neither.

    Without ``by``: one row for the whole set passed in. With ``by`` (e.g. ``domain``, or
    ``item`` for document tasks, where the item is part of the pair): one row per group,
    sorted by group. Columns: ``[by,] n_pairs, both, off_only, on_only, neither``.
    """
    keys = ["problem_id", "seed"] + ([by] if by else [])
    pairs = _correct_pairs(df, keys)
    off, on = pairs["correct_off"], pairs["correct_on"]
    counts = pd.DataFrame(
        {
            "n_pairs": 1,
            "both": off & on,
            "off_only": off & ~on,
            "on_only": ~off & on,
            "neither": ~off & ~on,
        }
    ).astype("int64")
    if by is None:
        return counts.sum().to_frame().T.reset_index(drop=True)
    counts[by] = pairs[by]
    return counts.groupby(by, sort=True)[list(PAIR_COUNT_COLUMNS)].sum().reset_index()


def problem_differences(df: pd.DataFrame) -> pd.DataFrame:
    """Per-problem results over seeds and the difference of accuracies (on − off).

    Columns: ``problem_id, template_id, n_seeds, correct_off, correct_on, discordant,
    accuracy_off, accuracy_on, difference``, sorted by template, then problem (the order
    the bootstrap indexes).
    """
    pairs = _correct_pairs(df, ["problem_id", "template_id", "seed"])
    templates_per_problem = pairs.groupby("problem_id")["template_id"].nunique()
    mixed = templates_per_problem[templates_per_problem > 1]
    if not mixed.empty:
        raise ValueError(f"problems with several templates, e.g. {list(mixed.index[:3])}")
    pairs["discordant"] = pairs["correct_off"] != pairs["correct_on"]
    per_problem = (
        pairs.groupby(["template_id", "problem_id"], sort=True)
        .agg(
            n_seeds=("seed", "size"),
            correct_off=("correct_off", "sum"),
            correct_on=("correct_on", "sum"),
            discordant=("discordant", "sum"),
        )
        .reset_index()
    )
    per_problem["accuracy_off"] = per_problem["correct_off"] / per_problem["n_seeds"]
    per_problem["accuracy_on"] = per_problem["correct_on"] / per_problem["n_seeds"]
    per_problem["difference"] = per_problem["accuracy_on"] - per_problem["accuracy_off"]
    columns = ["problem_id", "template_id", "n_seeds", "correct_off", "correct_on", "discordant"]
    return per_problem[[*columns, "accuracy_off", "accuracy_on", "difference"]]


def stratified_bootstrap_means(
    strata: Sequence[np.ndarray], n_boot: int, rng_seed: int
) -> npt.NDArray[np.float64]:
    """Bootstrap means of all values, resampling with replacement within each stratum.

    RNG consumption (the contract a reference implementation reproduces): a fresh
    ``Generator(PCG64(rng_seed))``; for each stratum in the given order, one call
    ``rng.integers(0, n_s, size=(n_boot, n_s))`` whose row b holds replicate b's indices.
    """
    n_total = sum(len(values) for values in strata)
    if n_total == 0 or any(len(values) == 0 for values in strata):
        raise ValueError("every stratum needs at least one value")
    rng = np.random.Generator(np.random.PCG64(rng_seed))
    totals = np.zeros(n_boot)
    for values in strata:
        indices = rng.integers(0, len(values), size=(n_boot, len(values)))
        totals += np.asarray(values, dtype=float)[indices].sum(axis=1)
    return totals / n_total


_NO_DISCORDANT = Note(
    code="no-discordant-pairs",
    text=Bilingual(
        ja="off と on で正誤が分かれた組が一つもないため、bootstrap の区間は 0 に縮んでいます。"
        "これは差が厳密に 0 であることの証明ではありません。",
        en="No pair differs between off and on, so the bootstrap interval collapses to 0. "
        "This is not proof that the difference is zero.",
    ),
)
_CANCELLED = Note(
    code="interval-collapsed",
    text=Bilingual(
        ja="正誤が分かれた組は同じ問題の中で相殺され、問題ごとの差がすべて 0 のため、"
        "bootstrap の区間は 0 に縮んでいます。これは差が厳密に 0 であることの証明ではありません。",
        en="Discordant pairs cancel within each problem, so every problem's difference is 0 and "
        "the bootstrap interval collapses to 0. This is not proof that the difference is zero.",
    ),
)


def _post_hoc_note(label: str, reason: Bilingual) -> Note:
    return Note(
        code="post-hoc",
        text=Bilingual(
            ja=f"事後分析（{label}）: {reason.ja} 事前登録した主結果を置き換えるものではありません。",
            en=f"Post-hoc analysis ({label}): {reason.en} It does not replace the "
            "pre-registered primary result.",
        ),
    )


def _non_inferiority(
    df: pd.DataFrame,
    margin: float,
    n_boot: int,
    rng_seed: int,
    alpha: float,
    post_hoc_label: str | None = None,
    post_hoc_reason: Bilingual | None = None,
    excluded_templates: Sequence[str] = (),
) -> NonInferiorityResult:
    if not 0 < margin < 1:
        raise ValueError("margin is a proportion in (0, 1), e.g. 0.02 for 2 points")
    if not 0 < alpha < 0.5:
        raise ValueError("alpha must be in (0, 0.5)")
    if n_boot < 1:
        raise ValueError("n_boot must be at least 1")
    per_problem = problem_differences(df)
    if per_problem.empty:
        raise ValueError("no pairs to analyse")
    strata = [
        group["difference"].to_numpy() for _, group in per_problem.groupby("template_id", sort=True)
    ]
    means = stratified_bootstrap_means(strata, n_boot, rng_seed)
    lower = float(np.quantile(means, alpha, method=QUANTILE_METHOD))
    upper = float(np.quantile(means, 1 - alpha, method=QUANTILE_METHOD))
    no_discordant = int(per_problem["discordant"].sum()) == 0
    collapsed = bool(means.min() == means.max())
    notes = []
    if no_discordant:
        notes.append(_NO_DISCORDANT)
    elif collapsed:
        notes.append(_CANCELLED)
    is_post_hoc = post_hoc_label is not None
    if post_hoc_label is not None and post_hoc_reason is not None:
        notes.append(_post_hoc_note(post_hoc_label, post_hoc_reason))
    return NonInferiorityResult(
        margin=margin,
        alpha=alpha,
        n_boot=n_boot,
        rng_seed=rng_seed,
        rng=RNG_NAME,
        quantile_method=QUANTILE_METHOD,
        n_problems=len(per_problem),
        n_pairs=int(per_problem["n_seeds"].sum()),
        n_strata=len(strata),
        correct_off=int(per_problem["correct_off"].sum()),
        correct_on=int(per_problem["correct_on"].sum()),
        accuracy_off=float(per_problem["accuracy_off"].mean()),
        accuracy_on=float(per_problem["accuracy_on"].mean()),
        difference=float(per_problem["difference"].mean()),
        lower_bound=lower,
        upper_percentile=upper,
        non_inferior=lower > -margin,
        no_discordant_pairs=no_discordant,
        interval_collapsed=collapsed,
        post_hoc=is_post_hoc,
        label=post_hoc_label,
        reason=post_hoc_reason,
        excluded_templates=tuple(excluded_templates),
        notes=tuple(notes),
    )


def non_inferiority(
    df: pd.DataFrame,
    margin: float,
    *,
    rng_seed: int,
    n_boot: int = 20_000,
    alpha: float = 0.05,
) -> NonInferiorityResult:
    """Pre-registered non-inferiority test of on vs off.

    d = accuracy(on) − accuracy(off), first averaged per problem over its seeds; the
    problem is the unit. Stratified bootstrap: problems are resampled with replacement
    within each ``template_id`` stratum, ``n_boot`` times, with
    ``Generator(PCG64(rng_seed))`` (see :func:`stratified_bootstrap_means` for the draw
    order). The one-sided (1 − alpha) lower bound is the alpha quantile of the bootstrap
    means (percentile method, numpy ``linear`` interpolation, i.e. Hyndman–Fan type 7).
    Non-inferior iff lower bound > −margin. With no discordant pair the interval collapses
    to 0; the result flags it and carries a note that this is not proof of zero difference.
    """
    return _non_inferiority(df, margin, n_boot, rng_seed, alpha)


def post_hoc(
    df: pd.DataFrame,
    *,
    exclude_templates: Sequence[str],
    label: str,
    reason: Bilingual,
    margin: float,
    rng_seed: int,
    n_boot: int = 20_000,
    alpha: float = 0.05,
) -> NonInferiorityResult:
    """The same test with whole templates removed, labelled ``post_hoc=True``.

    A separate result for pages to show next to the primary one, never instead of it
    (§5 C-POSTHOC). Every excluded template must occur in ``df``.
    """
    _require(df, ["template_id"])
    excluded = sorted(set(exclude_templates))
    if not excluded:
        raise ValueError("a post-hoc exclusion names at least one template")
    absent = [t for t in excluded if t not in set(df["template_id"])]
    if absent:
        raise ValueError(f"templates not in the data: {', '.join(absent)}")
    kept = df[~df["template_id"].isin(excluded)]
    return _non_inferiority(kept, margin, n_boot, rng_seed, alpha, label, reason, excluded)


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p), summed exactly term by term in log space."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    log_n_factorial = math.lgamma(n + 1)
    return math.fsum(
        math.exp(
            log_n_factorial
            - math.lgamma(i + 1)
            - math.lgamma(n - i + 1)
            + i * log_p
            + (n - i) * log_q
        )
        for i in range(k + 1)
    )


def clopper_pearson_upper(k: int, n: int, alpha: float = 0.05) -> float:
    """One-sided (1 − alpha) Clopper–Pearson upper bound for a proportion k/n.

    The p solving P(X ≤ k | n, p) = alpha (equivalently the 1 − alpha quantile of
    Beta(k + 1, n − k)), found by bisection on the exact binomial tail; 1 when k = n.
    Reference: k = 11, n = 600 → 0.030164 (3.016%).
    """
    if n < 1 or not 0 <= k <= n:
        raise ValueError("need 0 <= k <= n and n >= 1")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    if k == n:
        return 1.0
    low, high = k / n, 1.0  # the tail at p = k/n is above alpha for alpha < 0.5
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if _binomial_cdf(k, n, middle) > alpha:
            low = middle
        else:
            high = middle
    return high


def sensitivity(df: pd.DataFrame, alpha: float = 0.05) -> SensitivityResult:
    """k = problems where any seed is correct off and wrong on; k/N with its CP bound (§4.4)."""
    pairs = _correct_pairs(df, ["problem_id", "seed"])
    pairs["off_only"] = pairs["correct_off"] & ~pairs["correct_on"]
    pairs["on_only"] = pairs["correct_on"] & ~pairs["correct_off"]
    per_problem = pairs.groupby("problem_id")[["off_only", "on_only"]].any()
    k, n = int(per_problem["off_only"].sum()), len(per_problem)
    return SensitivityResult(
        k_off_only_problems=k,
        k_on_only_problems=int(per_problem["on_only"].sum()),
        n_problems=n,
        share=k / n,
        upper_bound=clopper_pearson_upper(k, n, alpha),
        alpha=alpha,
    )


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def greedy_identical_share(df: pd.DataFrame) -> IdenticalShareResult:
    """Share of off/on pairs with identical output.

    Columns: ``problem_id, seed, factor``, the output as ``text`` or its digest
    ``text_sha256``, and optionally ``tokens`` (a sequence of token ids including the stop
    token, or null). A pair is compared by tokens when both sides have them, otherwise by
    text.
    """
    text = "text_sha256" if "text_sha256" in df.columns else "text"
    values = [text] + (["tokens"] if "tokens" in df.columns else [])
    pairs = _pairs(df, ["problem_id", "seed"], values)
    n_identical = by_tokens = 0
    for row in pairs.itertuples(index=False):
        tokens_off = getattr(row, "tokens_off", None)
        tokens_on = getattr(row, "tokens_on", None)
        if (
            tokens_off is not None
            and tokens_on is not None
            and not _is_missing(tokens_off)
            and not _is_missing(tokens_on)
        ):
            by_tokens += 1
            n_identical += tuple(tokens_off) == tuple(tokens_on)
        else:
            n_identical += getattr(row, f"{text}_off") == getattr(row, f"{text}_on")
    n_pairs = len(pairs)
    if n_pairs == 0:
        raise ValueError("no pairs to compare")
    return IdenticalShareResult(
        n_pairs=n_pairs,
        n_identical=n_identical,
        share=n_identical / n_pairs,
        n_compared_by_tokens=by_tokens,
        n_compared_by_text=n_pairs - by_tokens,
    )
