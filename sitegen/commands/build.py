"""``sitegen build``: the records published as a new archived version of the site, in
stages one can point at:

read (``read_data``) → validate (``validate_data``) → redact (``redact_campaigns``) →
summarize (``summarize_campaigns``) → render (``render_pages``) → publish (``publish``).

``build_site`` runs them all; ``render_site`` the five before publishing (``sitegen check``
is exactly it). Every stage before ``publish`` works in memory; the site is written only
when every campaign has been read and validated and every page rendered and checked, and
it replaces the previous site in one atomic step, so a failed or killed build leaves the
previous site as it was (see ``publish.release``). A build whose inputs (records, plans,
content, theme, sitegen and renderer versions, label) are those of the site in place does
nothing.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import ValidationError

from sitegen.core.comparison_spec import ComparisonSpec
from sitegen.core.errors import DataError, Issue, LockedError, one_line, pydantic_issues
from sitegen.core.lock import lock_holder
from sitegen.core.price_list import PriceList, read_price_list
from sitegen.core.project import require_project
from sitegen.core.signing import (
    Signer,
    fingerprint,
    load_signer,
    project_key,
    signature_issues,
    signed_at,
)
from sitegen.core.site_settings import read_site_settings
from sitegen.core.yaml_text import read_yaml
from sitegen.pages.i18n import Catalog, load_catalogs
from sitegen.pages.mkdocs import ReportNav, VersionBuild
from sitegen.pages.render import Docs, render_docs
from sitegen.publish.archive import PublishedVersion, check_label, read_archive
from sitegen.publish.changelog import changelog_docs, compare, headline_figures, predecessor
from sitegen.publish.history import history_docs
from sitegen.publish.inputs import unchanged_build
from sitegen.publish.marker import BuildMarker
from sitegen.publish.release import exclusive_site
from sitegen.publish.site import Outcome, publish_version
from sitegen.records.campaign import AnyCampaign, read_campaigns
from sitegen.records.layout import LOCK_FILE, MANIFEST_FILE, campaign_directories
from sitegen.records.left_out import LeftOut, left_out_campaigns
from sitegen.records.redact import Redactor, redact
from sitegen.records.table import release_freed_memory
from sitegen.statistics.build_series import BuildSeries, make_series
from sitegen.statistics.comparison import (
    NOTHING_TO_COMPARE,
    CrossCampaign,
    make_comparison,
    resolve_campaigns,
)
from sitegen.statistics.imported_report import ImportedReport
from sitegen.statistics.report import Report
from sitegen.statistics.summarize import summarize
from sitegen.validation import check_project, validate_campaigns
from sitegen.validation.figure_checks import left_out_figure_issues

COMPARISONS_DIR = "content/comparisons"
"""Declarations of reports over several campaigns, one ``<id>.yaml`` each."""


@dataclass(frozen=True)
class BuildResult:
    site_dir: Path
    version: str
    outcome: Literal["published", "unchanged", "up-to-date"]
    """``published``: a new version was added; ``unchanged``: the label was already
    published with the same bytes; ``up-to-date``: the inputs had not changed, nothing
    was rendered."""
    campaigns: int
    records: int


@dataclass(frozen=True)
class RenderedSite:
    """Everything a build writes, validated: pages in memory, files that grow with the
    records in a scratch directory, removed by ``scratch.cleanup()`` (a build calls it once
    the site is written) or with this object."""

    reports: list[Report]
    catalogs: dict[str, Catalog]
    docs: Docs
    scratch: tempfile.TemporaryDirectory
    comparisons: list[CrossCampaign]
    imported: list[ImportedReport]
    left_out: tuple[LeftOut, ...] = ()
    """Every campaign the site leaves out, with why (``records.left_out``)."""
    series: tuple[BuildSeries, ...] = ()
    """Every series of builds among the reports (``statistics.build_series``)."""

    @property
    def records(self) -> int:
        return sum(len(r.campaign) for r in self.reports) + sum(
            len(r.campaign.records) for r in self.imported
        )

    def publication(self) -> Publication:
        """What publishing needs of this site (a new object: a rendering may be reused)."""
        builds = {b.campaign_id: b.factor_value for s in self.series for b in s.builds}
        return Publication(
            self.docs,
            self.catalogs,
            self.scratch,
            headline_figures(self.reports, self.imported, self.series),
            tuple(ReportNav.of(r, builds.get(r.campaign.campaign_id)) for r in self.reports),
            tuple(c.spec.id for c in self.comparisons),
            tuple((r.slug, r.title) for r in self.imported),
            self.left_out,
            tuple((s.address, s.plan.title.model_dump()) for s in self.series),
        )


@dataclass(frozen=True)
class Publication:
    """A rendered site as publishing needs it: its files, navigation and headline figures,
    without the reports and their tables, which a build lets go before mkdocs runs (its
    peak of memory otherwise)."""

    docs: Docs
    catalogs: dict[str, Catalog]
    scratch: tempfile.TemporaryDirectory
    """Removed once the site is written (``build_site``): ``docs`` names files in it."""
    figures: dict[str, Any]
    """``headline_figures`` of the reports."""
    reports: tuple[ReportNav, ...]
    comparisons: tuple[str, ...]
    """Ids of the comparison pages."""
    imported: tuple[tuple[str, dict[str, str]], ...]
    """Each imported campaign's report folder name and title per language."""
    left_out: tuple[LeftOut, ...] = ()
    """Every campaign the site leaves out, with why: the changelog lists them."""
    series: tuple[tuple[str, dict[str, str]], ...] = ()
    """Each series page's folder name and title per language."""


