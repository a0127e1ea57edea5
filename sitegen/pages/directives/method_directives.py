"""Directives of the method and data pages: what was measured on what, how, the rules
the build enforces, the downloads, every answer, the signature and what is left out."""

from __future__ import annotations

from markupsafe import Markup

from sitegen.pages.directives.common import list_separator, render_partial
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.pages.downloads import ANSWERS_PAGE_SIZE
from sitegen.pages.schema import SCHEMA_MODELS, field_dictionary
from sitegen.records.record_models import TrialRecord
from sitegen.statistics.headlines import MIN_RATIO_TRIALS
from sitegen.validation.rules import load_rules, registered_checks

GLOSSARY_TERMS = (
    "ttft",
    "first_answer",
    "gen_tps",
    "tpot",
    "itl",
    "acceptance",
    "capacity",
    "inconclusive",
)
"""Terms with a definition (``glossary.<term>``) and a display name (``term.<term>``)."""

ANSWER_PAGES_LISTED = 20
"""Up to this many pages of answers, each has its own button (and its own link without
scripts); beyond, the pager and the records download reach them."""


@directive("system_table")
def system_table(ctx: PageContext) -> Markup:
    """Per condition: devices, driver, runtime, interconnect, CPU, engine, model files with
    every shard's SHA-256, flags, environment, sampling and template arguments, from the
    usable records' provenance (values that differ are all listed)."""
    report = ctx.require_report()
    return render_partial(
        ctx, "system_table.html", report=report, conditions=report.system, labels=ctx.labels()
    )


@directive("excluded")
def excluded(ctx: PageContext) -> Markup:
    return render_partial(ctx, "excluded.html", report=ctx.require_report())


@directive("conditions_table")
def conditions_table(ctx: PageContext) -> Markup:
    return render_partial(ctx, "conditions.html", report=ctx.require_report())


@directive("provenance")
def provenance(ctx: PageContext) -> Markup:
    report = ctx.require_report()
    first = report.campaign.table.provenance(0) if len(report.campaign) else None
    return render_partial(ctx, "provenance.html", report=report, provenance=first)


@directive("downloads")
def downloads(ctx: PageContext) -> Markup:
    return render_partial(
        ctx, "downloads.html", report=ctx.require_report(), files=ctx.download_files()
    )


@directive("answers")
def answers(ctx: PageContext) -> Markup:
    """Every answer's full text, one page of ``ANSWERS_PAGE_SIZE`` loaded on demand: a
    pager of fixed size (first, previous, a page number, next, last), with a button per
    page only up to ``ANSWER_PAGES_LISTED`` pages (400,000 answers are 8,000 pages)."""
    report = ctx.require_report()
    count = len(report.campaign)
    pages = [
        {"first": start + 1, "last": min(start + ANSWERS_PAGE_SIZE, count)}
        for start in range(0, count, ANSWERS_PAGE_SIZE)
    ]
    t = ctx.catalog.t
    labels = {
        key: t(f"answers.{key}") for key in ("loading", "failed", "page", "text", "reasoning")
    }
    codes: tuple[str, ...] = ("role.warmup", "role.measured", "status.ok", "status.failed")
    codes += tuple(f"finish.{f}" for f in ("stop", "length", "error"))
    labels.update({code: t(code) for code in codes})
    return render_partial(
        ctx,
        "answers.html",
        report=report,
        pages=pages,
        page_size=ANSWERS_PAGE_SIZE,
        labels=labels,
        listed_pages=ANSWER_PAGES_LISTED,
    )


@directive("signing")
def signing(ctx: PageContext) -> Markup:
    """Who signed the data: the project's key and when this campaign's manifest was
    signed, with the fingerprint for customers to pin and the ``sitegen audit`` command
    that checks the report against it; or that the project declares no key."""
    report = ctx.require_report()
    if report.signing_key is None:
        unsigned = ctx.catalog.t("signing.unsigned")
        return render_partial(ctx, "signing.html", text=unsigned, fingerprint=None)
    text = ctx.catalog.t(
        "signing.signed", fingerprint=report.signing_key, signed_at=report.signed_at or "-"
    )
    return render_partial(ctx, "signing.html", text=text, fingerprint=report.signing_key)


@directive("left_out")
def left_out(ctx: PageContext) -> Markup:
    """The campaigns of this report's plan that the version does not publish, each with
    its id, why and the author's reason, or that there are none (C-UNPUBLISHED; the
    changelog lists those of every plan)."""
    return render_partial(ctx, "left_out.html", entries=ctx.require_report().left_out)


@directive("glossary")
def glossary(ctx: PageContext) -> Markup:
    """The terms the cards explain on hover, defined (method page)."""
    return render_partial(
        ctx, "glossary.html", terms=GLOSSARY_TERMS, min_ratio_trials=MIN_RATIO_TRIALS
    )


@directive("caveat_rules")
def caveat_rules(ctx: PageContext) -> Markup:
    """The rule list, as enforced by the build (method page)."""
    scopes = {
        rule.id: list(dict.fromkeys(c.scope for c in registered_checks() if c.rule_id == rule.id))
        for rule in load_rules()
    }
    return render_partial(
        ctx,
        "caveat_rules.html",
        rules=load_rules(),
        scopes=scopes,
        claim_labels={k for k in ctx.catalog.strings if k.startswith("rules.claim.")},
        sep=list_separator(ctx),
    )


@directive("data_dictionary")
def data_dictionary(ctx: PageContext) -> Markup:
    """Every field of the trial record with its documentation (from the model)."""
    return render_partial(
        ctx,
        "data_dictionary.html",
        rows=field_dictionary(TrialRecord),
        schemas=[f"{name}.schema.json" for name in SCHEMA_MODELS],
    )
