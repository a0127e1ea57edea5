"""The caveat rules (SPEC §5), checked over data and over rendered pages.

The rules themselves are data (``caveats.yaml``): which claims must carry which
caveat marker, which report pages must show it, and which data checks apply.
Directives mark what they render: ``data-claim="<kind>"`` on a claim and
``data-caveat="<rule id>"`` on each caveat it carries. A claim's caveats are looked
for anywhere inside its outermost claim element.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from html.parser import HTMLParser
from importlib import resources

import yaml

from sitegen.errors import Issue
from sitegen.plan.items import make_suite
from sitegen.validation.campaign import Campaign

VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class CaveatRule:
    """One rule of ``caveats.yaml``."""

    id: str
    title: dict[str, str]
    text: dict[str, str]
    fix: dict[str, str]
    claims: tuple[str, ...]
    pages: tuple[str, ...]
    data_checks: tuple[str, ...]


@cache
def load_rules() -> tuple[CaveatRule, ...]:
    raw = yaml.safe_load(
        resources.files("sitegen.validation").joinpath("caveats.yaml").read_text("utf-8")
    )
    return tuple(
        CaveatRule(
            id=rule["id"],
            title=rule["title"],
            text=rule["text"],
            fix=rule["fix"],
            claims=tuple(rule.get("claims", ())),
            pages=tuple(rule.get("pages", ())),
            data_checks=tuple(rule.get("data_checks", ())),
        )
        for rule in raw["rules"]
    )


def rule(rule_id: str) -> CaveatRule:
    return next(r for r in load_rules() if r.id == rule_id)


def violation(rule_id: str, location: str, problem: str) -> Issue:
    """An issue carrying the rule id, where, what is wrong and what to change (both languages)."""
    found = rule(rule_id)
    return Issue(location, f"{problem} — {found.fix['en']} / {found.fix['ja']}", rule_id)


# --- data checks -------------------------------------------------------------------------

DataCheck = Callable[[Campaign], list[Issue]]


def _examples_declared(campaign: Campaign) -> list[Issue]:
    where = f"{campaign.directory}/annotations.yaml"
    usable = {r.trial_id for r in campaign.records if r.role == "measured" and r.status == "ok"}
    return [
        violation(
            "C-EXAMPLE",
            f"{where} → curated_examples.{i}.trial_id",
            f"'{e.trial_id}' is not a measured, successful trial",
        )
        for i, e in enumerate(campaign.annotations.curated_examples)
        if e.trial_id not in usable
    ]


def _input_length_recorded(campaign: Campaign) -> list[Issue]:
    return [
        violation(
            "C-CAPACITY",
            f"{campaign.directory}/records.jsonl (trial {r.trial_id}) → prompt_tokens",
            "an ok record without its input length",
        )
        for r in campaign.records
        if r.status == "ok" and r.prompt_tokens is None
    ]


def _post_hoc_declared(campaign: Campaign) -> list[Issue]:
    issues = []
    where = f"{campaign.directory}/annotations.yaml"
    quality = campaign.plan.quality
    started = min((r.started_at[:10] for r in campaign.records), default=None)
    for i, analysis in enumerate(campaign.annotations.post_hoc):
        if quality is None:
            issues.append(
                violation(
                    "C-POSTHOC",
                    f"{where} → post_hoc.{i}",
                    "a post-hoc quality analysis needs a plan with a quality evaluation",
                )
            )
            continue
        if started and analysis.added_at[:10] < started:
            issues.append(
                violation(
                    "C-POSTHOC",
                    f"{where} → post_hoc.{i}.added_at",
                    f"{analysis.added_at} precedes the campaign ({started}); a post-hoc analysis comes after the results",
                )
            )
        templates = {p.template_id for p in make_suite(quality).problems}
        unknown = sorted(set(analysis.exclude_templates) - templates)
        if unknown:
            issues.append(
                violation(
                    "C-POSTHOC",
                    f"{where} → post_hoc.{i}.exclude_templates",
                    f"unknown template(s) {unknown}",
                )
            )
    return issues


def _devices_recorded(campaign: Campaign) -> list[Issue]:
    return [
        violation(
            "C-HARDWARE",
            f"{campaign.directory}/records.jsonl (trial {r.trial_id}) → provenance.host.devices",
            "an ok record without the measured hardware",
        )
        for r in campaign.records
        if r.status == "ok" and not r.provenance.host.devices
    ]


def _thresholds_valid(campaign: Campaign) -> list[Issue]:
    conditions = {c.id for c in campaign.plan.conditions}
    inputs = {i.id for i in campaign.plan.inputs}
    issues = []
    for i, claim in enumerate(campaign.annotations.thresholds):
        where = f"{campaign.directory}/annotations.yaml → thresholds.{i}"
        if claim.condition_id not in conditions:
            issues.append(
                violation(
                    "C-THRESHOLD",
                    f"{where}.condition_id",
                    f"unknown condition '{claim.condition_id}'",
                )
            )
        if claim.input_id is not None and claim.input_id not in inputs:
            issues.append(
                violation(
                    "C-THRESHOLD", f"{where}.input_id", f"unknown speed input '{claim.input_id}'"
                )
            )
    return issues


DATA_CHECKS: dict[str, DataCheck] = {
    "examples_declared": _examples_declared,
    "input_length_recorded": _input_length_recorded,
    "post_hoc_declared": _post_hoc_declared,
    "devices_recorded": _devices_recorded,
    "thresholds_valid": _thresholds_valid,
}


def check_data(campaign: Campaign) -> list[Issue]:
    """Every rule's data checks over one campaign."""
    return [
        issue
        for r in load_rules()
        for name in r.data_checks
        for issue in DATA_CHECKS[name](campaign)
    ]