@dataclass(frozen=True)
class DataRead:
    """What the read stage found: every campaign to publish (measured and imported, each
    verified against its manifest), every campaign left out with why, and the problems met
    reading them, which validation reports with its own."""

    campaigns: list[AnyCampaign]
    left_out: tuple[LeftOut, ...]
    issues: list[Issue]


@dataclass(frozen=True)
class Summaries:
    """What the summarize stage computed: each measured campaign's report (with the
    campaigns of its plan left out and, in a signed project, its key), each imported
    campaign's, and every series of builds among the measured ones."""

    reports: list[Report]
    imported: list[ImportedReport]
    left_out: tuple[LeftOut, ...]
    series: tuple[BuildSeries, ...] = ()
    """The campaigns of each plan that declares a series, build by build, with each
    step's verdicts (``make_series``): computed once, here, for every page that shows
    them."""


def build_site(
    data_dir: Path,
    site_dir: Path,
    project_dir: Path,
    version: str | None = None,
    changed_inputs_sha256: str | None = None,
    skip: Collection[str] = (),
) -> BuildResult:
    """Publish the records of ``data_dir`` as version ``version`` (default: the date of
    the latest record, ``YYYY-MM-DD`` in UTC) of the site in ``site_dir``.
    ``changed_inputs_sha256``: the inputs' digest, from a caller that has just found the
    site not built from them (``unchanged_build``), so they are not hashed again.
    ``skip``: names of campaign directories left out (``--skip``)."""
    project_dir = project_dir.resolve()
    require_project(project_dir)
    if version is not None:
        check_label(version)
    inputs_sha256 = changed_inputs_sha256
    if inputs_sha256 is None:
        inputs_sha256, marker = unchanged_build(data_dir, site_dir, project_dir, version, skip)
        if marker is not None:
            return BuildResult(
                site_dir, marker.version, "up-to-date", marker.campaigns, marker.records
            )

    signer = load_signer(project_dir)
    rendered = render_site(data_dir, project_dir, skip, signer)
    data_epoch, default_label = latest_record_time(rendered.reports, rendered.imported)
    label = version or check_label(default_label)
    marker = BuildMarker(
        inputs_sha256=inputs_sha256,
        version=label,
        campaigns=len(rendered.reports) + len(rendered.imported),
        records=rendered.records,
    )
    publication = rendered.publication()
    # The reports' tables are not needed to publish: freed before mkdocs runs.
    del rendered
    # The pages' template contexts hold them in reference cycles, which only a collection
    # frees.
    release_garbage(marker.records)
    try:
        outcome = publish(publication, label, data_epoch, marker, project_dir, site_dir, signer)
    finally:
        publication.scratch.cleanup()
    return BuildResult(site_dir, label, outcome, marker.campaigns, marker.records)


def render_site(
    data_dir: Path,
    project_dir: Path,
    skip: Collection[str] | Mapping[str, str] = (),
    signer: Signer | None = None,
) -> RenderedSite:
    """The stages before publishing: read → validate → redact → summarize → render, each
    page checked; raises ``DataError`` listing every problem. Writes nothing (``sitegen
    check`` is exactly this). ``skip``: campaign directories left out (``--skip``), each
    with its reason (names alone are refused: the site lists every campaign left out with
    why, ``records.left_out``). ``signer``: signs each report's ``SHA256SUMS`` (the
    build's; a check signs nothing). When the project declares a key, every campaign's
    manifest must be signed with it (C-SIGNED)."""
    require_project(project_dir)
    key = project_key(project_dir)
    data = read_data(data_dir, skip)
    validate_data(data, data_dir, project_dir, key)
    settings = read_site_settings(project_dir)
    catalogs = load_catalogs(project_dir, settings.title)
    campaigns = redact_campaigns(data.campaigns, Redactor(settings.redact))
    # A bad price list stopped the build at validation (C-COST): here it is a valid one.
    prices, _ = read_price_list(project_dir)
    summaries = summarize_campaigns(campaigns, data.left_out, key, prices)
    return render_pages(summaries, project_dir, catalogs, signer)


