"""The changelog: what changed between a version and its predecessor (campaigns added
or removed, records changed, headline medians moved)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup, escape

from sitegen.core.project import packaged_theme
from sitegen.core.site_layout import CHANGELOG_PAGE
from sitegen.core.text import LANGUAGES
from sitegen.pages.directives import html_environment
from sitegen.pages.i18n import Catalog
from sitegen.pages.render import page_name, to_version_root
from sitegen.pages.safe_json import script_json
from sitegen.publish.archive import PublishedVersion, sha256_bytes
from sitegen.records.layout import sha256_file
from sitegen.records.left_out import LeftOut
from sitegen.statistics.build_series import BuildSeries
from sitegen.statistics.imported_report import ImportedReport
from sitegen.statistics.report import Report
from sitegen.validation.rules import RULE_CATALOG

_FIGURE_DIGITS = 2
"""Medians are compared as displayed (two decimals): smaller moves are rounding noise."""


def headline_figures(
    reports: list[Report],
    imported: Sequence[ImportedReport] = (),
    series: Sequence[BuildSeries] = (),
) -> dict[str, Any]:
    """Per campaign: titles, record count and digest, the date of its own latest record,
    the median generation rate per condition × speed input (the figures the changelog
    compares), the headline ratio with its interval and the treatment's acceptance (the
    history pages), and what a figure may have moved with: the engine builds, the sitegen
    version, the rule catalog; a campaign of one of ``series`` the folder of its series'
    page (``series``), which its history page links to. An imported campaign
    (``imported``: the tool's name) has its titles, records and date, so the changelog
    lists it too."""
    figures = {}
    rules = sha256_bytes(RULE_CATALOG.read_bytes())
    series_of = {b.campaign_id: s.address for s in series for b in s.builds}
    for report in reports:
        speed_inputs = {spec.id for spec in report.plan.inputs}
        medians = {
            f"{row['condition_id']}|{row['input_id']}": round(float(row["gen_tps_median"]), 4)
            for row in report.summary_records
            if row["input_id"] in speed_inputs and pd.notna(row["gen_tps_median"])
        }
        read = report.campaign.records_file
        records = read.sha256 if read else sha256_file(report.campaign.records_path)
        annotations = report.campaign.annotations_path
        figures[report.campaign.campaign_id] = {
            "title": report.plan.title.model_dump(),
            "address": report.slug,
            "records": len(report.campaign),
            "data_date": _date(report.campaign.latest_start),
            # As the build read it: the file is not read again.
            "records_sha256": records,
            # Declared after measuring, so not in the campaign's manifest: recorded here.
            "annotations_sha256": sha256_bytes(annotations.read_bytes())
            if annotations.is_file()
            else None,
            "gen_tps_median": dict(sorted(medians.items())),
            "headline": _headline(report),
            "engine_builds": _engine_builds(report),
            "sitegen_version": report.campaign.table.provenances[0].sitegen_version
            if report.campaign.table.provenances
            else None,
            "publisher_sitegen": sitegen_version(),
            "rules_sha256": rules,
        }
        if (address := series_of.get(report.campaign.campaign_id)) is not None:
            figures[report.campaign.campaign_id]["series"] = address
    for imported_report in imported:
        campaign = imported_report.campaign
        figures[campaign.campaign_id] = {
            "title": dict(imported_report.title),
            "address": imported_report.slug,
            "records": len(campaign.records),
            "records_sha256": campaign.records_file.sha256,
            "data_date": _date(_imported_latest(imported_report)),
            "imported": imported_report.tool_label,
            "annotations_sha256": None,
            "gen_tps_median": {},
            "headline": None,
            "engine_builds": None,
            "publisher_sitegen": sitegen_version(),
            "rules_sha256": rules,
        }
    return figures


def _date(moment: datetime | None) -> str | None:
    """A record's start as its UTC date (``None``: no record)."""
    return None if moment is None else moment.astimezone(UTC).date().isoformat()


def _imported_latest(report: ImportedReport) -> datetime:
    """The latest request start an imported campaign's sources state, else when it was
    imported (its sources' times may be absent)."""
    starts = [
        datetime.fromisoformat(r.measurement.started_at)
        for r in report.campaign.records
        if r.measurement.started_at
    ]
    return max(starts, default=datetime.fromisoformat(report.registration.imported_at))


def sitegen_version() -> str:
    """The sitegen that builds (``unknown`` when run from a checkout never installed)."""
    try:
        return metadata.version("sitegen")
    except metadata.PackageNotFoundError:
        return "unknown"


def _headline(report: Report) -> dict[str, Any] | None:
    """The summary's headline (the plan's chosen one, else the first ratio) with its
    interval, whether it is inconclusive, its n, both medians and the treatment's pooled
    acceptance (``None``: the summary shows no ratio)."""
    key = report.key_figures
    if key is None or key.headline is None:
        return None
    c = key.headline.comparison
    ratio, interval = c.ratio, c.ratio_interval
    baseline, treatment = c.baseline_median, c.treatment_median
    # A ratio is given only with its interval and both medians (``Comparison.ratio``).
    if ratio is None or interval is None or baseline is None or treatment is None:
        return None
    acceptance = key.headline.treatment.get("acceptance")
    return {
        # Inconclusive (interval includes 1×, or too few trials): the history shows the
        # interval and the word, never the point figure alone.
        "inconclusive": key.headline.inconclusive,
        "n": key.headline.ratio_trials,
        "input": c.input_id,
        "baseline": c.baseline,
        "treatment": c.treatment,
        "ratio": round(ratio, 4),
        "low": round(interval[0], 4),
        "high": round(interval[1], 4),
        "baseline_median": round(baseline, 4),
        "treatment_median": round(treatment, 4),
        "acceptance": None if acceptance is None or pd.isna(acceptance) else round(acceptance, 4),
    }


def _engine_builds(report: Report) -> list[str]:
    """Every engine version and build the campaign's records name."""
    return sorted(
        {f"{p.engine.version} ({p.engine.build})" for p in report.campaign.table.provenances}
    )


def predecessor(
    published: list[PublishedVersion], label: str, data_epoch: int
) -> PublishedVersion | None:
    """The version just before ``label`` in archive order (``label`` itself excluded)."""
    earlier = [v for v in published if v.label != label and v.sort_key < (data_epoch, label)]
    return earlier[-1] if earlier else None


@dataclass(frozen=True)
class MovedFigure:
    campaign: str
    condition_id: str
    input_id: str
    before: float
    after: float

    @property
    def change_percent(self) -> float:
        return (self.after - self.before) / self.before * 100 if self.before else float("nan")


@dataclass(frozen=True)
class Changes:
    """What changed between a version and its predecessor."""

    previous_label: str | None
    added: list[str]
    removed: list[str]
    records: list[tuple[str, int, int]]
    """(campaign, records before, records after) for campaigns whose records changed."""
    moved: list[MovedFigure]
    titles: dict[str, dict[str, str]]
    annotations: list[str] = field(default_factory=list)
    """Campaigns whose annotations (review, examples, post-hoc analyses …) changed."""
    addresses: dict[str, str] = field(default_factory=dict)
    """Each campaign's report folder under ``reports/`` in this version."""
    causes: dict[str, list[str]] = field(default_factory=dict)
    """Per campaign with moved figures: what changed with them (``changelog.cause.<key>``:
    ``records``, ``annotations``, ``engine``, ``sitegen``, ``rules``)."""

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.records or self.moved or self.annotations)