# --- page checks -------------------------------------------------------------------------


@dataclass
class Claim:
    kind: str
    attrs: dict[str, str]
    root: int
    """Index of the outermost claim element containing this one (itself if outermost)."""
    caveats: set[str]
    text: list[str]


class _ClaimParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.claims: list[Claim] = []
        self.page_caveats: set[str] = set()
        self._stack: list[int | None] = []  # claim index per open element
        self._in_script = False

    def _open_claims(self) -> list[int]:
        return [i for i in self._stack if i is not None]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        claim_index = None
        if "data-claim" in values:
            open_claims = self._open_claims()
            claim_index = len(self.claims)
            root = self.claims[open_claims[0]].root if open_claims else claim_index
            self.claims.append(Claim(values["data-claim"], values, root, set(), []))
        caveat = values.get("data-caveat")
        if caveat:
            self.page_caveats.add(caveat)
            for index in [
                *self._open_claims(),
                *([claim_index] if claim_index is not None else []),
            ]:
                self.claims[index].caveats.add(caveat)
        if tag == "script":
            self._in_script = True
        if tag not in VOID_TAGS:
            self._stack.append(claim_index)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False
        if tag not in VOID_TAGS and self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        if self._in_script:
            return
        for index in self._open_claims():
            self.claims[index].text.append(data)


@dataclass(frozen=True)
class PageFacts:
    claims: list[Claim]
    caveats: set[str]

    def effective_caveats(self, claim: Claim) -> set[str]:
        root = self.claims[claim.root]
        return root.caveats | {
            c for other in self.claims if other.root == claim.root for c in other.caveats
        }

    def figures(self) -> list[str]:
        outer = [c for i, c in enumerate(self.claims) if c.root == i]
        return sorted(n.replace(",", "") for c in outer for n in NUMBER.findall("".join(c.text)))


def read_page(html: str) -> PageFacts:
    parser = _ClaimParser()
    parser.feed(html)
    parser.close()
    return PageFacts(parser.claims, parser.page_caveats)


def check_page(path: str, facts: PageFacts) -> list[Issue]:
    """Every claim on the page carries the caveats its rules require."""
    issues = []
    for claim in facts.claims:
        have = facts.effective_caveats(claim)
        for r in load_rules():
            if claim.kind in r.claims and r.id not in have:
                issues.append(
                    violation(
                        r.id,
                        f"{path} (claim '{claim.kind}')",
                        f"missing the {r.id} caveat ({r.title['en']})",
                    )
                )
        if claim.kind == "speed-ratio" and claim.attrs.get("data-factor-only") != "true":
            issues.append(
                violation(
                    "C-CONFDIFF",
                    f"{path} (claim 'speed-ratio')",
                    "a ratio between conditions that differ in more than the declared factor",
                )
            )
        if claim.kind == "configuration-comparison" and (
            not claim.attrs.get("data-differing") or "data-ratio" in claim.attrs
        ):
            issues.append(
                violation(
                    "C-CONFDIFF",
                    f"{path} (claim 'configuration-comparison')",
                    "a configuration comparison must list the differing fields and print no ratio",
                )
            )
    kinds = {c.kind for c in facts.claims}
    if "post-hoc" in kinds and not any(
        c.kind == "accuracy" and c.attrs.get("data-primary") == "true" for c in facts.claims
    ):
        issues.append(
            violation(
                "C-POSTHOC",
                path,
                "a post-hoc result is shown without the pre-registered primary result",
            )
        )
    return issues


def check_report_pages(
    pages: dict[str, PageFacts], page_paths: dict[str, str], excluded: dict[str, int]
) -> list[Issue]:
    """Report-level rules: the caveats each page must show, and counts that must match data.

    ``pages`` maps a page name (``index``, ``method`` …) to its facts in one language.
    """
    issues = []
    for r in load_rules():
        for page in r.pages:
            if page in pages and r.id not in pages[page].caveats:
                issues.append(
                    violation(
                        r.id,
                        page_paths[page],
                        f"the page does not show the {r.id} caveat ({r.title['en']})",
                    )
                )
    for name, facts in pages.items():
        for claim in facts.claims:
            if claim.kind != "excluded":
                continue
            shown = {k: int(claim.attrs.get(f"data-{k}", -1)) for k in ("warmup", "failed")}
            expected = {k: excluded[k] for k in ("warmup", "failed")}
            if shown != expected:
                issues.append(
                    violation(
                        "C-EXCLUDED",
                        page_paths[name],
                        f"shows {shown}, the records have {expected}",
                    )
                )
    return issues


def check_language_parity(path_ja: str, ja: PageFacts, en: PageFacts) -> list[Issue]:
    """The ja and en versions of a page carry the same figures."""
    if ja.figures() == en.figures():
        return []
    only_ja = sorted(set(ja.figures()) - set(en.figures()))[:5]
    only_en = sorted(set(en.figures()) - set(ja.figures()))[:5]
    return [
        Issue(
            path_ja,
            f"ja and en pages carry different figures (only ja: {only_ja}, only en: {only_en})",
            "i18n",
        )
    ]


def campaign_registered_at(campaign: Campaign) -> datetime | None:
    """When the plan was registered: the first record's start (the plan file precedes it)."""
    starts = [datetime.fromisoformat(r.started_at) for r in campaign.records]
    return min(starts) if starts else None
