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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup, escape

from sitegen.engine.registry import prefill_source as engine_prefill_source
from sitegen.formatting import FILTERS, count, milliseconds, rate, seconds, setting
from sitegen.pages.author_text import render_author_text
from sitegen.pages.charts import (
    PALETTE,
    axis_title,
    cdf_chart,
    load_chart,
    pareto_chart,
    sweep_chart,
    trials_chart,
)
from sitegen.pages.downloads import ANSWERS_PAGE_SIZE, DownloadFile
from sitegen.pages.i18n import Catalog, shipped_keys
from sitegen.pages.published_figures import figure_span, report_figures
from sitegen.pages.safe_json import script_json
from sitegen.pages.schema import SCHEMA_MODELS, field_dictionary
from sitegen.pages.sources import Source
from sitegen.pages.template_cache import bytecode_cache
from sitegen.quality.suites import ALL_DOMAINS
from sitegen.records.models import TrialRecord
from sitegen.statistics.comparison import CrossCampaign
from sitegen.statistics.dispersion import IQR_FENCE
from sitegen.statistics.imported import ImportedReport
from sitegen.statistics.latency import LATENCY_METRICS, MIN_VALUES, PERCENTILES, cdf_points
from sitegen.statistics.load import SATURATION_LATENCY_FACTOR, SATURATION_SHORTFALL, slo_key
from sitegen.statistics.overview import (
    imported_rows,
    measured_rows,
    overview_headlines,
    overview_selection,
)
from sitegen.statistics.report import MIN_RATIO_TRIALS, Report
from sitegen.statistics.speed import records_of
from sitegen.statistics.sweep import Sweep, factor_values
from sitegen.statistics.system import memory_gaps
from sitegen.text import CONTROL_CHARACTERS
from sitegen.validation.figure_checks import has_placeholders
from sitegen.validation.rules import load_rules, registered_checks

CHART_INLINE_BYTES = 60_000
"""A chart spec larger than this is a JSON file the page loads, not part of the page."""
TABLE_PAGE_ROWS = 200
"""Rows of a chart's number table per page; more rows are JSON pages loaded on demand."""


