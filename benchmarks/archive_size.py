"""Space the archive takes: N versions of unchanged data, and versions that each add a
campaign.

Two measures of a site (the release ``site`` points to):

- disk: what the local disk holds, ``du``-style (allocated blocks, each hard-linked
  file counted once);
- host: the sum of the sizes of every path, what a static host (S3, GitHub Pages) stores
  and uploads, which knows no hard links.

Unchanged data: the ×1 seed-scale data (``build_time.py``'s campaign, 4,002 records; give
it with ``--data``, else it is measured here first) published as v1 … vN. The records are
read, validated, computed and rendered into docs once (``render_site``), and each version
is then published as ``sitegen build --version vK`` publishes it: mkdocs renders it, its
files move to objects, the archive is verified and a release switched in. Added
campaigns: v1 of the ×1 data, then ten versions that each add one small campaign
(``added-<k>``: 2 conditions × 4 inputs × 10 repetitions on the synthetic engine, rendered
for real), each version's growth beside the size of the new campaign's files.

Target: 100 versions of unchanged data take at most 1.2× the disk of one version.

Run: ``.venv/bin/python benchmarks/archive_size.py [--data DIR] [--versions 1 10 100]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from build_time import SYNTHETIC_ENGINE, register_synthetic_engine, seed_scale_plan, synthesize

import sitegen.commands.build
from sitegen.commands.build import build_site, render_site
from sitegen.core.signing import load_signer
from sitegen.measure import run_campaign

PROJECT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 1.2


def site_sizes(site: Path) -> tuple[int, int]:
    """(disk bytes: blocks of each inode once, host bytes: every path's size)."""
    seen: set[tuple[int, int]] = set()
    disk = host = 0
    for path in site.resolve().rglob("*"):
        status = path.lstat()
        if not path.is_file() or path.is_symlink():
            continue
        host += status.st_size
        if (status.st_dev, status.st_ino) not in seen:
            seen.add((status.st_dev, status.st_ino))
            disk += status.st_blocks * 512
    return disk, host


def unchanged_versions(data: Path, work: Path, counts: list[int]) -> list[tuple[int, int, int]]:
    """(versions, disk, host) after publishing v1 … v<max(counts)> of ``data``."""
    site = work / "unchanged" / "site"
    rendered = render_site(data, PROJECT, (), load_signer(PROJECT))
    rows = []
    started = time.perf_counter()
    # Each build removes its rendering's scratch folder once published: this one is kept.
    kept = replace(
        rendered, scratch=SimpleNamespace(name=rendered.scratch.name, cleanup=lambda: None)
    )
    with mock.patch.object(sitegen.commands.build, "render_site", lambda *_args: kept):
        for number in range(1, max(counts) + 1):
            build_site(data, site, PROJECT, version=f"v{number}")
            if number in counts:
                disk, host = site_sizes(site)
                rows.append((number, disk, host))
                print(
                    f"  {number} version(s): disk {disk / 1e6:.1f} MB, host {host / 1e6:.1f} MB "
                    f"({time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
    return rows


def added_campaigns(
    data: Path, work: Path, count: int
) -> list[tuple[str, int, int, int, int, int]]:
    """(label, disk growth, host growth, the new campaign's data bytes, its report's
    published bytes, the growth of ``objects/``) per version."""
    data = shutil.copytree(data, work / "growing" / "data")
    site = work / "growing" / "site"
    build_site(data, site, PROJECT, version="v1")
    before = site_sizes(site)
    objects_before = site_sizes(site / "objects")[1]
    rows = []
    for number in range(1, count + 1):
        plan = seed_scale_plan(1).model_copy(
            update={"name": f"added-{number}", "engine": SYNTHETIC_ENGINE, "quality": None}
        )
        plan = plan.model_copy(update={"repetitions": 10})
        with mock.patch("os.fsync"):
            campaign_dir = run_campaign(plan, data).directory
        raw = sum(p.stat().st_size for p in campaign_dir.rglob("*") if p.is_file())
        label = f"v{number + 1}"
        build_site(data, site, PROJECT, version=label)
        after = site_sizes(site)
        version = site.resolve() / "v" / label
        report = report_bytes(version, f"reports/added-{number}/")
        objects_after = site_sizes(site / "objects")[1]
        growth = (after[0] - before[0], after[1] - before[1])
        rows.append((label, *growth, raw, report, objects_after - objects_before))
        before, objects_before = after, objects_after
    return rows


def report_bytes(version: Path, prefix: str) -> int:
    """Bytes of a report's published files (pages and the objects they name)."""
    moved = json.loads((version / "objects.json").read_text())
    sizes = [
        (version.parents[1] / obj).stat().st_size
        for p, obj in moved.items()
        if p.startswith(prefix)
    ]
    sizes += [p.stat().st_size for p in (version / prefix).rglob("*") if p.is_file()]
    return sum(sizes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="a ×1 data directory (copied, not changed)")
    parser.add_argument("--versions", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--added", type=int, default=10, help="versions that add a campaign")
    args = parser.parse_args()
    register_synthetic_engine()
    work = Path(tempfile.mkdtemp(prefix="sitegen-archive-size-"))
    print(f"{os.cpu_count()} CPUs; work directory {work}", flush=True)
    try:
        data = work / "data"
        if args.data:
            shutil.copytree(args.data, data)
        else:
            synthesize(data, 1)
        print("unchanged data, one rendering published as v1 … vN:", flush=True)
        rows = unchanged_versions(data, work, sorted(set(args.versions)))
        one_disk, one_host = rows[0][1], rows[0][2]
        for number, disk, host in rows:
            print(
                f"{number:>4} version(s): disk {disk / 1e6:6.1f} MB = {disk / one_disk:.2f}× "
                f"one version; host {host / 1e6:7.1f} MB = {host / one_host:.2f}×"
            )
        print(f"added campaigns ({args.added} versions, each rendered):", flush=True)
        growth = added_campaigns(data, work, args.added)
        for label, disk, host, raw, report, objects in growth:
            print(
                f"{label:>4}: disk +{disk / 1e3:6.0f} kB, host +{host / 1e3:6.0f} kB (new "
                f"objects {objects / 1e3:4.0f} kB, the rest the version's pages and search "
                f"index); the campaign's data {raw / 1e3:5.0f} kB (disk growth "
                f"{disk / raw:.2f}×), its report's pages and objects {report / 1e3:5.0f} kB"
            )
        largest = rows[-1]
        ratio = largest[1] / one_disk
        verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
        print(f"target: {largest[0]} versions ≤ {TARGET_RATIO}× one version's disk: {verdict}")
        return 0 if ratio <= TARGET_RATIO else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