def read_data(data_dir: Path, skip: Collection[str] | Mapping[str, str]) -> DataRead:
    """Read every campaign under ``data_dir`` but those of ``skip``, and those left out;
    refuses (``LockedError``) while a measure appends to one."""
    refuse_campaigns_being_measured(data_dir, skip)
    campaigns, issues = read_campaigns(data_dir, skip)
    left_out, left_out_issues = left_out_campaigns(data_dir, skip)
    return DataRead(campaigns, tuple(left_out), issues + left_out_issues)


def validate_data(
    data: DataRead, data_dir: Path, project_dir: Path, key: Ed25519PublicKey | None
) -> None:
    """Raise ``DataError`` listing every problem, reading's included: every campaign by the
    checks of its kind, the reasons campaigns are left out, report addresses two campaigns
    would share, manifests not signed with the project's ``key`` (when it has one), then the
    project's own files. A build with nothing left to publish is refused too."""
    issues = data.issues + left_out_figure_issues(data.left_out)
    issues += report_address_collisions(data.campaigns)
    if key is not None:
        for campaign in data.campaigns:
            issues += signature_issues(campaign.directory / MANIFEST_FILE, key)
    issues += validate_campaigns(data.campaigns)
    issues += check_project(project_dir)
    if not data.campaigns and not issues:
        issues.append(
            Issue(
                str(data_dir),
                "every campaign is left out (publish: false in its annotations.yaml, or --skip)",
                "data",
            )
        )
    if issues:
        raise DataError(issues)


def redact_campaigns(campaigns: list[AnyCampaign], redactor: Redactor) -> list[AnyCampaign]:
    """Every campaign as published: redacted once, before anything is computed, so every
    page and download sees only the labels the project chose."""
    return [redact(campaign, redactor) for campaign in campaigns]


def summarize_campaigns(
    campaigns: list[AnyCampaign],
    left_out: tuple[LeftOut, ...],
    key: Ed25519PublicKey | None,
    prices: PriceList | None = None,
) -> Summaries:
    """Each campaign's statistics, computed before any page is rendered; a measured
    campaign's report names the campaigns of its plan left out, and the project's ``key``
    with when its manifest was signed; its costs come from the declared ``prices``."""
    reports, imported = [], []
    for summary in (summarize(campaign, prices) for campaign in campaigns):
        if isinstance(summary, ImportedReport):
            imported.append(summary)
            continue
        plan_left_out = tuple(e for e in left_out if e.plan_name == summary.campaign.plan.name)
        summary = replace(summary, left_out=plan_left_out)
        if key is not None:
            signed = signed_at(summary.campaign.directory / MANIFEST_FILE)
            summary = replace(summary, signing_key=fingerprint(key), signed_at=signed)
        reports.append(summary)
    # Computing the statistics leaves garbage, some of it in reference cycles: freed and
    # given back before the pages are rendered.
    release_garbage(sum(len(c) for c in campaigns))
    return Summaries(reports, imported, left_out, tuple(make_series(reports)))


def render_pages(
    summaries: Summaries,
    project_dir: Path,
    catalogs: dict[str, Catalog],
    signer: Signer | None,
) -> RenderedSite:
    """Every page of the site, checked, with the comparisons the project declares; the
    files that grow with the records go to a new scratch directory."""
    reports, imported = summaries.reports, summaries.imported
    comparisons = read_comparisons(project_dir / COMPARISONS_DIR, reports, imported)
    remove_abandoned_scratch()
    scratch = tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
    docs = render_docs(
        reports,
        catalogs,
        project_dir,
        Path(scratch.name),
        comparisons,
        imported,
        signer,
        summaries.series,
    )
    return RenderedSite(
        reports,
        catalogs,
        docs,
        scratch,
        comparisons,
        imported,
        summaries.left_out,
        summaries.series,
    )


def publish(
    publication: Publication,
    label: str,
    data_epoch: int,
    marker: BuildMarker,
    project_dir: Path,
    site_dir: Path,
    signer: Signer | None = None,
) -> Outcome:
    """Add the changelog and publish, holding the site's lock (another build publishing
    makes this one fail at once with ``LockedError``), the lists of files signed by
    ``signer``. The archive is read under the lock, so a version published while this
    build rendered is kept."""
    figures = publication.figures
    with exclusive_site(site_dir) as home:
        published = read_archive(home.site)
        changes = compare(predecessor(published, label, data_epoch), figures)
        current = PublishedVersion(label, data_epoch, figures)
        docs = {
            **publication.docs,
            **changelog_docs(changes, publication.catalogs, publication.left_out),
            **history_docs(current, publication.catalogs),
        }
        build = VersionBuild(
            label,
            data_epoch,
            docs,
            publication.reports,
            publication.catalogs,
            figures,
            publication.comparisons,
            publication.imported,
            publication.series,
        )
        return publish_version(build, project_dir, home, published, marker, signer)