@cache
def html_environment(partials_dir: str) -> jinja2.Environment:
    """The environment for partials: autoescape on, undefined names are errors. One per
    folder and process: its templates are loaded once, not at every build (Jinja still
    reloads a template whose file changed)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(partials_dir),
        bytecode_cache=bytecode_cache(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    env.filters["script_json"] = lambda value: Markup(script_json(value))
    env.filters["text_block"] = text_block
    env.filters["utc"] = format_utc
    env.filters["author_text"] = render_author_text
    env.globals["iqr_fence"] = IQR_FENCE
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


def _comparison_extras(comparison: CrossCampaign) -> dict[tuple[str, str, str], dict]:
    """Per campaign, condition and input: what a comparison shows beside the generation
    rate (TTFT median, draft acceptance, the condition's peak memory)."""
    extras: dict[tuple[str, str, str], dict] = {}
    for report in comparison.reports:
        memory = {o.condition_id: o.peak_memory_mib for o in report.condition_overview}
        for row in report.summary_records:
            key = (report.slug, row["condition_id"], row["input_id"])
            extras[key] = {
                name: None if pd.isna(row.get(name)) else row.get(name)
                for name in ("ttft_s_median", "acceptance", "draft_proposed")
            } | {
                "speculative_mode": row.get("speculative_mode"),
                "peak_memory_mib": memory.get(row["condition_id"]),
            }
    return extras


@dataclass(frozen=True)
class Quote:
    """A figure a page quotes with ``literal``, and its source."""

    value: str
    source: Source


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


class Directives:
    """Directive functions bound to one report (or the home page) and one language."""

    def __init__(
        self,
        env: jinja2.Environment,
        catalog: Catalog,
        report: Report | None,
        reports: list[Report],
        download_files: Sequence[DownloadFile] | Callable[[], Sequence[DownloadFile]] = (),
        site_root: str = "",
        comparison: CrossCampaign | None = None,
        report_pages: tuple[str, ...] = (),
        sources: dict[str, Source] | None = None,
        quoted: list[Quote] | None = None,
        imported: ImportedReport | None = None,
        imported_reports: list[ImportedReport] = (),
        page: str = "",
        language_home: str = "",
        printed_figures: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.env = env
        self.catalog = catalog
        self.report = report
        self.reports = reports
        self._download_files = download_files
        self.site_root = site_root
        """Relative path from the page to the site root, e.g. ``../../../``."""
        self.extra_files: dict[str, bytes] = {}
        """Files the rendered directives need beside the page (docs path → bytes)."""
        self.comparison = comparison
        """The comparison of several campaigns a comparison page shows."""
        self.report_pages = report_pages
        """The pages the report has, in navigation order (links only to these)."""
        self.sources = sources or {}
        """The sources ``literal`` may cite (``content/sources.yaml``)."""
        self.page = page
        """The report page being rendered (``index``, ``speed`` …), for links between pages."""
        self.imported = imported
        """The imported campaign an imported report page shows."""
        self.imported_reports = list(imported_reports)
        """Every imported campaign's report (the overview lists them)."""
        self.language_home = language_home
        """Relative path from the page to its language's home page (``../`` from the
        overview page), for links to the reports."""
        self.quoted = [] if quoted is None else quoted
        """Every literal of the report's pages in this language, for ``literals()``
        (shared by the pages of one report)."""
        self.printed_figures = {} if printed_figures is None else printed_figures
        """Each report's figures as printed (``report_figures``) by its name, made on first
        use (shared by the pages of every report and language: figures print alike)."""

    @property
    def download_files(self) -> list[DownloadFile]:
        """The report's downloads. Given as a function where they are being written while
        the pages render: the first page that lists them waits for them."""
        files = self._download_files
        return list(files() if callable(files) else files)

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
                t=self.catalog.t,
                lang=self.catalog.lang,
                site_root=self.site_root,
                field_list=self._field_list,
                figure=self._figure,
                **context,
            )
        )

    def _figure(self, figure_id: str) -> Markup:
        """A figure of the report as ``report_figures`` prints it, marked for the audit."""
        report = self._require_report()
        if report.slug not in self.printed_figures:
            self.printed_figures[report.slug] = report_figures(report)
        return figure_span(self.printed_figures[report.slug], figure_id)

    def _labels(self, report: Report) -> dict[str, str]:
        """What readers call each condition of ``report`` in this page's language."""
        return {cid: label[self.catalog.lang] for cid, label in report.condition_labels.items()}

    def _field_list(self, names: Iterable[str]) -> str:
        """Compared fields as readers name them (``compare.field.<name>``), comma-separated."""
        separator = "、" if self.catalog.lang == "ja" else ", "
        return separator.join(
            self.catalog.t(f"compare.field.{name}")
            if f"compare.field.{name}" in self.catalog.strings
            else name
            for name in names
        )

    def _require_report(self) -> Report:
        if self.report is None:
            raise jinja2.TemplateRuntimeError("this directive is only available on report pages")
        return self.report

    def t(self, key: str) -> str:
        """A catalog string that takes no values, as it is (a figure never enters a page
        this way: such strings are checked by C-FIGURE)."""
        strings = self.catalog.strings
        if key not in shipped_keys() or key not in strings:
            raise jinja2.TemplateRuntimeError(f"t('{key}'): not a key of the shipped catalog")
        if has_placeholders(strings[key][self.catalog.lang]):
            raise jinja2.TemplateRuntimeError(
                f"t('{key}'): not a catalog string without values (theme/i18n/*.yml)"
            )
        return self.catalog.t(key)

    def literal(self, value: str, source: str = "", **unknown: object) -> Markup:
        """A figure that is not a measurement (e.g. a model card's context length), quoted
        from a declared source (``content/sources.yaml``) and marked as not measured in
        this report; the only way to write a number in prose."""
        cited = self.sources.get(str(source))
        if unknown or not str(value).strip() or cited is None:
            known = ", ".join(sorted(self.sources)) or "none declared"
            raise jinja2.TemplateRuntimeError(
                f"literal({str(value)!r}, source=…) needs a value and the id of a source of "
                f"content/sources.yaml (known: {known}); the report's own data is shown "
                "by directives, never quoted"
            )
        self.quoted.append(Quote(str(value), cited))
        return self._render("literal.html", value=str(value), source=cited)

    def literals(self) -> Markup:
        """Every literal the report's pages quote, with its source (method page)."""
        return self._render("literals.html", quotes=list(dict.fromkeys(self.quoted)))

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
            titles=comparison.campaign_names(self.catalog.lang),
            reports={r.slug: r for r in comparison.reports},
            extras=_comparison_extras(comparison),
        )

    def report_list(self) -> Markup:
        """Every campaign's headline in one sortable table (``statistics/overview.py``):
        each measured campaign's comparisons, then each imported campaign's figures."""
        return self.overview()

    def overview(
        self, campaigns: object = None, columns: object = None, headlines: object = None
    ) -> Markup:
        """The overview table of the campaigns named by folder name, in that order, with
        the columns named (``OVERVIEW_COLUMNS``, shown in the table's order); every
        campaign and column when not named: ``overview(campaigns=["a", "b"],
        columns=["speedup", "rate", "ttft"])``. ``headlines`` chooses a measured
        campaign's headline rows like a plan's ``headline``:
        ``headlines={"a": {"baseline": "off", "treatment": "ng2", "input": "q"}}``."""
        measured = {report.slug: report for report in self.reports}
        imported = {report.slug: report for report in self.imported_reports}
        try:
            slugs, shown = overview_selection([*measured, *imported], campaigns, columns)
            chosen = overview_headlines(measured, headlines)
        except ValueError as exc:
            raise jinja2.TemplateRuntimeError(f"overview({exc})") from None
        rows = [
            row
            for slug in slugs
            for row in (
                measured_rows(measured[slug], chosen.get(slug))
                if slug in measured
                else imported_rows(imported[slug])
            )
        ]
        return self._render(
            "report_list.html",
            rows=rows,
            columns=shown,
            home=self.language_home,
            minimum=MIN_VALUES,
            min_ratio_trials=MIN_RATIO_TRIALS,
        )

    def _require_imported(self) -> ImportedReport:
        if self.imported is None:
            raise jinja2.TemplateRuntimeError(
                "this directive is only available on an imported campaign's page"
            )
        return self.imported

    def imported_title(self) -> Markup:
        """An imported campaign's title as plain text inside Markdown (see ``report_title``)."""
        return markdown_inline_text(self._require_imported().title[self.catalog.lang])

    def imported_report(self) -> Markup:
        """An imported campaign's whole report: its figures with their source (C-IMPORTED),
        ratios where the declaration allows them, the claims the source cannot support,
        what the publisher declared and the imported files."""
        report = self._require_imported()
        return self._render(
            "imported_report.html",
            report=report,
            downloads=[file.name for file in self.download_files],
            charts=self._imported_charts(report),
            latency=report.latency_records,
            percentiles=PERCENTILES,
            minimum=MIN_VALUES,
        )

    def _imported_charts(self, report: ImportedReport) -> list[tuple[str, str, Markup]]:
        """The measured reports' charts where the imported records allow them, as
        ``(metric, kind, spec)``: the generation rate per request with each condition's
        median (``trials_chart``) and the empirical CDF of TTFT (``cdf_chart``)."""
        frame = report.frame
        if frame.empty:
            return []
        usable = frame[(frame["role"] == "measured") & (frame["status"] == "ok")]
        labels = {cid: label[self.catalog.lang] for cid, label in report.condition_labels.items()}
        charts = []
        if usable["gen_tps"].notna().any():
            trials = usable[usable["gen_tps"].notna()]
            summary = pd.DataFrame(
                [
                    {
                        "condition_id": row.condition_id,
                        "input_id": row.input_id,
                        "gen_tps_median": row.figures["gen_tps"].median,
                    }
                    for row in report.rows
                ]
            )
            spec = trials_chart(trials, summary, "gen_tps", labels, self.catalog)
            charts.append(("gen_tps", "trials", Markup(script_json(spec))))
        series = [
            (
                f"{labels[condition_id]} · {input_id}",
                *cdf_points(group["ttft_s"].astype(float).to_numpy()),
            )
            for (condition_id, input_id), group in usable.groupby(
                ["condition_id", "input_id"], sort=False
            )
        ]
        series = [s for s in series if s[1]]
        if series:
            spec = cdf_chart(series, self.catalog.t("metric.ttft_s"), self.catalog)
            charts.append(("ttft_s", "cdf", Markup(script_json(spec))))
        return charts

    def headline(self) -> Markup:
        report = self._require_report()
        return self._render(
            "headline.html",
            report=report,
            rows=report.headline,
            min_ratio_trials=MIN_RATIO_TRIALS,
        )

    def speed_chart(self, metric: str = "gen_tps") -> Markup:
        """Every trial as a point with each condition's median, and the table of the
        chart's numbers. A large campaign's chart and table are files the page loads
        (``CHART_INLINE_BYTES``, ``TABLE_PAGE_ROWS``), so no page grows with the records."""
        report = self._require_report()
        # Only the columns the chart and table show are sorted (not every column of every
        # trial, once per page and metric).
        shown = ["trial_id", "order_index", "condition_id", "input_id", "seed", metric]
        shown += ["generated_tokens", "finish", "outlier"]
        usable = report.usable_speed_trials
        trials = usable[[c for c in dict.fromkeys(shown) if c in usable]]
        trials = trials.sort_values("order_index")
        spec = script_json(
            trials_chart(trials, report.summary, metric, self._labels(report), self.catalog)
        )
        lang = self.catalog.lang
        spec_file = None
        if len(spec) > CHART_INLINE_BYTES:
            # Not "<metric>.<lang>.json": the i18n plugin would take the language suffix
            # for a translation of the file and move it away from the address the page loads.
            spec_file = f"charts/{metric}-{lang}.json"
            self.extra_files[f"reports/{report.slug}/{spec_file}"] = spec.encode("utf-8")
        rows = [
            [
                row["trial_id"],
                f"#t{row['order_index']}",
                self._labels(report)[row["condition_id"]],
                row["input_id"],
                str(row["seed"]),
                (rate if metric.endswith("tps") else seconds)(row[metric]),
                count(row["generated_tokens"]),
                self.catalog.t(f"finish.{row['finish']}"),
            ]
            for row in trials.to_dict("records")
        ]
        pages = [rows[i : i + TABLE_PAGE_ROWS] for i in range(0, len(rows), TABLE_PAGE_ROWS)]
        table_files = []
        if len(pages) > 1:
            for index, page in enumerate(pages):
                name = f"{metric}.{lang}.{index}.json"
                self.extra_files[f"reports/{report.slug}/tables/{name}"] = script_json(
                    page
                ).encode()
                table_files.append(name)
        return self._render(
            "speed_chart.html",
            report=report,
            metric=metric,
            spec=Markup(spec) if spec_file is None else None,
            spec_file=spec_file,
            rows=pages[0] if pages else [],
            table_files=table_files,
            # Each trial's record on the data page, from the summary or a page beside it.
            data_page="data/" if self.page == "index" else "../data/",
            row_count=len(rows),
            page_rows=TABLE_PAGE_ROWS,
        )

    def _factor_name(self, key: str) -> str:
        """A sweep factor in the page's language (engine options by their key)."""
        if key.startswith("option:"):
            return self.catalog.t("factor.option", key=key.removeprefix("option:"))
        return self.catalog.t(f"factor.{key}")

    def _level(self, value: Any, factor: str = "") -> str:
        if value is None:
            # No draft length is speculation off; other unset factors take the default.
            return self.catalog.t("sweep.off" if factor == "draft_max" else "sweep.unset")
        return setting(value)

    def _series_label(self, values: dict[str, Any]) -> str:
        """A sweep series in the page's language, e.g. ``温度 0.7 · 同時リクエスト 2``."""
        parts = [
            f"{self._factor_name(key)} {self._level(value, key)}" for key, value in values.items()
        ]
        return " · ".join(parts) or self.catalog.t("sweep.all_series")

    def _require_sweep(self) -> Sweep:
        sweep = self._require_report().sweep
        if sweep is None:
            raise jinja2.TemplateRuntimeError("this report has no sweep (one speculative level)")
        return sweep

    def sweep_varies(self, factor: str) -> bool:
        """Whether the report's sweep varies ``factor`` (``draft_max``, ``concurrency`` …);
        content can branch on it."""
        sweep = self._require_report().sweep
        return sweep is not None and factor in sweep.factors

    def sweep_factors(self) -> Markup:
        """The factors the sweep varies, named in the page's language, with their levels."""
        report = self._require_report()
        sweep = self._require_sweep()
        values = {c.id: factor_values(report.plan, c) for c in report.plan.conditions}
        rows = [
            (
                self._factor_name(factor),
                [self._level(v, factor) for v in dict.fromkeys(v[factor] for v in values.values())],
            )
            for factor in sweep.factors
        ]
        return self._render("sweep_factors.html", rows=rows)

    def sweep_table(self) -> Markup:
        """Per input: the ratio of every speculative level (rows) in every series (columns)
        to its matched baseline, with its bootstrap interval and acceptance; a level whose
        speculation did not run states what was observed (C-SPECHEALTH)."""
        report = self._require_report()
        sweep = self._require_sweep()
        tables = []
        for spec in report.plan.inputs:
            rows = []
            for level in sweep.levels:
                cells = []
                for series in sweep.series:
                    cell = sweep.cells.get((spec.id, level, series))
                    heat = None
                    if cell is not None and cell.comparison.ratio:
                        heat = min(abs(math.log2(cell.comparison.ratio)), 1.0)
                    cells.append((cell, heat))
                rows.append((level, cells))
            tables.append((spec.id, rows))
        return self._render(
            "sweep_table.html",
            report=report,
            tables=tables,
            series=[self._series_label(sweep.series_values[s]) for s in sweep.series],
            labels=self._labels(report),
        )

    def sweep_chart(self, metric: str = "gen_tps") -> Markup:
        """Per input, one line per series against draft length: ``gen_tps`` (every trial and
        the medians), ``ratio`` (median ratio with its bootstrap interval) or ``acceptance``
        (every trial's rate and the pooled rate)."""
        if metric not in ("gen_tps", "ratio", "acceptance"):
            raise jinja2.TemplateRuntimeError(
                f"sweep_chart('{metric}'): one of gen_tps, ratio, acceptance"
            )
        report = self._require_report()
        sweep = self._require_sweep()
        trials = report.usable_speed_trials
        summary = {(r["condition_id"], r["input_id"]): r for r in report.summary_records}
        by_treatment = {(c.treatment, c.input_id): c for c in report.comparisons}
        titles = {
            "gen_tps": self.catalog.t("metric.gen_tps"),
            "ratio": self.catalog.t("sweep.ratio_axis"),
            "acceptance": self.catalog.t("sweep.acceptance_axis"),
        }
        charts = []
        for spec in report.plan.inputs:
            lines = []
            for series in sweep.series:
                members = sorted(
                    (c for c in report.plan.conditions if sweep.condition_series[c.id] == series),
                    key=lambda c: c.speculative.draft_max or 0,
                )
                if metric != "gen_tps":
                    members = [c for c in members if c.speculative.mode != "off"]
                line = {"name": self._series_label(sweep.series_values[series]), "x": [], "y": []}
                points = {"x": [], "y": [], "text": [], "outlier": []}
                error = []
                for condition in members:
                    x = condition.speculative.draft_max or 0
                    row = summary.get((condition.id, spec.id))
                    if metric == "ratio":
                        comparison = by_treatment.get((condition.id, spec.id))
                        if comparison is None or comparison.ratio is None:
                            continue
                        line["x"].append(x)
                        line["y"].append(round(comparison.ratio, 4))
                        error.append(comparison.ratio_interval)
                        continue
                    if row is None:
                        continue
                    value = row["gen_tps_median"] if metric == "gen_tps" else row["acceptance"]
                    if value is not None:
                        line["x"].append(x)
                        line["y"].append(round(value, 4))
                    mine = trials[
                        (trials["condition_id"] == condition.id) & (trials["input_id"] == spec.id)
                    ]
                    if metric == "acceptance":
                        mine = mine[mine["acceptance"].notna()]
                    values = mine[metric if metric == "acceptance" else "gen_tps"]
                    points["x"] += [x] * len(mine)
                    points["y"] += [None if pd.isna(v) else round(float(v), 4) for v in values]
                    points["text"] += mine["trial_id"].tolist()
                    points["outlier"] += [bool(o) for o in mine["outlier"]]
                if metric != "ratio":
                    line["trials"] = points
                else:
                    line["error"] = error
                if line["x"] or points["x"]:
                    lines.append(line)
            figure = sweep_chart(
                lines,
                axis_title(self.catalog, metric),
                self.catalog,
                reference=1.0 if metric == "ratio" else None,
            )
            charts.append(
                (spec.id, f"{report.slug}-sweep-{metric}-{spec.id}", Markup(script_json(figure)))
            )
        return self._render("sweep_chart.html", charts=charts, metric=metric, title=titles[metric])

    def pareto_chart(self) -> Markup:
        """Per input: per-user generation rate against aggregate rate, one line per
        configuration through its concurrency levels, the Pareto front dashed, and the
        numbers behind it."""
        report = self._require_report()
        sweep = self._require_sweep()
        points = report.pareto
        conditions = {c.id: c for c in report.plan.conditions}
        others = [f for f in sweep.series_factors if f != "concurrency"]
        charts = []
        for spec in report.plan.inputs:
            mine = points[points["input_id"] == spec.id].sort_values("concurrency")
            groups: dict[str, dict] = {}
            for row in mine.itertuples():
                values = factor_values(report.plan, conditions[row.condition_id])
                name = " · ".join(
                    [sweep.condition_level[row.condition_id]]
                    + ([self._series_label({k: values[k] for k in others})] if others else [])
                )
                line = groups.setdefault(name, {"name": name, "x": [], "y": [], "text": []})
                line["x"].append(round(row.aggregate_tps, 3))
                line["y"].append(round(row.per_user_tps, 3))
                line["text"].append(f"×{row.concurrency}")
            front = mine[mine["front"]].sort_values("aggregate_tps")
            figure = pareto_chart(
                list(groups.values()),
                {
                    "x": [round(v, 3) for v in front["aggregate_tps"]],
                    "y": [round(v, 3) for v in front["per_user_tps"]],
                },
                self.catalog,
            )
            charts.append(
                (
                    spec.id,
                    f"{report.slug}-pareto-{spec.id}",
                    Markup(script_json(figure)),
                    mine.to_dict("records"),
                )
            )
        return self._render("pareto_chart.html", charts=charts, labels=self._labels(report))

    def telemetry_table(self) -> Markup:
        """Per condition and device, beside the generation rate: GPU utilization, memory
        bandwidth, power, clock, temperature and memory (NVML), or the engine process's CPU
        time on CPU runs; energy (or CPU time) per generated token, labelled derived."""
        report = self._require_report()
        return self._render(
            "telemetry_table.html",
            report=report,
            rows=report.telemetry.to_dict("records"),
            rates=report.condition_rates,
            labels=self._labels(report),
        )

    def speed_table(self) -> Markup:
        report = self._require_report()
        return self._render(
            "speed_table.html",
            report=report,
            rows=report.summary_records,
            labels=self._labels(report),
        )

    def memory_table(self) -> Markup:
        """Peak memory per condition and device (GPU via NVML, CPU engines: process RSS)."""
        report = self._require_report()
        rows = report.memory.to_dict("records")
        measured_conditions = report.usable_speed_trials["condition_id"].unique()
        return self._render(
            "memory_table.html",
            report=report,
            rows=rows,
            memory_limit=report.plan.speculation_health.max_device_memory_mib,
            gaps=memory_gaps(
                report.plan, {row["condition_id"] for row in rows}, measured_conditions
            ),
            labels=self._labels(report),
        )

    def latency_table(self) -> Markup:
        """Per condition × input medians of the latency breakdown: prefill (the engine's
        own figure), first token, first text, first answer, natural finish, and thinking
        vs answer tokens where the engine separates them."""
        report = self._require_report()
        return self._render(
            "latency_table.html",
            report=report,
            rows=report.summary_records,
            labels=self._labels(report),
            prefill_source=engine_prefill_source(report.plan.engine),
        )

    def latency_percentiles(self, metric: str = "ttft_s") -> Markup:
        """Per condition × input × latency metric: n, mean, P50, P90, P95 and P99 (the
        observed maximum in place of a percentile that has too few values, C-TAIL), and
        the empirical CDF of ``metric`` per condition and input."""
        report = self._require_report()
        if metric not in LATENCY_METRICS:
            raise jinja2.TemplateRuntimeError(
                f"latency_percentiles({metric!r}): one of {', '.join(LATENCY_METRICS)}"
            )
        trials = report.usable_speed_trials
        series = [
            (
                f"{self._labels(report)[condition_id]} · {input_id}",
                *cdf_points(group[metric].astype(float).to_numpy()),
            )
            for (condition_id, input_id), group in trials.groupby(
                ["condition_id", "input_id"], sort=False
            )
            if metric in group
        ]
        series = [s for s in series if s[1]]
        spec = cdf_chart(series, self.catalog.t(f"metric.{metric}"), self.catalog)
        return self._render(
            "latency_percentiles.html",
            report=report,
            # A percentile without enough values is missing (NaN in the table): None here.
            rows=records_of(report.latency),
            percentiles=PERCENTILES,
            minimum=MIN_VALUES,
            metric=metric,
            spec=Markup(script_json(spec)) if series else None,
        )

    def load_results(self) -> Markup:
        """Open-loop request-rate load (plans with ``load.profile`` ``constant`` or
        ``poisson``): achieved throughput (requests/s, output tokens/s), goodput and
        latency (median and P95 of TTFT and end-to-end) against the offered rate, each
        condition and input's saturation point marked, and the table of every figure;
        with the definitions (C-LOAD). A campaign without load runs says so."""
        report = self._require_report()
        table = report.load
        rows = records_of(table)
        plan = report.plan
        charts: list[tuple[str, Markup, str]] = []
        if rows:
            charts = [
                (name, Markup(script_json(spec)), caption)
                for name, spec, caption in self._load_charts(report, rows)
            ]
        return self._render(
            "load.html",
            report=report,
            rows=rows,
            charts=charts,
            load=plan.load if plan.load is not None and plan.load.open_loop else None,
            slo=plan.slo,
            slo_key=slo_key(plan.slo),
            targets=self._slo_targets(report),
            saturation=report.saturation,
            shortfall=SATURATION_SHORTFALL * 100,
            factor=SATURATION_LATENCY_FACTOR,
            minimum=MIN_VALUES,
        )

    def _slo_targets(self, report: Report) -> str:
        """The declared targets as a reader reads them (``TTFT ≤ 1.00 s, …``)."""
        slo = report.plan.slo
        if slo is None:
            return ""
        separator = "、" if self.catalog.lang == "ja" else ", "
        declared = [
            ("ttft", slo.ttft_p95_s, seconds),
            ("itl", slo.itl_p99_ms, milliseconds),
            ("e2e", slo.e2e_p95_s, seconds),
        ]
        return separator.join(
            self.catalog.t(f"load.target.{name}", value=shown(value))
            for name, value, shown in declared
            if value is not None
        )

    def _load_charts(self, report: Report, rows: list[dict]) -> list[tuple[str, dict, str]]:
        """The load section's charts: completed requests/s (with goodput), output tokens/s
        and latency, against the offered rate."""
        t = self.catalog.t
        series: dict[tuple[str, str], list[dict]] = {}
        for row in rows:
            series.setdefault((row["condition_id"], row["input_id"]), []).append(row)
        throughput: list[dict] = []
        tokens: list[dict] = []
        latency: list[dict] = []
        marks: dict[str, list[dict]] = {"throughput": [], "tokens": [], "latency": []}
        for index, ((condition_id, input_id), mine) in enumerate(series.items()):
            color = PALETTE[index % len(PALETTE)]
            name = f"{self._labels(report)[condition_id]} · {input_id}"
            x = [row["offered_rate"] for row in mine]

            def line(
                column: str, label: str, dash: str = "solid", rows=mine, x=x, name=name, color=color
            ) -> dict:
                return {
                    "name": f"{name} · {label}",
                    "x": x,
                    "y": [row[column] for row in rows],
                    "dash": dash,
                    "color": color,
                }

            throughput.append(line("throughput_rps", t("chart.load_achieved")))
            if report.plan.slo is not None:
                throughput.append(line("goodput_rps", t("chart.load_goodput"), "dot"))
            tokens.append(line("output_tps", t("chart.load_achieved")))
            latency.append(line("ttft_median_s", t("chart.load_ttft_median")))
            latency.append(line("e2e_median_s", t("chart.load_e2e_median"), "dash"))
            if any(row["e2e_p95_s"] is not None for row in mine):
                latency.append(line("ttft_p95_s", t("chart.load_ttft_p95"), "dot"))
                latency.append(line("e2e_p95_s", t("chart.load_e2e_p95"), "dashdot"))
            for row in mine:
                if row["saturation_point"]:
                    for kind, column in (
                        ("throughput", "throughput_rps"),
                        ("tokens", "output_tps"),
                        ("latency", "e2e_median_s"),
                    ):
                        if row[column] is not None:
                            marks[kind].append(
                                {"name": name, "x": row["offered_rate"], "y": row[column]}
                            )
        rates = sorted({row["offered_rate"] for row in rows})
        return [
            (
                "throughput",
                load_chart(
                    throughput,
                    t("chart.load_throughput"),
                    self.catalog,
                    marks["throughput"],
                    diagonal=rates,
                ),
                t("chart.load_throughput_caption"),
            ),
            (
                "tokens",
                load_chart(tokens, t("chart.load_output_tps"), self.catalog, marks["tokens"]),
                t("chart.load_tokens_caption"),
            ),
            (
                "latency",
                load_chart(latency, t("chart.load_latency"), self.catalog, marks["latency"]),
                t("chart.load_latency_caption"),
            ),
        ]

    def system_table(self) -> Markup:
        """Per condition: devices, driver, runtime, interconnect, CPU, engine, model files
        with every shard's SHA-256, flags, environment, sampling and template arguments,
        from the usable records' provenance (values that differ are all listed)."""
        report = self._require_report()
        return self._render(
            "system_table.html",
            report=report,
            conditions=report.system,
            labels=self._labels(report),
        )

    def excluded(self) -> Markup:
        return self._render("excluded.html", report=self._require_report())

    def conditions_table(self) -> Markup:
        return self._render("conditions.html", report=self._require_report())

    def provenance(self) -> Markup:
        report = self._require_report()
        first = report.campaign.table.provenance(0) if len(report.campaign) else None
        return self._render("provenance.html", report=report, provenance=first)

    def downloads(self) -> Markup:
        return self._render(
            "downloads.html", report=self._require_report(), files=self.download_files
        )

    def answers(self) -> Markup:
        """Every answer's full text, one page of ``ANSWERS_PAGE_SIZE`` loaded on demand: a
        pager of fixed size (first, previous, a page number, next, last), with a button per
        page only up to ``ANSWER_PAGES_LISTED`` pages (400,000 answers are 8,000 pages)."""
        report = self._require_report()
        count = len(report.campaign)
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
            listed_pages=ANSWER_PAGES_LISTED,
        )

    def has_speed(self) -> bool:
        """Whether the report has speed inputs (content can branch on it)."""
        return bool(self._require_report().plan.inputs)

    def report_has_load(self) -> bool:
        """Whether the report has open-loop load runs (content can branch on it)."""
        return not self._require_report().load.empty

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

    def see_also(self, *pages: str) -> Markup:
        """Links to those of ``pages`` (``speed``, ``quality``, ``data`` …) that this
        report has: a page never sends readers to a page the report does not have."""
        report = self._require_report()
        unknown = [page for page in pages if f"page.{page}" not in self.catalog.strings]
        if unknown:
            raise jinja2.TemplateRuntimeError(f"see_also: unknown page(s) {unknown}")
        return self._render(
            "see_also.html",
            report=report,
            pages=[page for page in pages if page in self.report_pages],
        )

    def kpi_cards(self) -> Markup:
        """The summary at a glance: the headline speed-up with its interval, the generation
        rate off → on, TTFT P50/P95, acceptance, the quality verdict and the truncations,
        each a card that carries its caveats and links to its detail; a baseline-only
        campaign gets the cards of what it measured."""
        report = self._require_report()
        figures = report.key_figures
        if figures is None:
            return Markup("")
        quality = report.quality
        return self._render(
            "kpi_cards.html",
            report=report,
            figures=figures,
            minimum=MIN_VALUES,
            min_ratio_trials=MIN_RATIO_TRIALS,
            quality=quality,
            outcomes=quality.outcomes.set_index("factor").to_dict("index")
            if quality is not None
            else None,
            overview=report.condition_overview,
        )

    def signing(self) -> Markup:
        """Who signed the data: the project's key and when this campaign's manifest was
        signed, with the fingerprint for customers to pin and the ``sitegen audit``
        command that checks the report against it; or that the project declares no key."""
        report = self._require_report()
        if report.signing_key is None:
            unsigned = self.catalog.t("signing.unsigned")
            return self._render("signing.html", text=unsigned, fingerprint=None)
        text = self.catalog.t(
            "signing.signed",
            fingerprint=report.signing_key,
            signed_at=report.signed_at or "-",
        )
        return self._render("signing.html", text=text, fingerprint=report.signing_key)

    def left_out(self) -> Markup:
        """The campaigns of this report's plan that the version does not publish, each with
        its id, why and the author's reason, or that there are none (C-UNPUBLISHED; the
        changelog lists those of every plan)."""
        return self._render("left_out.html", entries=self._require_report().left_out)

    def glossary(self) -> Markup:
        """The terms the cards explain on hover, defined (method page)."""
        return self._render(
            "glossary.html", terms=GLOSSARY_TERMS, min_ratio_trials=MIN_RATIO_TRIALS
        )

    def beside_headline(self) -> Markup:
        """Per condition, beside the headline: concurrency, length-capped and
        answer-not-reached counts of its measured trials, peak memory, and the memory limit
        the plan declares (``speculation_health.max_device_memory_mib``)."""
        report = self._require_report()
        return self._render(
            "beside_headline.html",
            rows=report.condition_overview,
            labels=self._labels(report),
            memory_limit=report.plan.speculation_health.max_device_memory_mib,
        )

    def prefill_source(self) -> Markup:
        """The engine's own figure behind prompt-processing time (llama.cpp
        ``timings.prompt_ms``, ExLlamaV3 ``time_prefill``), or that it reports none."""
        engine = self._require_report().plan.engine
        return self._render(
            "prefill_source.html", engine=engine, source=engine_prefill_source(engine)
        )

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
            labels=self._labels(report),
            draw=report.plan.examples,
            annotations=annotations,
        )

    def thresholds(self) -> Markup:
        """Threshold claims as observed in k of n trials (C-THRESHOLD)."""
        report = self._require_report()
        return self._render(
            "thresholds.html",
            report=report,
            rows=report.thresholds,
            labels=self._labels(report),
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
            labels=self._labels(report),
        )

    def quality_post_hoc(self) -> Markup:
        """Post-hoc analyses beside (never instead of) the primary result (C-POSTHOC)."""
        self._require_quality()
        return self._render("post_hoc.html", results=self._require_report().post_hoc)

    def caveat_rules(self) -> Markup:
        """The rule list, as enforced by the build (method page)."""
        scopes = {
            rule.id: list(
                dict.fromkeys(c.scope for c in registered_checks() if c.rule_id == rule.id)
            )
            for rule in load_rules()
        }
        return self._render(
            "caveat_rules.html",
            rules=load_rules(),
            scopes=scopes,
            claim_labels={k for k in self.catalog.strings if k.startswith("rules.claim.")},
            sep="、" if self.catalog.lang == "ja" else ", ",
        )

    def data_dictionary(self) -> Markup:
        """Every field of the trial record with its documentation (from the model)."""
        return self._render(
            "data_dictionary.html",
            rows=field_dictionary(TrialRecord),
            schemas=[f"{name}.schema.json" for name in SCHEMA_MODELS],
        )