def compare(previous: PublishedVersion | None, figures: dict[str, Any]) -> Changes:
    before = previous.figures if previous else {}
    titles = {slug: f["title"] for slug, f in {**before, **figures}.items()}
    common = sorted(before.keys() & figures.keys())
    moved = []
    for slug in common:
        old, new = before[slug]["gen_tps_median"], figures[slug]["gen_tps_median"]
        for key in sorted(old.keys() & new.keys()):
            if round(old[key], _FIGURE_DIGITS) != round(new[key], _FIGURE_DIGITS):
                condition_id, input_id = key.split("|", 1)
                moved.append(MovedFigure(slug, condition_id, input_id, old[key], new[key]))
    return Changes(
        previous_label=previous.label if previous else None,
        added=sorted(figures.keys() - before.keys()) if previous else [],
        removed=sorted(before.keys() - figures.keys()),
        records=[
            (slug, before[slug]["records"], figures[slug]["records"])
            for slug in common
            if before[slug]["records_sha256"] != figures[slug]["records_sha256"]
        ],
        moved=moved,
        titles=titles,
        annotations=[
            slug
            for slug in common
            if before[slug].get("annotations_sha256") != figures[slug]["annotations_sha256"]
        ],
        addresses={slug: f["address"] for slug, f in figures.items()},
        causes={
            slug: _causes(before[slug], figures[slug])
            for slug in sorted({m.campaign for m in moved})
        },
    )