COLLECT_FROM_RECORDS = 10_000
"""From this many records on, a build collects the garbage of its statistics before it
renders, and of its pages before it publishes: that lowers its peak of memory. Below,
there is little to free, and a full collection costs a small build more time than the
memory it frees is worth (more in a process that holds much else, as the tests do)."""


def release_garbage(records: int) -> None:
    """From ``COLLECT_FROM_RECORDS`` records on, collect the garbage (reference cycles
    included) and give the memory freed back to the system."""
    if records >= COLLECT_FROM_RECORDS:
        gc.collect()
        release_freed_memory()


def refuse_campaigns_being_measured(
    data_dir: Path, skip: Collection[str] | Mapping[str, str] = ()
) -> None:
    """``LockedError`` naming the measure that holds a campaign (its pid, command and start):
    its records grow while it runs, so they would not match the manifest (C-SIGNED's
    "changed"), though nothing was edited."""
    for directory in campaign_directories(data_dir):
        if directory.name not in skip and (holder := lock_holder(directory / LOCK_FILE)):
            raise LockedError(
                f"campaign {directory} is being measured by {holder}: wait for that measure "
                f"to finish, or leave the campaign out (--skip {directory.name}=REASON)"
            )


def report_address_collisions(campaigns: list[AnyCampaign]) -> list[Issue]:
    """Two published campaigns of plans with the same name would share one report address
    (``reports/<plan name>/``), as would an imported campaign named like a plan: one
    issue naming both for each such pair. The campaigns of a series have addresses of
    their own (``Campaign.report_name``)."""
    first_by_name: dict[str, AnyCampaign] = {}
    issues = []
    for campaign in campaigns:
        name = campaign.report_name
        earlier = first_by_name.setdefault(name, campaign)
        if earlier is not campaign:
            issues.append(
                Issue(
                    str(campaign.directory),
                    f"its report is named '{name}', like {earlier.directory.name}'s: "
                    f"both would be reports/{name}/; publish one (publish: false with an "
                    "unpublished_reason in the other's annotations.yaml, which the site "
                    "lists with it) or give the plans distinct names",
                    "data",
                )
            )
    return issues


def read_comparisons(
    directory: Path, reports: list[Report], imported: list[ImportedReport]
) -> list[CrossCampaign]:
    """Every declared comparison of several campaigns (``<id>.yaml``), computed; raises
    ``DataError`` naming the file and the field of every bad declaration."""
    comparisons, issues = [], []
    for path in sorted(directory.glob("*.yaml")) if directory.is_dir() else []:
        try:
            spec = ComparisonSpec.model_validate(read_yaml(path))
        except yaml.YAMLError as exc:
            issues.append(Issue(str(path), f"not valid YAML: {one_line(exc)}", "data"))
            continue
        except ValidationError as exc:
            issues.extend(pydantic_issues(exc, str(path)))
            continue
        found, problems = resolve_campaigns(spec, reports, imported)
        issues += [
            Issue(f"{path} → {problem.split(':', 1)[0]}", problem.split(": ", 1)[1], "data")
            for problem in problems
        ]
        if problems:
            continue
        comparison = make_comparison(spec, found)
        if comparison.rows or comparison.imported:
            comparisons.append(comparison)
        else:
            issues.append(Issue(str(path), NOTHING_TO_COMPARE, "data"))
    if issues:
        raise DataError(issues)
    return comparisons


SCRATCH_PREFIX = "sitegen-build-"
"""Scratch folders in the system's temporary directory: ``sitegen-build-<pid>-<random>``."""


def remove_abandoned_scratch() -> None:
    """Remove the scratch folders of builds whose process is gone (killed builds cannot
    clean up after themselves)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*"):
        pid = folder.name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def latest_record_time(
    reports: Sequence[Report], imported: Sequence[ImportedReport] = ()
) -> tuple[int, str]:
    """Start of the latest record as Unix seconds and as its UTC date (the default label);
    an imported campaign counts by when it was imported (its sources' times may be absent)."""
    campaigns = [report.campaign for report in reports] + [i.campaign for i in imported]
    starts = [start for campaign in campaigns if (start := campaign.latest_time) is not None]
    latest = max(starts, default=datetime.fromtimestamp(0, UTC))
    return int(latest.timestamp()), latest.astimezone(UTC).date().isoformat()
