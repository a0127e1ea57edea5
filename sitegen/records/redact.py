"""Redaction: what locates the measuring machine is published as labels.

Host names (the provenance host, Ray nodes), server addresses (``base_url`` hosts and
ports, in flags, engine options and free text), absolute paths (reduced to a label of
their directory and the file name), home directories (``/home/<user>``, ``/Users/<user>``,
``/root``) and environment values (``provenance.env``, but those kept) become labels: the
one the project declares (``mkdocs.yml`` → ``redact``) or a short hash of the value
(``host-3f2a9c``). A hash is the same in every build and every campaign, so equal values
stay equal and different values stay different, and comparisons keep their meaning.

The build applies ``redact_campaign`` once, right after validation: statistics, pages
and downloads see only redacted records and plans; the files in ``data/`` are never
changed (validation and signatures run on them).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from functools import cached_property
from typing import Any, cast

import pandas as pd

from sitegen.core.errors import DataError, Issue
from sitegen.core.site_settings import RedactPolicy
from sitegen.plan.plan_models import Plan
from sitegen.records.campaign import AnyCampaign, Campaign, RecordTexts
from sitegen.records.imported_campaign import ImportedCampaign
from sitegen.records.record_models import Provenance, TrialRecord

HASH_DIGITS = 6
"""Hex digits of a default label (``host-3f2a9c``)."""

LOOPBACK = "localhost"
"""Label of a loopback host (``127.x``, ``::1``, ``localhost``): a server on the measuring
machine stays recognisably local (memory figures depend on it); its port is labelled."""

_HOME = re.compile(r"/home/[^/]+|/Users/[^/]+|/root")
"""A home directory (its last component names a user)."""
_URL = r"(?P<url>\bhttps?://(?P<netloc>[^\s/?#'\"<>`\\]+))"
_NETLOC = r"(?P<ip>(?<![\w.-])(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?(?![\w.]))|(?P<local>\blocalhost:\d+)"
_ROUTE = r"(?:v\d+|api|chat|completions?|tokenize|props|health|slots|metrics)\b"
"""First components of an HTTP server's routes (``/v1/chat/completions``): not paths of
the machine, kept as they are."""
_PATH = rf"(?P<path>(?<![\w/.:~-])(?!/{_ROUTE})(?:/(?:[\w.@+~-]+/)+[\w.@+~-]*|/root\b))"


_LABEL = re.compile(rf"(?:host|env)-[0-9a-f]{{{HASH_DIGITS}}}")
"""A label this redactor writes for a host or an environment value."""
_PORT_LABEL = re.compile(rf"port-[0-9a-f]{{{HASH_DIGITS}}}")
"""The label this redactor writes for a port."""


class Redactor:
    """Labels values consistently: one instance for a whole build."""

    def __init__(self, policy: RedactPolicy) -> None:
        self.policy = policy
        self._declared = dict(policy.hosts)
        self._owners: dict[str, str] = {}
        """Hash label → the value it stands for (two values under one label are refused)."""
        self._seen: dict[str, str] = {}
        """Every value relabelled so far → its label: the exact strings that free texts
        without the generic patterns (answers, prompts) are cleaned of."""
        self._hosts: set[str] = set(self._declared)
        self._pattern = self._compile()
        self._known: re.Pattern[str] | None = None
        self._known_values: list[str] = []
        self._provenances: dict[str, Provenance] = {}

    def _compile(self) -> re.Pattern[str]:
        named = "|".join(re.escape(h) for h in sorted(self._hosts, key=len, reverse=True))
        host = rf"(?P<host>(?<![\w.-])(?:{named or '(?!)'})(?![\w-]))"
        return re.compile("|".join((_URL, _NETLOC, host, _PATH)))

    def _hash(self, kind: str, value: str) -> str:
        label = f"{kind}-{hashlib.sha256(value.encode()).hexdigest()[:HASH_DIGITS]}"
        owner = self._owners.setdefault(label, value)
        if owner != value:
            raise DataError(
                [
                    Issue(
                        "mkdocs.yml → redact",
                        f"two different values share the label {label} (a short hash "
                        "collided); declare a label for the host (redact.hosts)",
                        "config",
                    )
                ]
            )
        return label

    def _remember(self, value: str, label: str) -> str:
        if value not in self._seen:
            self._seen[value] = label
            self._known = None
        return label

    def _is_label(self, name: str) -> bool:
        return bool(_LABEL.fullmatch(name)) or name in self._declared.values()

    def host(self, name: str) -> str:
        """The label of a host name (a label stays itself: published records imported
        again are not relabelled)."""
        if self._is_label(name):
            return name
        if name not in self._hosts:
            # Free text quoting this host from now on is relabelled too.
            self._hosts.add(name)
            self._pattern = self._compile()
        return self._remember(name, self._declared.get(name) or self._hash("host", name))

    def netloc(self, netloc: str) -> str:
        """``host[:port]`` labelled: the host as ``host``, the port as a hash of both (a
        label stays itself, as in ``host``)."""
        head, colon, port = netloc.rpartition(":")
        # A published address (the audit redacts published records again): ``localhost``
        # is the loopback's label as much as ``host-…`` is a host's.
        if colon and _PORT_LABEL.fullmatch(port) and (head == LOOPBACK or self._is_label(head)):
            return netloc
        if not (colon and port.isdigit() and (head.endswith("]") or ":" not in head)):
            head, port = netloc, ""
        bare = head.strip("[]")
        local = bare == "localhost" or bare == "::1" or bare.startswith("127.")
        label = LOOPBACK if local else self.host(bare)
        if port:
            label += ":" + self._hash("port", netloc)
        return self._remember(netloc, label)

    def path(self, path: str) -> str:
        """An absolute path as ``dir-<hash>/<file name>`` (a home directory: ``home-<hash>``)."""
        trimmed = path.rstrip("/") or path
        if _HOME.fullmatch(trimmed):
            return self._remember(path, self._directory(trimmed))
        directory, _, name = trimmed.rpartition("/")
        return self._remember(path, f"{self._directory(directory)}/{name}")

    def _directory(self, directory: str) -> str:
        # A home directory's own label, wherever it appears: it names a user.
        kind = "home" if _HOME.fullmatch(directory) else "dir"
        return self._remember(directory, self._hash(kind, directory))

    def env(self, name: str, value: str | None) -> str | None:
        """An environment value, labelled unless kept (unset stays unset)."""
        if value is None or name in self.policy.env.keep or _LABEL.fullmatch(value):
            return value
        return self._hash("env", f"{name}={value}")

    def scrub(self, text: str) -> str:
        """Free text with every address, known host name and absolute path relabelled."""
        return self._pattern.sub(self._replace, text)

    def _replace(self, match: re.Match[str]) -> str:
        if match["url"]:
            return match["url"].replace(match["netloc"], self.netloc(match["netloc"]), 1)
        if match["ip"] or match["local"]:
            return self.netloc(match.group())
        if match["host"]:
            return self.host(match["host"])
        return self.path(match["path"])

    def scrub_known(self, text: str) -> str:
        """Text written by a plan author or a model: only addresses and the paths and
        addresses already relabelled are replaced, not every path-like string of an
        answer, and never a bare word (a host named ``vm`` must not change an answer
        that says "vm", whose score is computed from this text)."""
        if not text:
            return text
        if "://" in text:  # most answers hold no address: skip the scan
            text = re.sub(_URL, self._replace, text)
        # A substring test per known value is far quicker than the pattern on texts that
        # hold none of them (nearly all answers).
        if not any(value in text for value in self.known_values):
            return text
        assert self._known is not None
        return self._known.sub(lambda m: self._seen[m[0]], text)

    @property
    def known_values(self) -> list[str]:
        """The values relabelled so far that ``scrub_known`` replaces in free text (paths
        and addresses), longest first; a new list once a value is added."""
        if self._known is None:
            self._known_values = sorted(
                (v for v in self._seen if "/" in v or ":" in v), key=len, reverse=True
            )
            pattern = "|".join(re.escape(v) for v in self._known_values) or "(?!)"
            self._known = re.compile(rf"(?<![\w.-])(?:{pattern})(?![\w-])")
        return self._known_values

    def record(self, record: TrialRecord) -> TrialRecord:
        """``record`` as published: pure, the record itself is not changed."""
        update: dict[str, Any] = {"provenance": self.provenance(record.provenance)}
        if record.failure_reason is not None:
            update["failure_reason"] = self.scrub(record.failure_reason)
        for name in ("prompt", "text", "reasoning_text"):
            update[name] = self.scrub_known(getattr(record, name))
        redacted = record.model_copy(update=update)
        # The same fields are set: share the set as the lean records do (not a copy each).
        object.__setattr__(redacted, "__pydantic_fields_set__", record.__pydantic_fields_set__)
        return redacted

    def provenance(self, provenance: Provenance) -> Provenance:
        """``provenance`` as published; one object for equal provenances, as the lean
        records share them (a campaign's records mostly have the same)."""
        key = provenance.model_dump_json()
        if key not in self._provenances:
            host = provenance.host.model_copy(
                update={"hostname": self.host(provenance.host.hostname)}
            )
            node = provenance.node and provenance.node.model_copy(
                update={"hostname": self.host(provenance.node.hostname)}
            )
            self._provenances[key] = provenance.model_copy(
                update={
                    "host": host,
                    "node": node,
                    "flags": {k: self.scrub(v) for k, v in provenance.flags.items()},
                    "env": {k: self.env(k, v) for k, v in provenance.env.items()},
                }
            )
        return self._provenances[key]

    def plan(self, plan: Plan) -> Plan:
        """``plan`` as published: model sources and engine options relabelled."""
        model = plan.model.model_copy(update={"source": self.scrub(plan.model.source)})
        conditions = [
            condition.model_copy(
                update={
                    "engine_options": {
                        k: self.scrub(v) if isinstance(v, str) else v
                        for k, v in condition.engine_options.items()
                    },
                    "model": condition.model
                    and condition.model.model_copy(
                        update={"source": self.scrub(condition.model.source)}
                    ),
                }
            )
            for condition in plan.conditions
        ]
        return plan.model_copy(update={"model": model, "conditions": conditions})


@dataclass(frozen=True)
class RedactedCampaign(Campaign):
    """A campaign as published: its plan, provenances and failure reasons redacted, and so
    are the records and texts read back from ``records.jsonl`` (which stays as
    measured)."""

    redactor: Redactor = field(kw_only=True)
    measured_provenances: tuple[Provenance, ...] = field(kw_only=True)
    """The distinct provenances as measured (``table.provenances`` holds them as
    published)."""

    def published(self, record: TrialRecord) -> TrialRecord:
        return self.redactor.record(record)

    def published_texts(self, texts: RecordTexts) -> dict[str, str | None]:
        return {
            k: None if v is None else self.redactor.scrub_known(v)
            for k, v in super().published_texts(texts).items()
        }

    def line_kept_as_is(self, rows: pd.DataFrame) -> pd.Series:
        # A failure reason is scrubbed: such a record is written again.
        return super().line_kept_as_is(rows) & rows["failure_reason"].isna()

    def published_line(self, index: int, line: bytes) -> bytes | None:
        # Publishing swaps the provenance's JSON for the published one's, and in the rest
        # of the record (free text) relabels addresses and what was relabelled already: a
        # line whose rest holds either is written again by the redactor.
        provenance = int(cast(int, self.rows["provenance"].iat[index]))
        measured, published = self._provenance_lines[provenance]
        if line.count(measured) != 1:
            return None
        before, _, after = line.partition(measured)
        for rest in (before, after):
            if b"://" in rest or any(value in rest for value in self._known_in_lines()):
                return None
        return before + published + after

    @cached_property
    def _provenance_lines(self) -> list[tuple[bytes, bytes]]:
        """Each distinct provenance's JSON as measured and as published."""
        return [
            (
                measured.model_dump_json().encode("utf-8"),
                published.model_dump_json().encode("utf-8"),
            )
            for measured, published in zip(
                self.measured_provenances, self.table.provenances, strict=True
            )
        ]

    def _known_in_lines(self) -> list[bytes]:
        """The values the redactor relabels in free text, as JSON writes them in a line
        (encoded again when the redactor has learnt another value)."""
        values = self.redactor.known_values
        encoded = self._encoded_known
        if encoded.get("for") is not values:
            encoded["for"] = values
            encoded["lines"] = [
                json.dumps(v, ensure_ascii=False)[1:-1].encode("utf-8") for v in values
            ]
        return encoded["lines"]

    @cached_property
    def _encoded_known(self) -> dict[str, Any]:
        return {}


def redact_campaign(campaign: Campaign, redactor: Redactor) -> RedactedCampaign:
    """``campaign`` as published; the campaign read from ``data/`` is not changed."""
    fields = {f.name: getattr(campaign, f.name) for f in dataclass_fields(campaign)}
    table = campaign.table.with_provenances(redactor.provenance)
    rows = table.rows.copy(deep=False)
    reasons = rows["failure_reason"]
    # Each distinct reason once: most are repeated, and most records have none.
    scrubbed = {reason: redactor.scrub(reason) for reason in set(reasons.dropna())}
    rows["failure_reason"] = reasons.map(scrubbed, na_action="ignore")
    fields |= {
        "plan": redactor.plan(campaign.plan),
        "table": replace(table, rows=rows),
    }
    return RedactedCampaign(
        **fields, redactor=redactor, measured_provenances=campaign.table.provenances
    )


def redact_imported(campaign: ImportedCampaign, redactor: Redactor) -> ImportedCampaign:
    """An imported campaign as published: what its sources state about the run (the
    server's address, a model path, other stated facts) and every text of its records
    (errors, request bodies, prompts and answers: another tool's files, read as free text)
    relabelled; the campaign read from ``data/`` is not changed."""
    registration = campaign.registration
    sources = [
        source.model_copy(
            update={
                "target": source.target and redactor.scrub(source.target),
                "model": source.model and redactor.scrub(source.model),
                "backend": source.backend and redactor.scrub(source.backend),
                "stated": {k: redactor.scrub(v) for k, v in source.stated.items()},
            }
        )
        for source in registration.sources
    ]
    records = [
        record.model_copy(
            update={
                "measurement": record.measurement.model_copy(
                    update={
                        name: redactor.scrub(text)
                        for name in IMPORTED_TEXTS
                        if (text := getattr(record.measurement, name))
                    }
                )
            }
        )
        for record in campaign.records
    ]
    return replace(
        campaign,
        registration=registration.model_copy(update={"sources": sources}),
        records=records,
    )


IMPORTED_TEXTS = ("error", "output_text", "prompt_text", "request_body")
"""The free texts of an imported measurement."""


def redact(campaign: AnyCampaign, redactor: Redactor) -> AnyCampaign:
    """``campaign`` as published, measured or imported."""
    if campaign.imported:
        return redact_imported(campaign, redactor)
    return redact_campaign(campaign, redactor)
