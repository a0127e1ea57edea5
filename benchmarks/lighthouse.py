"""Lighthouse's performance, accessibility and SEO scores for a report's summary and
speed pages (ja and en) of the browser tests' two-version site, served on 127.0.0.1 and
loaded by Debian's Chromium. A benchmark, not a test: scores drift with the machine.

Setup (once): ``(cd benchmarks/lighthouse && npm ci --ignore-scripts)`` (lighthouse pinned
by its package-lock.json) and ``bash scripts/install-chromium.sh``.

Run: ``.venv/bin/python benchmarks/lighthouse.py [--runs N] [--keep DIR]`` (the median of
N runs per page, 1 by default, of the scores and of total blocking time, first and largest
contentful paint and cumulative layout shift; ``--keep`` writes each run's Lighthouse JSON
there, for its bootup-time and long-tasks audits). Lighthouse throttles like a mid-range
phone on a slow 4G network unless ``--desktop``. The project's ``mkdocs.yml`` gets
``indexing: allow``, as a published site's would (with ``site_url``): without it the pages
are ``noindex`` and SEO's "is-crawlable" audit fails by design.

Measured (2 shared cores, mobile, median of 3, 2026-12), plotly.js as a blocking <script>
→ loaded by charts.js once a chart comes near the window → the speed page opening with its
table, its charts below the first screen: performance ja summary 69 → 98 → 97, ja speed
65 → 65 → 97, en summary 68 → 98 → 98, en speed 63 → 64 → 96; total blocking time of the
speed pages 3.4–3.6 s → 50–98 ms; accessibility 100; SEO 100 with indexing allowed (63
while the pages said ``noindex``); LCP 2.0–2.4 s, CLS 0.00 throughout. plotly.js
evaluating (one long task) and the first chart drawing were nearly all of the blocking
time while a chart stood in the first screen.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = ROOT / "benchmarks" / "lighthouse" / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ("performance", "accessibility", "seo")
METRICS = {  # audit id: column, unit scale (ms → s where a second reads better)
    "total-blocking-time": ("TBT ms", 1),
    "first-contentful-paint": ("FCP s", 1000),
    "largest-contentful-paint": ("LCP s", 1000),
    "cumulative-layout-shift": ("CLS", 1),
}
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "browser")]


def scores(url: str, chromium: str, desktop: bool, keep: Path | None) -> dict[str, float]:
    """The categories' scores (0–100) and the metrics' values of one Lighthouse run; with
    ``keep``, its JSON report is written there too."""
    with tempfile.TemporaryDirectory(prefix="sitegen-lighthouse-") as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run(
            [str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={report}",
             f"--only-categories={','.join(CATEGORIES)}",
             "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
             *(["--preset=desktop"] if desktop else [])],
            check=True, env=dict(os.environ, CHROME_PATH=chromium, HOME=tmp), timeout=300,
        )  # fmt: skip
        result = json.loads(report.read_text(encoding="utf-8"))
        if keep is not None:
            keep.write_text(report.read_text(encoding="utf-8"), encoding="utf-8")
        audits = result["audits"]
        return {
            **{name: result["categories"][name]["score"] * 100 for name in CATEGORIES},
            **{c: audits[a]["numericValue"] / scale for a, (c, scale) in METRICS.items()},
        }


def indexed_project(folder: Path) -> Path:
    """The browser tests' project with ``indexing: allow`` in its ``mkdocs.yml``."""
    import yaml

    from tests.sitefixtures import PROJECT

    folder.mkdir()
    config = yaml.safe_load((PROJECT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["indexing"] = "allow"
    (folder / "mkdocs.yml").write_text(yaml.safe_dump(config, allow_unicode=True))
    for part in ("content", "theme"):
        (folder / part).symlink_to(PROJECT / part)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--desktop", action="store_true")
    parser.add_argument(
        "--keep", type=Path, help="a folder to write each run's Lighthouse JSON report in"
    )
    args = parser.parse_args()
    if not LIGHTHOUSE.exists():
        sys.exit(f"{LIGHTHOUSE} is missing: (cd benchmarks/lighthouse && npm ci --ignore-scripts)")
    from harness import find_chromium, serve_directory
    from test_every_page import _build, _pages

    with tempfile.TemporaryDirectory(prefix="sitegen-lighthouse-site-") as tmp:
        site = _build(Path(tmp), indexed_project(Path(tmp) / "project"))
        pages = _pages(site)
        summary = next(
            p
            for p in pages
            if p.endswith("/speed/") and "/reports/sweep/" not in p and "/en/" not in p
        )
        summary = summary.removesuffix("speed/")
        chosen = [
            (f"{lang} {what}", (summary if lang == "ja" else summary.replace("v2/", "v2/en/")) + tail)
            for lang in ("ja", "en")
            for what, tail in (("summary", ""), ("speed", "speed/"))
        ]  # fmt: skip
        chromium = find_chromium()
        columns = (*CATEGORIES, *(c for c, _ in METRICS.values()))
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
        with serve_directory(site) as base_url:
            print(f"{'page':<12} " + " ".join(f"{c:>13}" for c in columns), flush=True)
            for name, path in chosen:
                runs = [
                    scores(
                        base_url + path,
                        chromium,
                        args.desktop,
                        args.keep / f"{name.replace(' ', '-')}-{run}.json" if args.keep else None,
                    )
                    for run in range(args.runs)
                ]
                medians = {c: statistics.median(r[c] for r in runs) for c in columns}
                print(
                    f"{name:<12} "
                    + " ".join(
                        f"{medians[c]:>13.{2 if c in ('CLS', 'FCP s', 'LCP s') else 0}f}"
                        for c in columns
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    main()
