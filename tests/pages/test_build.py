"""The build: validation errors name file, record and field; a failed build leaves
the previous site untouched; model output is escaped."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest

from sitegen.commands.build import build_site
from sitegen.core.errors import DataError
from sitegen.records.redact import Redactor, RedactPolicy
from tests.builtsites import published_file, published_folder, published_objects, search_entries
from tests.sitefixtures import publishable_campaign, report_address

PROJECT = Path(__file__).resolve().parents[2]
HOSTILE = "</script><script>alert(1)</script><img src=x onerror=alert(2)> [x](javascript:alert(3))\n\n# not a heading"


def _publishable_campaign(data_dir: Path) -> Path:
    """The unit campaign relabelled as a real engine's, one answer replaced by HOSTILE."""

    def hostile_answer(record: dict) -> None:
        if record["trial_id"] == "off/short/r0":
            record["text"] = HOSTILE

    return publishable_campaign(data_dir, mutate=hostile_answer)


def _tree_digest(site: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(site.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(site)).encode() + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("build")
    records_path = _publishable_campaign(root / "data")
    build_site(root / "data", root / "site", PROJECT, version="test")
    return root, records_path


def test_site_pages_in_both_languages_with_downloads(built):
    root, records_path = built
    slug = report_address(records_path.parent)
    site = root / "site" / "v" / "test"
    for page in ("", "speed/", "data/"):
        assert (site / "reports" / slug / page / "index.html").is_file()
        assert (site / "en" / "reports" / slug / page / "index.html").is_file()
    downloads = published_folder(site, f"reports/{slug}/downloads")
    sums = downloads["SHA256SUMS"].read_text().splitlines()
    # records, plan, manifest; trials, summary, latency, memory, telemetry, system × 2
    assert len(sums) == 15
    for line in sums:
        digest, name = line.split("  ")
        assert hashlib.sha256(downloads[name].read_bytes()).hexdigest() == digest
    # The records as measured and redacted: the same records, the host as a label; the
    # manifest states them as published, tied to the measured campaign's manifest (the
    # build left the raw files as they were).
    manifest = json.loads(downloads["manifest.json"].read_text())
    unpacked = gzip.decompress(downloads["records.jsonl.gz"].read_bytes())
    assert hashlib.sha256(unpacked).hexdigest() == manifest["records_sha256"]
    plan_digest = hashlib.sha256(downloads["plan.json"].read_bytes()).hexdigest()
    assert manifest["plan_sha256"] == plan_digest
    measured = records_path.parent / "manifest.json"
    assert manifest["measured_manifest_sha256"] == hashlib.sha256(measured.read_bytes()).hexdigest()
    raw = [json.loads(line) for line in records_path.read_text().splitlines()]
    unpacked = gzip.decompress(downloads["records.jsonl.gz"].read_bytes()).decode()
    published = [json.loads(line) for line in unpacked.splitlines()]
    assert [r["trial_id"] for r in published] == [r["trial_id"] for r in raw]
    assert [r["text"] for r in published] == [r["text"] for r in raw]
    assert {r["provenance"]["host"]["hostname"] for r in published} == {
        Redactor(RedactPolicy()).host(raw[0]["provenance"]["host"]["hostname"])
    }
    en_data = (site / "en" / "reports" / slug / "data" / "index.html").read_text(encoding="utf-8")
    records_object = published_objects(site)[f"reports/{slug}/downloads/records.jsonl.gz"]
    assert f'href="../../../../../../{records_object}"' in en_data
    assert (
        root / "site" / "assets" / "js" / "plotly-basic-4.1.1.min.js"
    ).stat().st_size > 1_000_000
    speed = (site / "reports" / slug / "speed" / "index.html").read_text(encoding="utf-8")
    assert 'class="sg-chart-spec"' in speed and "生成速度" in speed


def test_search_indexes_prose_but_not_every_trials_numbers(built):
    """The search index holds the chart's caption but not its table of every trial
    (mkdocs_hooks puts it back after indexing); the page shows the table as before."""
    root, records_path = built
    slug = report_address(records_path.parent)
    site = root / "site" / "v" / "test"
    entries = search_entries(site)
    speed = [e for e in entries if e["location"].startswith(f"reports/{slug}/speed/")]
    texts = " ".join(e["text"] for e in speed)
    assert "点は各試行" in texts  # the chart's caption
    assert "off/short/r0" not in texts  # a trial of the chart's table
    page = (site / "reports" / slug / "speed" / "index.html").read_text(encoding="utf-8")
    assert '<details class="sg-numbers">' in page and "off/short/r0" in page
    assert "sitegen-" not in page  # no mark of the hooks is left


def test_model_output_is_escaped_text(built):
    root, records_path = built
    report = root / "site" / "v" / "test" / "reports" / report_address(records_path.parent)
    data_page = (report / "data" / "index.html").read_text(encoding="utf-8")
    assert "alert(" not in data_page  # texts are not in the page: they load as JSON data
    version = root / "site" / "v" / "test"
    shard_path = f"reports/{report_address(records_path.parent)}/answers/0.json"
    shard = published_file(version, shard_path).read_text(encoding="utf-8")
    assert "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)" in shard
    assert "</script>" not in shard and "<img" not in shard
    answer = next(a for a in json.loads(shard) if a["trial_id"] == "off/short/r0")
    assert answer["text"] == HOSTILE  # the data itself is unchanged
    examples = (report / "examples" / "index.html").read_text(encoding="utf-8")
    assert "<script>alert" not in examples and 'href="javascript:' not in examples


def test_no_alternate_links_for_material_to_fetch_sitemaps_beside(built):
    """mkdocs-material fetches ``<href>/sitemap.xml`` for every ``<link rel=alternate>``;
    i18n's are per page, so each one was a 404. The language selector stays."""
    root, records_path = built
    site = root / "site" / "v" / "test"
    pages = sorted(site.rglob("index.html"))
    assert len(pages) >= 10
    for path in pages:
        head, _, body = path.read_text(encoding="utf-8").partition("</head>")
        assert not re.search(r"<link[^>]*rel=\"alternate\"[^>]*hreflang", head), path
        assert 'class="md-select__link"' in body, path
    speed = site / "en" / "reports" / report_address(records_path.parent) / "speed" / "index.html"
    table = speed.read_text(encoding="utf-8")
    assert '<div class="sg-wide" role="region" aria-labelledby="sg-speed-table"' in table
    assert '<caption id="sg-speed-table">' in table


def _corrupt_and_build(root: Path, records_path: Path, mutate) -> DataError:
    lines = records_path.read_text(encoding="utf-8").splitlines()
    original = "\n".join(lines) + "\n"
    record = json.loads(lines[3])
    mutate(record)
    lines[3] = json.dumps(record)
    records_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = _tree_digest(root / "site")
    try:
        with pytest.raises(DataError) as caught:
            build_site(root / "data", root / "site", PROJECT, version="test")
    finally:
        records_path.write_text(original, encoding="utf-8")
    assert _tree_digest(root / "site") == before, "a failed build changed the previous site"
    return caught.value


def test_bad_field_names_file_record_and_field(built):
    root, records_path = built

    def mutate(record):
        record["metrics"]["gen_tps"] = "fast"
        record["surprise"] = 1

    error = _corrupt_and_build(root, records_path, mutate)
    message = str(error)
    assert f"{records_path}:4 (trial off/short/r2) → metrics.gen_tps" in message
    assert "surprise: Extra inputs are not permitted" in message


def test_unknown_schema_version_and_fake_engine_are_refused(built):
    root, records_path = built

    def mutate(record):
        record["schema_version"] = 99

    assert "unknown record schema_version 99" in str(_corrupt_and_build(root, records_path, mutate))

    def fake(record):
        record["provenance"]["engine"]["id"] = "fake"

    assert "can never be published" in str(_corrupt_and_build(root, records_path, fake))


def test_duplicate_trial_is_refused(built):
    root, records_path = built

    def mutate(record):
        record["trial_id"] = "off/short/r0"

    assert "duplicate of line 2" in str(_corrupt_and_build(root, records_path, mutate))


def test_compiled_theme_templates_are_kept_and_a_warm_build_is_the_same(
    tmp_path, monkeypatch, request
):
    import jinja2

    from sitegen.pages import template_cache
    from sitegen.pages.directives import common as directives

    # The partials' environment is made once per process: made anew here (as in a new
    # process), and again by whoever needs it after this test, with the real cache.
    directives.html_environment.cache_clear()
    request.addfinalizer(directives.html_environment.cache_clear)
    cache_dir = tmp_path / "compiled"
    cache_dir.mkdir()
    cache = jinja2.FileSystemBytecodeCache(str(cache_dir))
    monkeypatch.setattr(template_cache, "bytecode_cache", lambda: cache)
    monkeypatch.setattr(directives, "bytecode_cache", lambda: cache)
    _publishable_campaign(tmp_path / "data")
    build_site(tmp_path / "data", tmp_path / "cold", PROJECT, version="test")
    compiled = sorted(p.name for p in cache_dir.iterdir())
    # mkdocs' theme (through the hook) and sitegen's partials, both compiled once here.
    material = Path(jinja2.__file__).parents[1] / "material" / "templates" / "base.html"
    assert cache.pattern % cache.get_cache_key("base.html", str(material)) in compiled
    partial = directives.__file__.replace("pages/directives/common.py", "defaults/theme/partials")
    key = cache.get_cache_key("speed_table.html", f"{partial}/speed_table.html")
    assert cache.pattern % key in compiled
    build_site(tmp_path / "data", tmp_path / "warm", PROJECT, version="test")
    assert _tree_digest(tmp_path / "warm" / "v") == _tree_digest(tmp_path / "cold" / "v")


def test_html_between_headings_never_reaches_markdown():
    """mkdocs_hooks hands Python-Markdown only the heading lines: model text in the HTML
    between them (Markdown syntax, U+2028 that another plugin would split lines on) comes
    back unchanged, as text, never as a link or heading."""
    from types import SimpleNamespace

    from sitegen.pages import mkdocs_hooks

    html = (
        '<pre class="sg-text">[md](javascript:alert(1))\u2028\u2028# not a heading</pre>\n'
        "<p>[x](javascript:alert(2))</p>"
    )
    page = SimpleNamespace(
        file=SimpleNamespace(src_uri="hooks-test.md"), content="", title="Title", meta={}
    )
    markdown = mkdocs_hooks.on_page_markdown(f"# Title\n\n{html}\n\n## Part", page, None, None)
    assert "javascript" not in markdown and "not a heading" not in markdown
    assert markdown.startswith("# Title\n\n") and markdown.endswith("\n\n## Part")
    mark = markdown.split("\n\n")[1]
    assert mkdocs_hooks.on_page_content(f"<h1>Title</h1>\n{mark}", page, None, None) == (
        f"<h1>Title</h1>\n{html}"
    )
    page.content = "<p>x</p>"
    mkdocs_hooks.on_page_context({}, page, None, None)  # nothing set aside: nothing left
    assert page.content == "<p>x</p>"
