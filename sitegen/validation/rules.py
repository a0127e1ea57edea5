"""The rule catalog (``rules.yaml``) and the registry of rule checks.

A rule is one catalog entry. The generic part of every rule is data: the claims that
must carry its caveat marker and the report pages that must show it. What a rule checks
beyond that is a function registered under its id with ``@check(rule_id, scope)`` in the
module of its scope (``validation/campaign_checks.py``, ``page_checks.py`` for prose and
pages, ``report_checks.py``), or ``validation/figure_checks.py`` for C-FIGURE over author
text. The method page, the build and the tests all read this registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from sitegen.core.errors import Issue
from sitegen.core.strict_model import StrictModel
from sitegen.core.text import Bilingual
from sitegen.core.yaml_text import load_yaml

RULE_CATALOG = Path(__file__).with_name("rules.yaml")
"""The catalog file, shipped inside the package."""

Scope = Literal["campaign", "project", "prose", "page", "report"]
"""What a check looks at: ``campaign`` (records and annotations, before any page is
rendered), ``project`` (the project's own files: catalogs, comparisons, mkdocs.yml),
``prose`` (the visible text of a content page's rendered prose, directive outputs taken
out), ``page`` (one rendered page's claims), ``report`` (every page of one report in one
language)."""


class Rule(StrictModel):
    """One entry of the rule catalog."""

    id: str
    """Stable id, e.g. ``C-TRUNC``."""
    title: Bilingual
    """Short name."""
    text: Bilingual
    """What the rule demands, as the method page states it."""
    fix: Bilingual
    """What to change when the rule is broken (shown in build errors)."""
    claims: tuple[str, ...] = ()
    """Claim kinds (``data-claim``) that must carry this rule's caveat marker."""
    pages: tuple[str, ...] = ()
    """Report pages that must show this rule's caveat."""

    @property
    def checks(self) -> tuple[str, ...]:
        """Names of the check functions registered under this rule."""
        return tuple(c.name for c in registered_checks() if c.rule_id == self.id)


@dataclass(frozen=True)
class Check:
    """A registered check function."""

    rule_id: str
    scope: Scope
    function: Callable[..., list[Issue]]
    imported: bool = False
    """For the ``campaign`` scope: whether it checks imported campaigns (``True``) or
    measured ones; a campaign is checked by the checks of its kind
    (``campaign.imported``)."""

    @property
    def name(self) -> str:
        return self.function.__name__.lstrip("_")


_CHECKS: list[Check] = []


def check(
    rule_id: str, scope: Scope, *, imported: bool = False
) -> Callable[[Callable[..., list[Issue]]], Any]:
    """Register a check of ``rule_id``. Signatures by scope: ``campaign(campaign)`` (of
    imported campaigns where ``imported``, else of measured ones),
    ``project(project_dir)``, ``prose(template, text)``, ``page(path, facts)``, ``report(pages, paths, report)``;
    each returns issues."""

    def register(function: Callable[..., list[Issue]]) -> Callable[..., list[Issue]]:
        _CHECKS.append(Check(rule_id, scope, function, imported))
        return function

    return register


def registered_checks(scope: Scope | None = None) -> list[Check]:
    """Every registered check (of one scope), in registration order (the check modules
    register on import; the package imports them)."""
    return [c for c in _CHECKS if scope is None or c.scope == scope]


@cache
def load_rules() -> tuple[Rule, ...]:
    """The catalog; every registered check must name a rule of it."""
    raw = load_yaml(RULE_CATALOG.read_text(encoding="utf-8"))
    assert isinstance(raw, dict)  # sitegen's own catalog
    rules = tuple(Rule.model_validate(entry) for entry in raw["rules"])
    known = {r.id for r in rules}
    unknown = sorted({c.rule_id for c in registered_checks()} - known)
    if unknown:
        raise RuntimeError(f"checks registered for rules missing from rules.yaml: {unknown}")
    return rules


def rule(rule_id: str) -> Rule:
    return next(r for r in load_rules() if r.id == rule_id)


def violation(rule_id: str, location: str, problem: str) -> Issue:
    """An issue carrying the rule id, where, what is wrong and what to change (both languages)."""
    found = rule(rule_id)
    return Issue(location, f"{problem} — {found.fix.en} / {found.fix.ja}", rule_id)


ISSUES_SHOWN_PER_CHECK = 5


def capped(issues: list[Issue], limit: int = ISSUES_SHOWN_PER_CHECK) -> list[Issue]:
    """The first ``limit`` issues, then one saying how many more there are."""
    if len(issues) <= limit:
        return issues
    last = issues[limit - 1]
    more = Issue(
        f"{last.location.split(':')[0]} …",
        f"and {len(issues) - limit} more like the above",
        last.rule,
    )
    return [*issues[:limit], more]
