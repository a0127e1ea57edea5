"""The pure part of ``sitegen audit`` (``commands.audit`` fetches): published bytes in,
``Finding``s out. Versions from ``versions.json``; a page's links and marked figures against
the recomputed ones and the signed list; each download against ``SHA256SUMS`` and its
recomputed bytes; the campaign rebuilt from a report's own downloads, its statistics
computed as the build computes them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import posixpath
import urllib.parse
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sitegen.core.errors import DataError, SitegenError, UsageError, one_line
from sitegen.core.price_list import PRICES_DOWNLOAD, read_published_prices
from sitegen.core.site_layout import LATEST_ALIAS, OBJECTS_DIR, VERSIONS_DIR, VERSIONS_FILE
from sitegen.core.site_settings import EnvPolicy
from sitegen.importers.import_campaign import OWN_FILES, import_own_downloads
from sitegen.publish.objects import folder_digest
from sitegen.publish.signed_files import SignedFiles, read_marks
from sitegen.records.campaign import Campaign, read_campaigns
from sitegen.records.layout import CAMPAIGNS_DIR
from sitegen.records.redact import Redactor, RedactPolicy, redact_campaign
from sitegen.statistics.report import Report, make_report
from sitegen.validation import validate_campaigns

SUMS_FILE = "SHA256SUMS"
CELLS_SHOWN = 10
"""Changed cells listed per table (the rest are counted)."""


@dataclass(frozen=True)
class Finding:
    """One thing that does not check, printed as one line."""

    where: str
    """The page or file (``en/reports/x/speed/``, ``reports/x/downloads/trials.csv``)."""
    what: str
    """The figure id, the table cell (``row 3 · column gen_tps``) or the problem."""
    published: str | None = None
    recomputed: str | None = None

    def __str__(self) -> str:
        parts = [self.where, self.what]
        if self.published is not None or self.recomputed is not None:
            parts += [f"published {self.published}", f"recomputed {self.recomputed}"]
        return " · ".join(parts)


# --------------------------------------------------------------------------- versions


def load_json(data: bytes, where: str) -> object:
    """JSON from a published file; one ``SitegenError`` line for anything else, nesting too
    deep for the parser included."""
    try:
        return json.loads(data)
    except RecursionError:
        raise SitegenError(f"{where}: JSON nested too deeply") from None
    except ValueError as exc:
        raise SitegenError(f"{where}: not JSON ({one_line(exc)})") from exc


def version_entries(listing: bytes) -> list[dict[str, Any]]:
    """The entries of ``versions.json`` (mike's format), in its order, each with its label
    (``version``); raises ``UsageError`` naming what else it holds."""
    versions = load_json(listing, VERSIONS_FILE)
    if not isinstance(versions, list):
        problem = "not a list"
    elif not all(isinstance(entry, dict) and "version" in entry for entry in versions):
        problem = "an entry without a version"
    elif not all(isinstance(entry["version"], str) for entry in versions):
        problem = "a version that is not a string"
    else:
        return versions
    raise UsageError(f"{VERSIONS_FILE}: not mike's version list ({problem})")


def version_labels(listing: bytes) -> list[str]:
    """The labels of ``versions.json`` (mike's format), in its order."""
    return [entry["version"] for entry in version_entries(listing)]


def pick_version(listing: bytes, label: str | None) -> str:
    """The version ``label``, or the one with the ``latest`` alias (mike's format)."""
    entries = version_entries(listing)
    labels = [entry["version"] for entry in entries]
    if label is not None:
        if label not in labels:
            raise UsageError(f"--version {label}: not published (known: {', '.join(labels)})")
        return label
    latest = [
        entry["version"]
        for entry in entries
        if isinstance(aliases := entry.get("aliases"), list) and LATEST_ALIAS in aliases
    ]
    if not latest:
        raise UsageError(f"{VERSIONS_FILE}: no version has the alias '{LATEST_ALIAS}'")
    return latest[0]


# --------------------------------------------------------------------------- pages


def page_file(page: str) -> str:
    """The file of a page address (``reports/x/`` → ``reports/x/index.html``)."""
    return page + "index.html" if page == "" or page.endswith("/") else page


def linked_pages(page: str, links: Iterable[str], label: str) -> list[str]:
    """The pages of the same version that ``links`` of ``page`` reach (relative links are
    resolved against the page's address, as a browser does)."""
    root = f"/{VERSIONS_DIR}/{label}/"
    found = []
    for link in links:
        if link.startswith("#"):
            continue  # the page itself
        target = urllib.parse.urlsplit(
            urllib.parse.urljoin(f"http://site.invalid{root}{page}", link)
        )
        if target.netloc != "site.invalid" or not target.path.startswith(root):
            continue
        path = posixpath.normpath(target.path)[len(root) :] + (
            "/" if target.path.endswith("/") else ""
        )
        if path.endswith("/") or path.endswith(".html"):
            found.append(path.lstrip("/"))
    return found


def resolve(page: str, link: str, label: str) -> str | None:
    """The site-root path a link of ``page`` reaches (``None``: another site)."""
    target = urllib.parse.urlsplit(
        urllib.parse.urljoin(f"http://site.invalid/{VERSIONS_DIR}/{label}/{page}", link)
    )
    if target.netloc != "site.invalid":
        return None
    return posixpath.normpath(urllib.parse.unquote(target.path)).lstrip("/")


def report_of(page: str) -> str | None:
    """The report a page belongs to (``en/reports/x/speed/`` → ``x``)."""
    parts = page.removeprefix("en/").split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "reports" else None


def figure_findings(
    page: str, marks: list[tuple[str, str]], figures: dict[str, str] | None
) -> list[Finding]:
    """Each marked figure of ``page`` whose text is not the recomputed one (``figures``:
    the page's report's figures; ``None``: none could be recomputed, said once)."""
    if figures is None:
        return (
            [Finding(page, f"{len(marks)} marked figure(s) not checked: nothing to recompute")]
            if marks
            else []
        )
    return [
        Finding(page, figure_id, text, figures.get(figure_id, "(no such figure)"))
        for figure_id, text in marks
        if figures.get(figure_id) != text
    ]


def mark_findings(prefix: str, listing: SignedFiles, pages: dict[str, bytes]) -> list[Finding]:
    """Each page of the version (``prefix``: ``v/<label>/``) whose marked figures are not
    the ones its list signs, naming each figure removed, changed or added (pure)."""
    findings = []
    for path, data in sorted(pages.items()):
        page = path.removeprefix(prefix)
        if not path.startswith(prefix):
            continue
        # Counted: a page may print one figure twice (a card and its table).
        signed = Counter(listing.figures.get(page, []))
        found = Counter(read_marks(data.decode("utf-8", errors="replace")).figures)
        address = page.removesuffix("index.html")
        findings += [
            Finding(address, f"{figure_id}: the signed figure {text!r} is not on the page")
            for figure_id, text in signed - found
        ]
        findings += [
            Finding(address, f"{figure_id}: {text!r} is marked but not signed")
            for figure_id, text in found - signed
        ]
    return findings


# --------------------------------------------------------------------------- downloads


def checksum_findings(where: str, sums: bytes, files: dict[str, bytes | None]) -> list[Finding]:
    """Each file ``SHA256SUMS`` lists that is missing or whose SHA-256 differs."""
    findings = []
    for line in sums.decode("ascii", errors="replace").splitlines():
        digest, _, name = line.partition("  ")
        data = files.get(name)
        if data is None:
            findings.append(Finding(where + name, f"listed in {SUMS_FILE} but not published"))
        elif hashlib.sha256(data).hexdigest() != digest:
            findings.append(
                Finding(where + name, f"altered: its SHA-256 is not the one {SUMS_FILE} lists")
            )
    return findings


def sums_names(sums: bytes) -> list[str]:
    return [
        line.partition("  ")[2]
        for line in sums.decode("ascii", errors="replace").splitlines()
        if line.strip()
    ]


def _csv_rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig", errors="replace"), newline="")))


def table_findings(where: str, published: bytes, recomputed: bytes) -> list[Finding]:
    """Nothing when the bytes are the same; for a CSV file each changed cell (row counted
    from the first data row, column by its header), else that the file differs."""
    if published == recomputed:
        return []
    if not where.endswith(".csv"):
        return [Finding(where, "differs from the file recomputed from the records")]
    mine, theirs = _csv_rows(published), _csv_rows(recomputed)
    header = theirs[0] if theirs else []
    cells = [
        (row, column, a, b)
        for row in range(max(len(mine), len(theirs)))
        for column, (a, b) in enumerate(
            _padded(mine[row] if row < len(mine) else [], theirs[row] if row < len(theirs) else [])
        )
        if a != b
    ]
    findings = [
        Finding(
            where,
            "header"
            if row == 0
            else f"row {row} · column {header[column] if column < len(header) else column + 1}",
            a,
            b,
        )
        for row, column, a, b in cells[:CELLS_SHOWN]
    ]
    if len(cells) > CELLS_SHOWN:
        findings.append(Finding(where, f"and {len(cells) - CELLS_SHOWN} more changed cell(s)"))
    return findings or [Finding(where, "differs from the file recomputed from the records")]


def _padded(a: list[str], b: list[str]) -> list[tuple[str, str]]:
    width = max(len(a), len(b))
    return list(
        zip(a + ["(none)"] * (width - len(a)), b + ["(none)"] * (width - len(b)), strict=True)
    )


def object_name_findings(listing: SignedFiles) -> list[Finding]:
    """Each object of ``listing`` whose listed bytes do not have the SHA-256 its name
    gives: a file object's own digest, a folder object's listing digest (pure)."""
    groups: dict[str, dict[str, str]] = {}
    for path, entry in listing.files.items():
        parts = path.split("/", 2)
        if parts[0] == OBJECTS_DIR and len(parts) == 3:
            groups.setdefault(parts[1], {})[parts[2]] = entry.sha256
    return [
        Finding(
            f"{OBJECTS_DIR}/{digest}/",
            "altered: its listed files do not have the SHA-256 its name gives",
        )
        for digest, inside in sorted(groups.items())
        if not (len(inside) == 1 and digest in inside.values()) and folder_digest(inside) != digest
    ]


# --------------------------------------------------------------------------- recomputation


def recompute_report(
    downloads: dict[str, bytes], campaign_id: str, scratch: Path, prices: bytes | None = None
) -> Report:
    """The campaign rebuilt from a report's downloads (``import_own_downloads``) and its
    statistics computed as the build computes them, its costs from the price list it
    published (``prices``, ``None``: none); raises ``SitegenError`` naming the problem
    when the downloads cannot be rebuilt or fail validation."""
    scratch.mkdir(parents=True)
    for name in OWN_FILES:
        (scratch / name).write_bytes(downloads[name])
    data = scratch / "data"
    directory = data / CAMPAIGNS_DIR / campaign_id
    directory.parent.mkdir(parents=True)
    import_own_downloads([scratch / name for name in OWN_FILES], directory)
    campaigns, issues = read_campaigns(data)
    issues += validate_campaigns(campaigns)
    if issues:
        raise DataError(issues)
    campaign = campaigns[0]
    if not isinstance(campaign, Campaign):  # not what import_own_downloads writes
        raise SitegenError(f"{directory.name}: rebuilt as an imported campaign, not a measured one")
    declared = read_published_prices(prices, PRICES_DOWNLOAD) if prices is not None else None
    return make_report(redact_campaign(campaign, Redactor(published_labels(campaign))), declared)


def published_labels(campaign: Campaign) -> RedactPolicy:
    """Redaction that leaves published records as they are: every host name and
    environment value in them is already the label the project chose. Applied as the
    build applies its own, since the tables take the types redaction gives them."""
    provenances = campaign.table.provenances
    hosts = {p.host.hostname for p in provenances}
    hosts |= {p.node.hostname for p in provenances if p.node is not None}
    kept = sorted({name for p in provenances for name in p.env})
    return RedactPolicy(hosts={host: host for host in hosts}, env=EnvPolicy(keep=kept))