CAUSES = (
    ("records", "records_sha256"),
    ("annotations", "annotations_sha256"),
    ("engine", "engine_builds"),
    ("sitegen", "publisher_sitegen"),
    ("rules", "rules_sha256"),
)
"""What a moved figure may have moved with, and the figure key that shows it."""


def _causes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between a campaign's entries of two versions (a key an older version
    did not record counts as unknown, never as a cause)."""
    found = [name for name, key in CAUSES if key in old and old[key] != new.get(key)]
    return found or ["unknown"]


CHANGELOG_DIR = "changelog"
"""Site-root folder of every version's changes, one file per language."""


def changelog_data_path(lang: str) -> str:
    """The site-root path of every version's changes in one language (``{"html": …}``):
    rewritten by every build, like ``versions.json``."""
    return f"{CHANGELOG_DIR}/{lang}.json"


def changelog_docs(
    changes: Changes, catalogs: dict[str, Catalog], left_out: Sequence[LeftOut] = ()
) -> dict[str, bytes]:
    """The changelog page of one version in both languages (mkdocs docs paths → bytes):
    its own changes without its or its predecessor's label (the page is the same in every
    version of the same figures), which every version's changes replace where scripts can
    fetch them; then every campaign the version leaves out (``left_out``), with why."""
    env = publish_templates()
    partials = html_environment(str(packaged_theme() / "partials"))
    docs = {}
    for lang in LANGUAGES:
        catalog = catalogs[lang]
        table = partials.get_template("_left_out_table.html").render(
            t=catalog.t, lang=lang, entries=left_out
        )
        body = env.get_template("changelog.html").render(
            t=catalog.t,
            lang=lang,
            changes=changes,
            data=f"{to_versions(lang, 1)}../{changelog_data_path(lang)}",
            left_out_count=len(left_out),
            left_out_table=Markup(table),
        )
        docs[page_name(CHANGELOG_PAGE, lang)] = html_page(
            catalog.t("changelog.title"), body, searched=False
        )
    return docs


def publish_templates() -> jinja2.Environment:
    """The templates of the pages made at publish time (changelog, history)."""
    return html_environment(str(packaged_theme() / "overrides" / "sitegen"))


def to_versions(lang: str, depth: int) -> str:
    """From a page ``depth`` folders below a version's root to ``v/``."""
    return to_version_root(depth, lang) + "../"


def language_prefix(lang: str) -> str:
    """A version's folder of ``lang``'s pages (the first language's are at its root)."""
    return "" if lang == LANGUAGES[0] else f"{lang}/"


def changelog_files(
    versions: list[PublishedVersion], catalogs: dict[str, Catalog]
) -> dict[str, bytes]:
    """Every version's changes since the one before it in the archive, newest first, by
    site-root path."""
    env = publish_templates()
    ordered = sorted(versions, key=lambda v: v.sort_key)
    entries = [
        (v.label, compare(predecessor(ordered, v.label, v.data_epoch), v.figures))
        for v in reversed(ordered)
    ]
    files = {}
    for lang in LANGUAGES:
        html = env.get_template("changelog_all.html").render(
            t=catalogs[lang].t,
            lang=lang,
            entries=entries,
            to_versions=to_versions(lang, 1),
            prefix=language_prefix(lang),
        )
        files[changelog_data_path(lang)] = script_json({"html": html}).encode()
    return files


def html_page(title: str, body: str, searched: bool = True) -> bytes:
    """A Markdown page of a heading (escaped) and rendered HTML, as one raw-HTML block: no
    blank lines inside it (split at "\n" only: splitlines() would also split titles at
    U+2028 and other separators). ``searched=False`` keeps it out of the search index: a
    page that names the version (changelog, history) would make every version's index
    differ, and the index is stored per version."""
    block = Markup("\n".join(line for line in body.split("\n") if line.strip()))
    front_matter = "" if searched else "---\nsearch:\n  exclude: true\n---\n\n"
    return f"{front_matter}# {escape(title)}\n\n{block}\n".encode()
