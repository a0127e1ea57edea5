"""Lighthouse's performance, accessibility and SEO scores for a report's summary and
speed pages (ja and en) of the browser tests' two-version site, served on 127.0.0.1 and
loaded by Debian's Chromium. A benchmark, not a test: scores drift with the machine.

Setup (once): ``(cd benchmarks/lighthouse && npm ci --ignore-scripts)`` (lighthouse pinned
by its package-lock.json) and ``bash scripts/install-chromium.sh``.

Run: ``.venv/bin/python benchmarks/lighthouse.py [--runs N]`` (the median of N runs per
page; 1 by default). Lighthouse throttles like a mid-range phone on a slow 4G network
unless ``--desktop``. The site has no ``site_url``, so its pages are ``noindex``: SEO's
"is-crawlable" audit fails by design and caps SEO at 60 (everything else passes).

Measured (2 cores, mobile, 2026-12): performance 67–70 (total blocking time ~2.7 s,
plotly.js), accessibility 100, SEO 60 (noindex only).
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
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "browser")]


def scores(url: str, chromium: str, desktop: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="sitegen-lighthouse-") as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run(
            [str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={report}",
             f"--only-categories={','.join(CATEGORIES)}",
             "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
             *(["--preset=desktop"] if desktop else [])],
            check=True, env=dict(os.environ, CHROME_PATH=chromium, HOME=tmp), timeout=300,
        )  # fmt: skip
        categories = json.loads(report.read_text(encoding="utf-8"))["categories"]
        return {name: categories[name]["score"] * 100 for name in CATEGORIES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--desktop", action="store_true")
    args = parser.parse_args()
    if not LIGHTHOUSE.exists():
        sys.exit(f"{LIGHTHOUSE} is missing: (cd benchmarks/lighthouse && npm ci --ignore-scripts)")
    from harness import find_chromium, serve_directory
    from test_every_page import _build, _pages

    with tempfile.TemporaryDirectory(prefix="sitegen-lighthouse-site-") as tmp:
        site = _build(Path(tmp))
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
        with serve_directory(site) as base_url:
            print(f"{'page':<12} " + " ".join(f"{c:>13}" for c in CATEGORIES))
            for name, path in chosen:
                runs = [scores(base_url + path, chromium, args.desktop) for _ in range(args.runs)]
                medians = {c: statistics.median(r[c] for r in runs) for c in CATEGORIES}
                print(f"{name:<12} " + " ".join(f"{medians[c]:>13.0f}" for c in CATEGORIES))


if __name__ == "__main__":
    main()
