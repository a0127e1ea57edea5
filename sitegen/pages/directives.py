"""Content directives: the functions report pages call to place data.

Pages in ``content/<lang>/`` are jinja2 templates (autoescaped). Prose is written
there; every figure, table, chart and number comes from a directive such as
``{{ speed_chart("gen_tps") }}``. A directive renders an autoescaped partial from
``theme/partials/`` and carries its caveats in the page's language.
"""

from __future__ import annotations

import html
import inspect
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import jinja2
from markupsafe import Markup, escape

from sitegen.pages.author_text import render_author_text
from sitegen.pages.charts import trials_chart
from sitegen.pages.downloads import ANSWERS_PAGE_SIZE, DownloadFile
from sitegen.pages.i18n import Catalog
from sitegen.pages.safe_json import script_json
from sitegen.pages.schema import field_dictionary
from sitegen.quality.suites import ALL_DOMAINS
from sitegen.records.models import TrialRecord
from sitegen.statistics.comparison import CrossCampaign
from sitegen.statistics.report import Report
from sitegen.text import CONTROL_CHARACTERS
from sitegen.validation.rules import load_rules

CHART_INLINE_BYTES = 60_000
"""A chart spec larger than this is a JSON file the page loads, not part of the page."""
TABLE_PAGE_ROWS = 200
"""Rows of a chart's number table per page; more rows are JSON pages loaded on demand."""


def format_number(value: Any, digits: int | None = None) -> str:
    """Thousands separators; ``digits`` decimals, or a whole number when ``digits`` is None;
    ``-`` for missing values (None, NaN, pandas NA)."""
    try:
        if value is None or math.isnan(float(value)):
            return "-"
    except TypeError:  # pandas NA refuses float()
        return "-"
    if digits is None:
        return f"{round(float(value)):,}"
    return f"{float(value):,.{digits}f}"


def format_signed(value: Any, digits: int = 1) -> str:
    """``format_number`` with an explicit sign (``+21.7``, ``-3.0``); a value that rounds to
    zero has none (``0.0``); ``-`` for missing values."""
    shown = format_number(value, digits)
    if shown == "-":
        return shown
    if not shown.strip("-0.,"):
        return shown.lstrip("-")
    return shown if shown.startswith("-") else f"+{shown}"


def html_environment(partials_dir: str) -> jinja2.Environment:
    """The environment for partials: autoescape on, undefined names are errors."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(partials_dir),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = format_number
    env.filters["signed"] = format_signed
    env.filters["script_json"] = lambda value: Markup(script_json(value))
    env.filters["text_block"] = text_block
    env.filters["utc"] = format_utc
    env.filters["author_text"] = render_author_text
    return env


def format_utc(value: datetime | None) -> str:
    """``YYYY-MM-DD HH:MM UTC``, or ``-``."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "-"


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!])")
"""Python-Markdown's backslash-escapable characters (``<`` and ``>`` are escaped as HTML)."""


def markdown_inline_text(text: str) -> Markup:
    """Untrusted one-line text placed in Markdown source: ``&``, ``<`` and ``>`` escaped
    (so entities stay literal) and every Markdown punctuation character backslash-escaped;
    line breaks become spaces."""
    flat = " ".join(str(text).split())
    # Only &, < and > become entities: their names hold no Markdown punctuation, so the
    # backslashes below never split an entity (quotes need no escaping in element text).
    return Markup(_MARKDOWN_PUNCTUATION.sub(r"\\\1", html.escape(flat, quote=False)))


def text_block(text: str) -> Markup:
    """Untrusted multi-line text, escaped, control characters shown as their Unicode
    pictures (␀, ␛ …), newlines as character references so the surrounding HTML block has
    no blank line (Markdown would end the block there)."""
    visible = CONTROL_CHARACTERS.sub(_control_picture, str(text).replace("\r", ""))
    return Markup(str(escape(visible)).replace("\n", "&#10;"))


def _control_picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def _one_block(html: str) -> Markup:
    """Partials become one raw-HTML block for the Markdown renderer: no blank lines."""
    # split("\n"), not splitlines(): model text may hold U+2028, form feeds and the like.
    return Markup("\n".join(line for line in html.split("\n") if line.strip()))


class Directives:
    """Directive functions bound to one report (or the home page) and one language."""

    def __init__(
        self,
        env: jinja2.Environment,
        catalog: Catalog,
        report: Report | None,
        reports: list[Report],
        download_files: list[DownloadFile] = (),
        site_root: str = "",
        comparison: CrossCampaign | None = None,
    ) -> None:
        self.env = env
        self.catalog = catalog
        self.report = report
        self.reports = reports
        self.download_files = list(download_files)
        self.site_root = site_root
        """Relative path from the page to the site root, e.g. ``../../../``."""
        self.extra_files: dict[str, bytes] = {}
        """Files the rendered directives need beside the page (docs path → bytes)."""
        self.comparison = comparison
        """The comparison of several campaigns a comparison page shows."""

    def functions(self) -> dict[str, Callable[..., Markup | str | bool]]:
        """Every public method: what content templates can call."""
        return {
            name: getattr(self, name)
            for name, _ in inspect.getmembers(Directives, inspect.isfunction)
            if not name.startswith("_") and name != "functions"
        }

    def _render(self, partial: str, **context: Any) -> Markup:
        template = self.env.get_template(partial)
        return _one_block(
            template.render(
                t=self.catalog.t, lang=self.catalog.lang, site_root=self.site_root, **context
            )
        )

    def _require_report(self) -> Report:
        if self.report is None:
            raise jinja2.TemplateRuntimeError("this directive is only available on report pages")
        return self.report

    def t(self, key: str) -> str:
        """A catalog string as it is (no values: a figure never enters a page this way)."""
        return self.catalog.t(key)

    def literal(self, value: str, why: str) -> Markup:
        """A figure that is not a measurement (e.g. a model card's context length), shown
        with its source; the only way to write a number in prose."""
        if not str(value).strip() or not str(why).strip():
            raise jinja2.TemplateRuntimeError("literal(value, why=…) needs a value and a source")
        return self._render("literal.html", value=str(value), why=str(why))

    def report_title(self) -> Markup:
        """The plan's title as plain text inside Markdown (a heading line): HTML-escaped and
        Markdown punctuation backslash-escaped, so a title never becomes markup or a link."""
        return markdown_inline_text(self._require_report().plan.title[self.catalog.lang])

    def _require_comparison(self) -> CrossCampaign:
        if self.comparison is None:
            raise jinja2.TemplateRuntimeError(
                "this directive is only available on comparison pages"
            )
        return self.comparison

    def comparison_title(self) -> Markup:
        """The comparison's title as plain text inside Markdown (see ``report_title``)."""
        return markdown_inline_text(self._require_comparison().spec.title[self.catalog.lang])

    def comparison_table(self) -> Markup:
        """The campaigns side by side: per condition × input, each campaign's median and
        the fields that differ; a ratio only for a factor-only difference (C-CONFDIFF)."""
        comparison = self._require_comparison()
        return self._render(
            "comparison.html",
            comparison=comparison,
            titles={r.slug: r.plan.title[self.catalog.lang] for r in comparison.reports},
            reports={r.slug: r for r in comparison.reports},
        )

    def report_list(self) -> Markup:
        return self._render("report_list.html", reports=self.reports)

    def headline(self) -> Markup:
        report = self._require_report()
        return self._render("headline.html", report=report, rows=report.headline)

    def speed_chart(self, metric: str = "gen_tps") -> Markup:
        """Every trial as a point with each condition's median, and the table of the
        chart's numbers. A large campaign's chart and table are files the page loads
        (``CHART_INLINE_BYTES``, ``TABLE_PAGE_ROWS``), so no page grows with the records."""
        report = self._require_report()
        trials = report.usable_speed_trials.sort_values("order_index")
        spec = script_json(
            trials_chart(trials, report.summary, metric, report.condition_labels, self.catalog)
        )
        lang = self.catalog.lang
        spec_file = None
        if len(spec) > CHART_INLINE_BYTES:
            spec_file = f"charts/{metric}.{lang}.json"
            self.extra_files[f"reports/{report.slug}/{spec_file}"] = spec.encode("utf-8")
        rows = [
            [
                row["trial_id"],
                f"#t{row['order_index']}",
                report.condition_labels[row["condition_id"]],
                row["input_id"],
                str(row["seed"]),
                format_number(row[metric], 2),
                format_number(row["generated_tokens"]),
                self.catalog.t(f"finish.{row['finish']}"),
            ]
            for row in trials.to_dict("records")
        ]
        pages = [rows[i : i + TABLE_PAGE_ROWS] for i in range(0, len(rows), TABLE_PAGE_ROWS)]
        table_files = []
        if len(pages) > 1:
            for index, page in enumerate(pages):
                name = f"tables/{metric}.{lang}.{index}.json"
                self.extra_files[f"reports/{report.slug}/{name}"] = script_json(page).encode()
                table_files.append(name)
        return self._render(
            "speed_chart.html",
            report=report,
            metric=metric,
            spec=Markup(spec) if spec_file is None else None,
            spec_file=spec_file,
            rows=pages[0] if pages else [],
            table_files=table_files,
            row_count=len(rows),
            page_rows=TABLE_PAGE_ROWS,
        )

    def speed_table(self) -> Markup:
        report = self._require_report()
        return self._render(
            "speed_table.html",
            report=report,
            rows=report.summary.to_dict("records"),
            labels=report.condition_labels,
        )

    def memory_table(self) -> Markup:
        """Peak memory per condition and device (GPU via NVML, CPU engines: process RSS)."""
        report = self._require_report()
        return self._render(
            "memory_table.html",
            report=report,
            rows=report.memory.to_dict("records"),
            labels=report.condition_labels,
        )

    def latency_table(self) -> Markup:
        """Per condition × input medians of the latency breakdown: prefill (the engine's
        own figure), first token, first text, first answer, natural finish, and thinking
        vs answer tokens where the engine separates them."""
        report = self._require_report()
        return self._render(
            "latency_table.html",
            report=report,
            rows=report.summary.to_dict("records"),
            labels=report.condition_labels,
        )

    def system_table(self) -> Markup:
        """Per condition: devices, driver, runtime, interconnect, CPU, engine, model files
        with every shard's SHA-256, flags, environment, sampling and template arguments,
        from the usable records' provenance (values that differ are all listed)."""
        report = self._require_report()
        return self._render(
            "system_table.html",
            report=report,
            conditions=report.system,
            labels=report.condition_labels,
        )

    def excluded(self) -> Markup:
        return self._render("excluded.html", report=self._require_report())

    def conditions_table(self) -> Markup:
        return self._render("conditions.html", report=self._require_report())

    def provenance(self) -> Markup:
        report = self._require_report()
        first = report.campaign.records[0].provenance if report.campaign.records else None
        return self._render("provenance.html", report=report, provenance=first)

    def downloads(self) -> Markup:
        return self._render(
            "downloads.html", report=self._require_report(), files=self.download_files
        )

    def answers(self) -> Markup:
        """Every answer's full text, one page of ``ANSWERS_PAGE_SIZE`` loaded on demand."""
        report = self._require_report()
        count = len(report.campaign.records)
        pages = [
            {"first": start + 1, "last": min(start + ANSWERS_PAGE_SIZE, count)}
            for start in range(0, count, ANSWERS_PAGE_SIZE)
        ]
        labels = {
            key: self.catalog.t(f"answers.{key}")
            for key in ("loading", "failed", "page", "text", "reasoning")
        }
        codes = ("role.warmup", "role.measured", "status.ok", "status.failed")
        codes += tuple(f"finish.{f}" for f in ("stop", "length", "error"))
        labels.update({code: self.catalog.t(code) for code in codes})
        return self._render(
            "answers.html",
            report=report,
            pages=pages,
            page_size=ANSWERS_PAGE_SIZE,
            labels=labels,
        )

    def has_speed(self) -> bool:
        """Whether the report has speed inputs (content can branch on it)."""
        return bool(self._require_report().plan.inputs)

    def report_has_quality(self) -> bool:
        return self._require_report().quality is not None

    def _require_quality(self):
        quality = self._require_report().quality
        if quality is None:
            raise jinja2.TemplateRuntimeError("this report has no quality evaluation")
        return quality

    def quality_result(self) -> Markup:
        """The pre-registered non-inferiority result with its margin, counts and caveats."""
        report = self._require_report()
        quality = self._require_quality()
        return self._render(
            "quality_result.html",
            report=report,
            quality=quality,
            outcomes=quality.outcomes.set_index("factor").to_dict("index"),
        )

    def quality_outcomes(self, documents: bool = False) -> Markup:
        """Outcome counts per factor: correct beside length-capped, not reached … (C-TRUNC)."""
        quality = self._require_quality()
        frame = quality.document_outcomes if documents else quality.outcomes
        limits = [
            limit
            for limit in self._require_report().quality_limits
            if (limit.task_id is not None) == documents
        ]
        return self._render("quality_outcomes.html", rows=frame.to_dict("records"), limits=limits)

    def quality_pairs(self, by: str | None = None) -> Markup:
        """Pair table (both / off only / on only / neither), overall or per domain."""
        quality = self._require_quality()
        frame = quality.pairs_by_domain if by == "domain" else quality.pairs
        labels = {d.domain_id: d.label[self.catalog.lang] for d in ALL_DOMAINS}
        return self._render(
            "quality_pairs.html",
            rows=frame.to_dict("records"),
            by=by,
            labels=labels,
            outcomes=quality.outcomes.set_index("factor").to_dict("index"),
        )

    def quality_sensitivity(self) -> Markup:
        return self._render("quality_sensitivity.html", quality=self._require_quality())

    def document_items(self) -> Markup:
        """Per-item pair table of the document tasks, with pass counts and outcomes."""
        quality = self._require_quality()
        return self._render(
            "document_items.html",
            rows=quality.document_pairs_by_item.to_dict("records"),
            totals=quality.document_pairs.to_dict("records"),
            outcomes=quality.document_outcomes.set_index("factor").to_dict("index")
            if len(quality.document_outcomes)
            else {},
            limits=[
                limit
                for limit in self._require_report().quality_limits
                if limit.task_id is not None
            ],
        )

    def measured_on(self) -> Markup:
        """The measured hardware (C-HARDWARE)."""
        return self._render("measured_on.html", report=self._require_report())

    def review(self) -> Markup:
        """Who reviewed the full answers (C-REVIEW)."""
        return self._render("review.html", annotations=self._require_report().campaign.annotations)

    def examples(self) -> Markup:
        """Curated examples (with reason and notice), then a seeded random draw (C-EXAMPLE)."""
        report = self._require_report()
        annotations = report.campaign.annotations
        return self._render(
            "examples.html",
            examples=report.examples,
            draw=annotations.random_examples,
            annotations=annotations,
        )

    def thresholds(self) -> Markup:
        """Threshold claims as observed in k of n trials (C-THRESHOLD)."""
        report = self._require_report()
        return self._render(
            "thresholds.html",
            report=report,
            rows=report.thresholds,
            labels=report.condition_labels,
        )

    def completion_time(self, input_id: str, ratio: bool = False) -> Markup:
        """End-to-end times of each condition beside their output lengths; the time ratio
        only when asked (C-LENGTH refuses it when output lengths differ)."""
        report = self._require_report()
        if input_id not in report.speed_input_ids:
            known = ", ".join(sorted(report.speed_input_ids)) or "none"
            raise jinja2.TemplateRuntimeError(
                f"completion_time('{input_id}'): not a speed input of this report (known: {known})"
            )
        times = report.completion_times(input_id)
        return self._render(
            "completion_time.html",
            times=times,
            show_ratio=ratio and times.time_ratio is not None,
            labels=report.condition_labels,
        )

    def quality_post_hoc(self) -> Markup:
        """Post-hoc analyses beside (never instead of) the primary result (C-POSTHOC)."""
        self._require_quality()
        return self._render("post_hoc.html", results=self._require_report().post_hoc)

    def caveat_rules(self) -> Markup:
        """The rule list, as enforced by the build (method page)."""
        return self._render("caveat_rules.html", rules=load_rules())

    def data_dictionary(self) -> Markup:
        """Every field of the trial record with its documentation (from the model)."""
        return self._render("data_dictionary.html", rows=field_dictionary(TrialRecord))
