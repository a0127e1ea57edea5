"""Publishable campaigns without a model, and corpora of hostile text.

The fake engine's records are relabelled as a real engine's (the build refuses the
fake engine), so site tests run in seconds and need no model file.

``HOSTILE_TEXTS`` is the small corpus of hostile model outputs the site tests have always
used. ``HOSTILE_PAYLOADS`` is the large one (see ``hostile_payloads``): every payload
carries a tag ``<field>.<payload>`` so that whatever fires or gets injected names the
field it came from, and ``write_hostile_campaign`` / ``hostile_site_data`` place it in
every text field a plan author, an annotator or a model can fill.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import string
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal
from unittest import mock

import yaml
from pydantic import ValidationError

from sitegen.core.project import packaged_content
from sitegen.measure import run_campaign
from sitegen.plan.items import suite_sha256
from sitegen.plan.plan_file import campaign_id, canonical_plan_json, plan_sha256
from sitegen.plan.plan_models import (
    ConditionSpec,
    DocumentSpec,
    InputSpec,
    Plan,
    QualitySpec,
    SamplingOverride,
    SpeculativeSpec,
)
from sitegen.records.annotations import ANNOTATIONS_FILE, Annotations
from sitegen.records.campaign import read_campaigns
from sitegen.records.layout import (
    CAMPAIGNS_DIR,
    MANIFEST_FILE,
    PLAN_FILE,
    RECORDS_FILE,
    REGISTRY_FILE,
    sha256_file,
)
from sitegen.records.record_models import ArtifactEntry, Manifest, TrialRecord
from sitegen.records.registrations import find_campaign
from sitegen.validation import validate_campaigns
from tests.conftest import make_plan

PROJECT = Path(__file__).resolve().parents[1]
PUBLISHED_ENGINE = "llamacpp-embedded"

HOSTILE_TEXTS: dict[str, str] = {
    "script": "<script>alert('script')</script>",
    "breakout": "</script><script>alert('breakout')</script><!--",
    "json_breakout": '"}]}</script><script>alert("json")</script>\u2028\u2029',
    "event_handlers": (
        '<img src=x onerror=alert("onerror")><svg onload=alert("onload")>'
        '<details open ontoggle=alert("ontoggle")><summary>x</summary></details>'
        "<body onload=alert('body')>"
    ),
    "attribute_breakout": "\" autofocus onfocus=alert('attr') x=\"' onmouseover=alert(1) '",
    "javascript_links": (
        "<a href=\"javascript:alert('link')\">click</a> [md](javascript:alert('md')) "
        "<javascript:alert('autolink')> [data](data:text/html,<script>alert(1)</script>)"
    ),
    "markdown": (
        "# not a heading\n\n* not a list\n\n```\nnot code\n```\n\n"
        '<div markdown="1">**not bold**</div>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n'
    ),
    "markdown_placeholder": "\x02wzxhzdk:0\x03 \x02klzzwxh:0\x03",
    "jinja": "{{ 7 * 7 }} {% raw %}{{ raw }}{% endraw %} {{ ''.__class__.__mro__ }} {# c #}",
    "long_line": "A" * 100_000,
    "bidi": "file\u202etxt.exe\u202c \u2066isolate\u2069 \u200fRTL mark",
    "control": "nul\x00bell\x07esc\x1b[31mred\x1b[0m vt\x0b ff\x0c del\x7f",
}
"""Model outputs that must stay inert text wherever the site shows them."""

HOSTILE_INPUT_TEXT = "\n".join(HOSTILE_TEXTS.values())
"""The plan's input text (prompts are untrusted too)."""


def sweep_condition(
    cid: str, spec: SpeculativeSpec, temperature: float = 0.0, users: int = 1
) -> ConditionSpec:
    """A fake-engine condition of a sweep: speculation, temperature and concurrency."""
    return ConditionSpec(
        id=cid,
        speculative=spec,
        context_capacity=512,
        sampling=SamplingOverride(temperature=temperature),
        concurrency=users,
    )


def sweep_plan(concurrency: bool = False, **overrides) -> Plan:
    """Draft length 2/4 × temperature 0/0.7 with matched baselines on the fake engine;
    ``concurrency`` adds off and ≤4 at temperature 0 with 2 and 4 users."""
    off = SpeculativeSpec()
    levels = [
        ("off", off),
        ("ng2", SpeculativeSpec(mode="ngram-simple", draft_max=2)),
        ("ng4", SpeculativeSpec(mode="ngram-simple", draft_max=4)),
    ]
    conditions = [
        sweep_condition(f"{name}-t{t:g}", spec, t) for t in (0.0, 0.7) for name, spec in levels
    ]
    if concurrency:
        conditions += [
            sweep_condition(f"{name}-t0-c{users}", spec, 0.0, users)
            for users in (2, 4)
            for name, spec in (levels[0], levels[2])
        ]
    fields = dict(
        name="sweep",
        title={"ja": "掃引の単体テスト", "en": "Sweep unit test"},
        conditions=conditions,
        inputs=[InputSpec(id="q", text="question", max_output_tokens=12)],
        repetitions=4,
    )
    return make_plan(**(fields | overrides))


def hostile_plan() -> Plan:
    """The unit plan plus an input whose text is the whole corpus; one condition fails on
    that input so the corpus also lands in ``failure_reason``."""
    plan = make_plan()
    inputs = [*plan.inputs, InputSpec(id="hostile", text=HOSTILE_INPUT_TEXT, max_output_tokens=16)]
    conditions = [
        ConditionSpec(id="off", context_capacity=512),
        ConditionSpec(
            id="on",
            speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
            context_capacity=512,
            engine_options={"fail_input": "nul\x00bell"},
        ),
    ]
    return make_plan(inputs=inputs, conditions=conditions)


def publishable_campaign(
    data_dir: Path,
    plan: Plan | None = None,
    hostile: bool = False,
    mutate: Callable[[dict], None] | None = None,
) -> Path:
    """Run ``plan`` (default: the unit plan; ``hostile``: the hostile plan) on the fake
    engine into ``data_dir`` and relabel its records as a real engine's (then ``mutate``
    each record, when given); returns the records file."""
    plan = plan or (hostile_plan() if hostile else make_plan())
    path = _fake_engine_campaign(plan, data_dir) / RECORDS_FILE
    records = read_records(path)
    corpus = list(HOSTILE_TEXTS.values())
    for index, record in enumerate(records):
        record["provenance"]["engine"]["id"] = PUBLISHED_ENGINE
        if hostile:
            record["text"] = corpus[index % len(corpus)]
            record["reasoning_text"] = corpus[(index + 1) % len(corpus)]
            if record["status"] == "failed":
                record["failure_reason"] = corpus[(index + 2) % len(corpus)]
        if mutate:
            mutate(record)
    write_records(path, records)
    return register_engine(path.parent, records[0]["provenance"]["engine"]["id"]) / RECORDS_FILE


_MEASURED = tempfile.TemporaryDirectory(prefix="sitegen-tests-measured-")
"""The fake engine's campaigns ``publishable_campaign`` ran in this test process, as
they were measured (removed when the process ends)."""
_MEASURED_BY_PLAN: dict[str, Path] = {}
"""Each of those campaigns by its plan (``canonical_plan_json``)."""


def _fake_engine_campaign(plan: Plan, data_dir: Path) -> Path:
    """``plan`` measured on the fake engine into ``data_dir``; returns the campaign's
    directory. A plan this process measured before is copied from that run, the same
    campaign byte for byte (measuring took a twentieth of the fast tests' time), except
    where ``data_dir`` holds the campaign already: that is resumed, as ``sitegen measure``
    would."""
    key = canonical_plan_json(plan)
    fresh = find_campaign(data_dir / CAMPAIGNS_DIR, plan) is None
    if key in _MEASURED_BY_PLAN and fresh:
        directory = data_dir / CAMPAIGNS_DIR / _MEASURED_BY_PLAN[key].name
        shutil.copytree(_MEASURED_BY_PLAN[key], directory)
        return directory
    # No fsync: it makes a record survive a power cut, which no test of a site needs (the
    # store's own tests keep it).
    with mock.patch("os.fsync"):
        directory = run_campaign(plan, data_dir).directory
    if fresh:
        measured = Path(_MEASURED.name) / str(len(_MEASURED_BY_PLAN)) / directory.name
        _MEASURED_BY_PLAN[key] = measured
        shutil.copytree(directory, measured)
    return directory


def register_engine(directory: Path, engine: str) -> Path:
    """The fake engine's campaign as if its plan had named ``engine``, the engine its
    records were relabelled as (C-ENGINE): plan.json, the directory's hash, the records'
    plan hash and the manifest follow, the registration time kept (test data only: a
    plan is never changed after measuring). Returns the campaign directory."""
    plan_data = json.loads((directory / PLAN_FILE).read_text(encoding="utf-8"))
    if plan_data["engine"] == engine:
        return directory
    plan = Plan.model_validate({**plan_data, "engine": engine})
    registered = directory.with_name(campaign_id(plan))
    directory.rename(registered)
    reregister(directory.name, registered, plan)
    (registered / PLAN_FILE).write_text(canonical_plan_json(plan), encoding="utf-8")
    records = read_records(registered / RECORDS_FILE)
    for record in records:
        record.update(campaign_id=campaign_id(plan), plan_sha256=plan_sha256(plan))
    manifest_path = registered / MANIFEST_FILE
    manifest = Manifest.model_validate_json(manifest_path.read_bytes())
    relabelled = manifest.model_copy(
        update={
            "campaign_id": campaign_id(plan),
            "plan_sha256": plan_sha256(plan),
            "registration_nonce": None,
        }
    )
    manifest_path.write_text(relabelled.model_dump_json(indent=2) + "\n", encoding="utf-8")
    write_records(registered / RECORDS_FILE, records)
    return registered


def reregister(earlier: str, directory: Path, plan: Plan) -> None:
    """The data directory's registry (``registry.jsonl``) as if ``directory`` had been
    registered for ``plan`` in place of the campaign ``earlier`` (test data only, like the
    relabelled campaign itself: otherwise the site would list ``earlier`` as discarded)."""
    registry = directory.parents[1] / REGISTRY_FILE
    if not registry.is_file():
        return
    lines = []
    for line in registry.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry["campaign_id"] == earlier:
            entry.update(
                campaign_id=directory.name, plan_name=plan.name, plan_sha256=plan_sha256(plan)
            )
        lines.append(json.dumps(entry) + "\n")
    registry.write_text("".join(lines), encoding="utf-8")


def copy_project(target: Path) -> Path:
    """A copy of the demo project (what a project holds: ``mkdocs.yml``, ``content/`` and
    ``theme/``, its logo and labels; the templates and pages are sitegen's packaged ones),
    to add things to or break."""
    shutil.copytree(PROJECT / "content", target / "content")
    shutil.copytree(PROJECT / "theme", target / "theme")
    shutil.copy(PROJECT / "mkdocs.yml", target / "mkdocs.yml")
    return target


def project_page(project: Path, page: str) -> Path:
    """The project's own ``content/<lang>/…md`` (``page`` from the language on), made from
    the packaged page on first use: an author changes a page by copying it into the project."""
    path = project / "content" / page
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(packaged_content() / page, path)
    return path


def write_records(path: Path, records: list[dict]) -> None:
    """Write a campaign's records and sign them, as the host that measured them would
    have (the build refuses records that do not match their manifest)."""
    # ASCII escapes, like the store's own JSON of non-ASCII control characters.
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    resign(path.parent)


def resign(directory: Path) -> None:
    """Rewrite ``manifest.json`` to match the files as they are now (test data only:
    ``sitegen measure`` never signs what it did not write)."""
    manifest_path = directory / MANIFEST_FILE
    if not manifest_path.is_file():
        return
    manifest = Manifest.model_validate_json(manifest_path.read_bytes())
    artifacts = [
        ArtifactEntry(
            path=entry.path,
            sha256=sha256_file(directory / entry.path),
            size_bytes=(directory / entry.path).stat().st_size,
        )
        for entry in manifest.artifacts
    ]
    lines = (directory / RECORDS_FILE).read_bytes().split(b"\n")
    signed = manifest.model_copy(
        update={
            "artifacts": artifacts,
            "record_count": sum(1 for line in lines if line.strip()),
            "pending_record_sha256": None,
        }
    )
    manifest_path.write_text(signed.model_dump_json(indent=2) + "\n", encoding="utf-8")


def unmarked(html: str) -> str:
    """``html`` without the marks the audit reads (``<span data-figure>``), their text
    kept: a figure and the sign its text adds (``45.0%``) read as one again."""
    return re.sub(r'<span data-figure="[^"]*">([^<]*)</span>', r"\1", html)


def read_records(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line]


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def rendered_page(rendered: Any, path: str) -> str:
    """A page of a rendering (``RenderedSite``), ``path`` as in its docs tree
    (``reports/<name>/speed.en.md``): what mkdocs would publish at
    ``[en/]reports/<name>/speed/index.html``."""
    body = rendered.docs[path]
    return body.decode("utf-8") if isinstance(body, bytes) else body.read_text(encoding="utf-8")


def rendered_reports(rendered: Any) -> set[str]:
    """The report folders of a rendering: the names its site would publish under
    ``reports/``."""
    return {path.split("/")[1] for path in rendered.docs if path.startswith("reports/")}


def published_file(version: Path, path: str) -> Path:
    """A file of a published version (``path`` as mkdocs rendered it) where a reader finds
    it: the object the version's ``objects.json`` names, else under the version."""
    moved = published_objects(version)
    return version.parents[1] / moved[path] if path in moved else version / path


def search_entries(version: Path) -> list[dict]:
    """Every entry of a version's search index, its parts joined as the site's script
    joins them (``search-parts.js``)."""
    index_path = published_file(version, "search/search_index.json")
    index = json.loads(index_path.read_text(encoding="utf-8"))
    parts = [json.loads((index_path.parent / part).read_text()) for part in index["parts"]]
    return index["docs"] + [entry for part in parts for entry in part["docs"]]


def published_objects(version: Path) -> dict[str, str]:
    """The version's ``objects.json``: rendered path → object path from the site root."""
    return json.loads((version / "objects.json").read_text(encoding="utf-8"))


def published_folder(version: Path, folder: str) -> dict[str, Path]:
    """Every file a version rendered directly in ``folder``, by name, where it lies now."""
    moved = published_objects(version)
    names = {p.rsplit("/", 1)[1] for p in moved if p.rsplit("/", 1)[0] == folder}
    here = version / folder
    names |= {p.name for p in here.iterdir() if p.is_file()} if here.is_dir() else set()
    return {name: published_file(version, f"{folder}/{name}") for name in sorted(names)}


_RENDERED: dict[str, Any] = {}
"""``reusing_renders``' renderings (``sitegen.commands.build.RenderedSite``) by their inputs' digest."""


def _render_inputs_digest(data_dir: Path, project_dir: Path, skip: Iterable[str]) -> str:
    """SHA-256 over the bytes of every file ``render_site`` reads (the campaigns, the
    project's ``mkdocs.yml``, ``content/`` and ``theme/``) and the skip list."""
    digest = hashlib.sha256(repr(sorted(skip)).encode())
    files = [("project", project_dir / "mkdocs.yml")]
    files += [("project", p) for f in ("content", "theme") for p in (project_dir / f).rglob("*")]
    files += [("data", p) for p in (data_dir / "campaigns").rglob("*")]
    for root, path in sorted(files):
        if path.is_file() and not path.is_symlink():
            relative = path.relative_to(project_dir if root == "project" else data_dir)
            digest.update(f"{root}/{relative.as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        elif path.is_symlink():  # refused by the build: never reused
            digest.update(os.urandom(16))
    return digest.hexdigest()


def rendering_once(render_site: Callable[..., Any]) -> Callable[..., Any]:
    """``render_site`` that renders given inputs once (see ``reusing_renders``)."""

    def rendered_once(
        data_dir: Path, project_dir: Path, skip: Iterable[str] = (), signer: Any = None
    ) -> Any:
        key = _render_inputs_digest(Path(data_dir), Path(project_dir), skip)
        key += signer.fingerprint if signer is not None else ""
        if key not in _RENDERED:
            _RENDERED[key] = render_site(data_dir, project_dir, skip, signer)
        # A build removes its rendering's scratch folder once published: this one is kept.
        scratch = SimpleNamespace(name=_RENDERED[key].scratch.name, cleanup=lambda: None)
        return replace(_RENDERED[key], scratch=scratch)

    return rendered_once


@contextmanager
def reusing_renders() -> Iterator[None]:
    """While the block runs, a build from inputs byte for byte those of an earlier build of
    this test process (another folder's copy included) reuses that build's rendering
    (``render_site``: read, validate, compute and render every page) instead of rendering
    again; a rendering that fails is not kept. For tests of what a build does after
    rendering (publishing, the archive, locks, faults while writing): a test of what the
    build reads or renders must not use it."""
    import sitegen.commands.build

    with mock.patch.object(
        sitegen.commands.build, "render_site", rendering_once(sitegen.commands.build.render_site)
    ):
        yield


# --------------------------------------------------------------------------- hostile corpus

PWN_HOOK = "(window.__pwned=window.__pwned||[]).push('$T')"
"""What a payload runs if it ever executes: appends its tag to ``window.__pwned``."""
PWN_HOOK_NO_QUOTES = "(window.__pwned=window.__pwned||[]).push(/$T/.source)"
"""The hook without quotes or spaces, for unquoted attributes and URLs."""
PWN_HOOK_PARENT = "(parent.__pwned=parent.__pwned||[]).push('$T')"
"""The hook from inside a same-origin frame."""
INJECTED_SELECTOR = "[data-pwn], #pwn, .pwn, [id^=pwn], [name^=pwn]"
"""Matches any element a payload managed to inject (every payload element is marked)."""
PWN_URL_MARK = "/pwn/"
"""Every URL a payload would make the browser load holds this (``/pwn/<tag>.png`` …)."""
TEMPLATE_MARK = "PWNTPL"
"""Text that appears only if a template payload was evaluated (``{{ 'PWN' ~ 'TPL' }}``)."""
MARKDOWN_MARK = "PWNMD"
"""Text that an element holds *alone* only if a Markdown payload was formatted."""
TAG_PATTERN = r"[a-z0-9][a-z0-9-]*\.[a-z0-9_]+"
"""A payload's tag: ``<field>.<payload>``."""


def _fullwidth(text: str) -> str:
    """ASCII as its full-width forms (NFKC folds them back: a normalizer must not)."""
    return "".join(
        "\u3000" if c == " " else chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text
    )


# $T: the tag; $H / $N / $P: the hook (quoted / without quotes / from a frame); $W: an
# image with an onerror hook in full-width forms. Payloads that swallow what follows them
# when unescaped (comments, raw-text elements, unclosed tags and quotes) come last, so a
# concatenation still reaches all the others.
_PAYLOAD_TEMPLATES: dict[str, str] = {
    # -- script elements
    "script": '<script data-pwn="$T">$H</script>',
    "script_src": '<script data-pwn="$T" src="/pwn/$T.js"></script>',
    "script_mixed_case": '<ScRiPt data-pwn="$T">$H</sCrIpT >',
    "script_breakout": '</script><script data-pwn="$T">$H</script>',
    "context_breakout": (
        "</title></textarea></style></noscript></noembed></xmp></iframe></pre></code>"
        '--></select></template></svg></math><img data-pwn="$T" src=x onerror="$H">'
    ),
    "json_breakout": '"}]}\'}]}</script><script data-pwn="$T">$H</script>\u2028\u2029',
    "json_line_separators": "[$T] \u2028\";$H;//\u2029';$H;//",
    "js_string_breakout": "[$T] ';$H;// \";$H;// `;$H;// $${$H} \\';$H;//",
    # -- event handlers
    "img_onerror": '<img data-pwn="$T" src=x onerror="$H">',
    "img_onerror_unquoted": "<img data-pwn=$T src=x onerror=$N>",
    "svg_onload": '<svg data-pwn="$T" onload="$H"></svg>',
    "details_ontoggle": '<details data-pwn="$T" open ontoggle="$H"><summary>$T</summary>x</details>',
    "body_onload": '<body data-pwn="$T" onload="$H" onpageshow="$H">',
    "autofocus_onfocus": '<input data-pwn="$T" autofocus onfocus="$H">',
    "media_onerror": (
        '<video data-pwn="$T"><source onerror="$H"></video>'
        '<audio data-pwn="$T" src=x onerror="$H"></audio>'
    ),
    "animation_start": (
        '<style data-pwn="$T">@keyframes pwnspin{}</style>'
        '<div data-pwn="$T" style="animation:pwnspin 1ms" onanimationstart="$H">$T</div>'
    ),
    "attribute_breakout_double": '" data-pwn="$T" autofocus onfocus="$H" tabindex="1" x="',
    "attribute_breakout_single": "' data-pwn='$T' autofocus onfocus='$N' x='",
    "attribute_breakout_unquoted": " x data-pwn=$T autofocus onfocus=$N ",
    # -- URLs with scripts in them, in HTML, Markdown and autolinks
    "javascript_href": '<a data-pwn="$T" href="javascript:$H">$T</a>',
    "data_href": '<a data-pwn="$T" href="data:text/html,<script>alert(\'$T\')</script>">$T</a>',
    "vbscript_href": '<a data-pwn="$T" href="vbscript:msgbox(\'$T\')">$T</a>',
    "markdown_javascript_link": "[pwn $T](javascript:$N) [pwn $T](JaVaScRiPt:$N)",
    "markdown_data_link": (
        "[pwn $T](data:text/html,%3Cscript%3Ealert('$T')%3C/script%3E) "
        "![pwn $T](data:image/svg+xml,%3Csvg%20onload=alert('$T')%3E)"
    ),
    "markdown_vbscript_link": "[pwn $T](vbscript:msgbox('$T'))",
    "markdown_autolinks": "<javascript:$N> <vbscript:msgbox(/$T/)> <data:text/html,pwn-$T>",
    "markdown_image": "![pwn $T](/pwn/$T.png) ![pwn $T](javascript:$N)",
    "markdown_link_title": '[pwn $T](/pwn/$T "t\\" data-pwn=\\"$T\\" onmouseover=\\"$H")',
    "markdown_reference_link": "[pwn $T][pwnref] [pwnref]\n\n[pwnref]: javascript:$N\n",
    # -- elements that change the page around them
    "base_href": '<base data-pwn="$T" href="/pwn/$T/">',
    "meta_refresh": '<meta data-pwn="$T" http-equiv="refresh" content="0;url=/pwn/$T.html">',
    "style_hides_caveats": (
        '<style data-pwn="$T">.sg-caveat,[data-caveat]{display:none!important}</style>'
    ),
    "style_fades_caveats": (
        '<style data-pwn="$T">@import "/pwn/$T.css";[data-caveat],.sg-caveat{visibility:hidden'
        "!important;opacity:0!important;font-size:0!important;color:transparent!important}"
        "</style>"
    ),
    "link_stylesheet": (
        '<link data-pwn="$T" rel="stylesheet" href="/pwn/$T.css"><link data-pwn="$T" '
        'rel="stylesheet" href="data:text/css,.sg-caveat,[data-caveat]{display:none!important}">'
    ),
    "overlay": (
        '<div data-pwn="$T" style="position:fixed;inset:0;z-index:99999;background:#fff">$T</div>'
    ),
    "fake_caveat": '<p class="sg-caveat pwn" data-caveat="C-REVIEW" data-pwn="$T">$T</p>',
    # -- SVG and MathML
    "svg_script": '<svg data-pwn="$T"><script>$H</script></svg>',
    "svg_animate": (
        '<svg data-pwn="$T"><animate onbegin="$H" attributeName="x" dur="1s"></animate></svg>'
    ),
    "svg_xlink": (
        '<svg data-pwn="$T"><a xlink:href="javascript:$H"><text x="0" y="10">$T</text></a></svg>'
    ),
    "svg_foreign_object": (
        '<svg data-pwn="$T"><foreignObject><img data-pwn="$T" src=x onerror="$H">'
        "</foreignObject></svg>"
    ),
    # -- frames and plugins
    "iframe_srcdoc": '<iframe data-pwn="$T" srcdoc="<script>$P</script>"></iframe>',
    "iframe_javascript": '<iframe data-pwn="$T" src="javascript:$P"></iframe>',
    "object_data": (
        '<object data-pwn="$T" data="data:text/html,<script>alert(\'$T\')</script>"></object>'
    ),
    "embed_src": '<embed data-pwn="$T" src="/pwn/$T.svg" type="image/svg+xml">',
    # -- forms
    "form_action": (
        '<form data-pwn="$T" action="javascript:$H">'
        '<button data-pwn="$T" formaction="javascript:$H">$T</button>'
        '<input data-pwn="$T" type="image" src="/pwn/$T.png"></form>'
    ),
    # -- entity and encoding tricks
    "entity_script": '&lt;script data-pwn="$T"&gt;$H&lt;/script&gt;',
    "entity_hex": (
        '&#x3C;script data-pwn="$T">$H&#x3C;/script> &#x3C;img data-pwn="$T" src=x '
        'onerror="$H"&#x3E; &#60;script&#62;$H&#60;/script&#62;'
    ),
    "entity_javascript": (
        '<a data-pwn="$T" href="&#106;avascript:$H">$T</a>'
        '<a data-pwn="$T" href="jav&#x09;ascript:$H">$T</a>'
        '<a data-pwn="$T" href=" &#14; javascript:$H">$T</a>'
        " [pwn $T](&#106;avascript:$N)"
    ),
    "double_encoded": "[$T] %3Cscript%3E$H%3C/script%3E %253Cscript%253E &amp;lt;script&amp;gt;",
    "utf7": "[$T] +ADw-script data-pwn=+ACI-$T+ACI-+AD4-$H+ADw-/script+AD4-",
    "fullwidth_html": "[$T] $W",
    "small_form_variants": "[$T] \ufe64script\ufe65$H\ufe64/script\ufe65 \u2039b\u203a",
    # -- CSS-selector and quote breakers (page scripts must not build selectors from data)
    "selector_breakers": '[$T] "] [data-x=\'] \\\\ \\" \')" } { ; , > ~ + * #x .y :not( ::',
    # -- template languages
    "jinja_expression": "[$T] {{ 'PWN' ~ 'TPL-$T' }} {{ 7 * 7 }} {{ report_title() }}",
    "jinja_statement": (
        "[$T] {% if true %}PWN{{ '' }}TPL-$T{% endif %} {% raw %}{{ raw }}{% endraw %} {# c #}"
    ),
    "other_templates": "[$T] $${7*7} #{7*7} <%= 7*7 %> {{{triple}}} [[wiki]] {{< shortcode >}}",
    # -- Markdown
    "markdown_heading": '\n# PWNMD-$T {: #pwn-$T .pwn data-pwn="$T" }\n\nPWNMD-$T\n===\n',
    "markdown_emphasis": '**PWNMD-$T**{: data-pwn="$T" onclick="$H" } _PWNMD-$T_ `PWNMD-$T`',
    "markdown_blocks": "\n\n* PWNMD-$T\n\n> PWNMD-$T\n\n1. PWNMD-$T\n\n---\n",
    "markdown_table": "\n\n| PWNMD-$T | b |\n|---|---|\n| 1 | 2 |\n\n",
    "markdown_code_fence": '\n\n```\n</code></pre><img data-pwn="$T" src=x onerror="$H">\n```\n\n',
    "markdown_raw_html_block": '\n\n<div data-pwn="$T" class="pwn">\n\nPWNMD-$T\n\n</div>\n\n',
    "markdown_div_markdown": '\n\n<div markdown="1" data-pwn="$T">**PWNMD-$T**</div>\n\n',
    "markdown_attr_list": '\n\nPWNMD-$T\n{: data-pwn="$T" onclick="$H" style="color:red" }\n\n',
    "markdown_admonition": '\n\n!!! danger "PWNMD-$T"\n    PWNMD-$T\n\n',
    # -- text that must come through as it is
    "bidi_overrides": (
        "[$T] file\u202egnp.exe\u202c \u2066isolate\u2069 \u2067rtl\u2069 \u200fRTL mark\u200e"
        " \u061c \u202bembed\u202c \u202dlro\u202c"
    ),
    "zero_width": (
        "[$T] java\u200bscript:$N jav\u200dascript \ufeffBOM \u200c\u2060 <\u200bscript>"
        " [pwn $T](java\u200bscript:$N)"
    ),
    "nul_and_controls": (
        "[$T] nul\x00bell\x07esc\x1b[31mred\x1b[0m bs\x08 vt\x0b ff\x0c del\x7f "
        "c1\x85\x9b\x9f \x01\x02\x03\x0e\x1f"
    ),
    "nul_in_markup": (
        '<scr\x00ipt data-pwn="$T">$H</scr\x00ipt><img\x00 data-pwn="$T" src=x onerror="$H">'
        ' <a data-pwn="$T" href="java\x00script:$H">$T</a>'
    ),
    "long_word": "[$T] " + "W" * 4_000,
    "long_url": "[$T] https://example.invalid/" + "a/" * 800,
    "japanese": (
        "[$T] 日本語の回答です。「かぎ括弧」『二重』【隅付き】〈山括弧〉《二重山括弧》〜ー…・※"
        "　全角空白 ＡＢＣａｂｃ１２３ ｱｲｳｴｵ半角ｶﾀｶﾅ ＜全角不等号＞ ＆＃＄％＇＂ ￥1,000 ①②③ "
        "髙﨑 𠮷野家 🍣 ㈱ ㌔ ヴ ゛゜"
    ),
    # -- swallowers, last
    "xml_cdata": (
        '<![CDATA[<img data-pwn="$T" src=x onerror="$H">]]> <?xml-stylesheet href="/pwn/$T.xsl"?>'
    ),
    "math_mxss": (
        '<math data-pwn="$T"><mtext><table><mglyph><style><img data-pwn="$T" src=x '
        'onerror="$H"></style></mglyph></table></mtext></math>'
    ),
    "noscript_mxss": "<noscript><p title=\"</noscript><img data-pwn='$T' src=x onerror='$N'>\">",
    "textarea_open": '<textarea data-pwn="$T">',
    "dangling_markup": '<img data-pwn="$T" src=\'/pwn/$T?',
    "unclosed_tag": '<img data-pwn="$T" src=x onerror="$H"',
    "comment_open": "<!-- [$T]",
}
_FULLWIDTH_TEMPLATE = '<img data-pwn="$T" src=x onerror="$H">'


class _Template(string.Template):
    """``$T``, ``$H`` …: one capital letter, whatever follows it."""

    idpattern = "[A-Z]"
    flags = 0


def hostile_payloads(field: str, names: Iterable[str] | None = None) -> dict[str, str]:
    """The large corpus for ``field`` by payload name (default: all of it, in order), each
    payload tagged ``<field>.<payload>`` and holding that tag as plain text too."""
    out = {}
    for name in _PAYLOAD_TEMPLATES if names is None else names:
        tag = f"{field}.{name}"
        hooks = {
            "H": PWN_HOOK.replace("$T", tag),
            "N": PWN_HOOK_NO_QUOTES.replace("$T", tag),
            "P": PWN_HOOK_PARENT.replace("$T", tag),
        }
        wide = _fullwidth(_Template(_FULLWIDTH_TEMPLATE).substitute(T=tag, **hooks))
        out[name] = _Template(_PAYLOAD_TEMPLATES[name]).substitute(T=tag, W=wide, **hooks)
    return out


def hostile_text(field: str, names: Iterable[str] | None = None, separator: str = "\n\n") -> str:
    """The payloads of ``field`` (default: all) joined into one text."""
    return separator.join(hostile_payloads(field, names).values())


HOSTILE_PAYLOADS: dict[str, str] = hostile_payloads("payload")
"""The large corpus, tagged with the placeholder field ``payload``."""

DIRECTORY_PAYLOADS: dict[str, str] = {
    "selector_quotes": "[$T]\"']<[",
    "img_onerror": '<img data-pwn="$T" src=x onerror="$H">',
}
"""What a directory name can hold (no ``/``, no NUL, a few hundred bytes at most)."""


def directory_prefix(names: Iterable[str] | None = None) -> str:
    """A campaign directory name's prefix made of ``DIRECTORY_PAYLOADS``."""
    parts = []
    for name in DIRECTORY_PAYLOADS if names is None else names:
        tag = f"directory.{name}"
        hook = PWN_HOOK.replace("$T", tag)
        parts.append(_Template(DIRECTORY_PAYLOADS[name]).substitute(T=tag, H=hook))
    return "unit" + "".join(parts)


# --------------------------------------------------------------------------- hostile fields

FAIL_MARK = "sitegen-fake-fails-here"
"""Text of the hostile input that makes the fake engine fail it (so failure reasons exist)."""
QUALITY_TEMPLATES = ["arithmetic.change", "units.achievement", "logic.order"]


@dataclass(frozen=True)
class HostileField:
    """A text field that a plan author, an annotator or a model fills."""

    name: str
    """Short name, also the first part of every tag placed in it."""
    where: Literal["plan", "record", "annotations", "directory"]
    path: tuple[str | int, ...] = ()
    """Keys from the plan, each record or the annotations down to the field."""
    as_key: bool = False
    """The text goes in as a key of the mapping at ``path`` (its value is ``"1"``)."""
    only_failed: bool = False
    """Records that failed only (``failure_reason``)."""
    prefix: str = ""
    suffix: str = ""


HOSTILE_FIELDS: tuple[HostileField, ...] = (
    # the plan (what its author writes)
    HostileField("title-ja", "plan", ("title", "ja")),
    HostileField("title-en", "plan", ("title", "en")),
    HostileField("input-text", "plan", ("inputs", 2, "text"), suffix=f"\n{FAIL_MARK}"),
    HostileField("model-name", "plan", ("model", "name")),
    HostileField("model-quantization", "plan", ("model", "quantization")),
    HostileField("model-source", "plan", ("model", "source")),
    HostileField("template-kwarg", "plan", ("template_kwargs", "pwn_kwarg")),
    HostileField("filler", "plan", ("filler",)),
    HostileField("plan-name", "plan", ("name",)),
    HostileField("input-id", "plan", ("inputs", 2, "id")),
    HostileField("condition-id", "plan", ("conditions", 0, "id")),
    # the records (what the model and the engine say)
    HostileField("answer-text", "record", ("text",)),
    HostileField("reasoning-text", "record", ("reasoning_text",)),
    HostileField("failure-reason", "record", ("failure_reason",), only_failed=True),
    HostileField("engine-version", "record", ("provenance", "engine", "version")),
    HostileField("engine-build", "record", ("provenance", "engine", "build")),
    HostileField("engine-api", "record", ("provenance", "engine", "api")),
    HostileField("record-model-name", "record", ("provenance", "model", "name")),
    HostileField("record-model-file", "record", ("provenance", "model", "file")),
    HostileField("record-quantization", "record", ("provenance", "model", "quantization")),
    HostileField("hostname", "record", ("provenance", "host", "hostname")),
    HostileField("platform", "record", ("provenance", "host", "platform")),
    HostileField("python-version", "record", ("provenance", "host", "python")),
    HostileField("device-name", "record", ("provenance", "host", "devices", 0, "name")),
    HostileField("driver", "record", ("provenance", "host", "driver")),
    HostileField("interconnect", "record", ("provenance", "host", "interconnect")),
    HostileField("flag-value", "record", ("provenance", "flags", "pwn_flag")),
    HostileField("flag-key", "record", ("provenance", "flags"), as_key=True),
    HostileField("env-value", "record", ("provenance", "env", "PWN_ENV")),
    HostileField("env-key", "record", ("provenance", "env"), as_key=True),
    HostileField("record-template-kwarg", "record", ("provenance", "template_kwargs", "pwn")),
    HostileField("sitegen-version", "record", ("provenance", "sitegen_version")),
    # the annotations (what a reviewer writes after measuring)
    HostileField("reviewer", "annotations", ("reviewer",)),
    HostileField("curated-reason-ja", "annotations", ("curated_examples", 0, "reason", "ja")),
    HostileField("curated-reason-en", "annotations", ("curated_examples", 0, "reason", "en")),
    HostileField("curated-trial-id", "annotations", ("curated_examples", 0, "trial_id")),
    HostileField("posthoc-reason-ja", "annotations", ("post_hoc", 0, "reason", "ja")),
    HostileField("posthoc-reason-en", "annotations", ("post_hoc", 0, "reason", "en")),
    HostileField(
        "posthoc-added-at", "annotations", ("post_hoc", 0, "added_at"), prefix="2999-01-01 "
    ),
    HostileField("posthoc-label", "annotations", ("post_hoc", 0, "label")),
    HostileField("posthoc-template", "annotations", ("post_hoc", 0, "exclude_templates", 0)),
    # the campaign directory's name (whoever copies campaigns around)
    HostileField("directory", "directory"),
)
"""Every text field that reaches the build; each gets the whole corpus."""
_FIELDS = {f.name: f for f in HOSTILE_FIELDS}


def field_text(field: str, names: Iterable[str] | None = None, separator: str = "\n\n") -> str:
    """What goes into ``field``: its payloads (default: all) joined, with the field's
    prefix and suffix."""
    spec = _FIELDS[field]
    if spec.where == "directory":
        return directory_prefix(names)
    return spec.prefix + hostile_text(field, names, separator) + spec.suffix


def field_payload_names(field: str) -> list[str]:
    """The payloads ``field`` is given."""
    return list(DIRECTORY_PAYLOADS if _FIELDS[field].where == "directory" else _PAYLOAD_TEMPLATES)


def hostile_base_plan() -> Plan:
    """Speed inputs (one of them failing on the ``on`` condition) and a small quality
    evaluation, so every report page exists: summary, speed, quality, examples, method,
    data."""
    draft = QualitySpec(
        suite_id="t",
        per_template=1,
        suite_seed=3,
        templates=QUALITY_TEMPLATES,
        suite_sha256="0" * 64,
        documents=[DocumentSpec(task_id="doc", n_records=5, seed=2, max_output_tokens=32)],
        seeds=1,
        max_output_tokens=32,
        off_condition="off",
        on_condition="on",
        bootstrap_resamples=200,
    )
    quality = draft.model_copy(update={"suite_sha256": suite_sha256(draft)})
    plan = make_plan()
    inputs = [
        *plan.inputs,
        InputSpec(id="hostile", text=f"benign input\n{FAIL_MARK}", max_output_tokens=16),
    ]
    conditions = [
        ConditionSpec(id="off", context_capacity=512),
        ConditionSpec(
            id="on",
            speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
            context_capacity=512,
            engine_options={"fail_input": FAIL_MARK},
        ),
    ]
    return make_plan(inputs=inputs, conditions=conditions, quality=quality, repetitions=2)


def hostile_base_annotations() -> dict:
    return {
        "review": "automated",
        "reviewer": "sitegen scorer",
        "curated_examples": [
            {"trial_id": "off/hostile/r0", "reason": {"ja": "選んだ回答", "en": "a chosen answer"}}
        ],
        "post_hoc": [
            {
                "label": "no-logic",
                "exclude_templates": ["logic.order"],
                "added_at": "2999-01-01",
                "reason": {"ja": "曖昧なテンプレート", "en": "an ambiguous template"},
            }
        ],
        "thresholds": [{"condition_id": "off", "above": 10.0}],
    }


def _place(target: Any, spec: HostileField, value: str) -> None:
    *parents, leaf = spec.path
    for key in parents:
        target = target[key]
    if spec.as_key:
        target[leaf][value] = "1"
    else:
        target[leaf] = value


def _apply(target: Any, where: str, values: Mapping[str, str], record: bool = False) -> None:
    for name, value in values.items():
        spec = _FIELDS[name]
        if spec.where != where:
            continue
        if record and spec.only_failed and target.get("status") != "failed":
            continue
        _place(target, spec, value)


def write_hostile_campaign(data_dir: Path, values: Mapping[str, str]) -> Path:
    """Measure the hostile base plan on the fake engine into ``data_dir`` with ``values``
    (field name → text) in their fields; returns the campaign directory."""
    plan_data = hostile_base_plan().model_dump()
    _apply(plan_data, "plan", values)
    plan = Plan.model_validate(plan_data)
    return _finish_campaign(run_campaign(plan, data_dir).directory, values)


def _finish_campaign(directory: Path, values: Mapping[str, str]) -> Path:
    """Relabel the records as a real engine's, then put ``values`` into the records, the
    annotations and the directory's name."""
    path = directory / "records.jsonl"
    records = read_records(path)
    for record in records:
        record["provenance"]["engine"]["id"] = PUBLISHED_ENGINE
        _apply(record, "record", values, record=True)
    write_records(path, records)
    directory = register_engine(directory, PUBLISHED_ENGINE)
    annotations = hostile_base_annotations()
    _apply(annotations, "annotations", values)
    (directory / ANNOTATIONS_FILE).write_text(
        yaml.safe_dump(annotations, allow_unicode=True), encoding="utf-8"
    )
    if "directory" in values:
        renamed = directory.with_name(f"{values['directory']}-{directory.name.rsplit('-', 1)[1]}")
        directory = directory.rename(renamed)
    return directory


class _Prober:
    """Asks the build's reading and validation what they say about a campaign with some
    fields filled; re-measures only when a plan field changes (records, annotations and
    the directory's name are rewritten in a copy of a measured campaign)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.base = write_hostile_campaign(workdir / "base", {})
        self.samples = {
            "plan": json.loads((self.base / "plan.json").read_text(encoding="utf-8")),
            "record": read_records(self.base / "records.jsonl")[0],
            "annotations": hostile_base_annotations(),
        }
        self.probes = 0

    def issues(self, values: Mapping[str, str]) -> list[str]:
        """An exception while writing the campaign, or the issues found reading it."""
        return self.probe(values)[0]

    def probe(self, values: Mapping[str, str]) -> tuple[list[str], bool]:
        """``issues``, and whether they are an exception's (which ends the writing at the
        first field it refuses: the others are not checked)."""
        self.probes += 1
        data_dir = self.workdir / f"probe-{self.probes}"
        try:
            if any(_FIELDS[f].where == "plan" for f in values):
                write_hostile_campaign(data_dir, values)
            else:
                copy = data_dir / "campaigns" / self.base.name
                shutil.copytree(self.base, copy)
                _finish_campaign(copy, values)
        except Exception as exc:  # noqa: BLE001 - any refusal is a result
            return [f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}"], True
        campaigns, issues = read_campaigns(data_dir)
        issues += validate_campaigns(campaigns)
        shutil.rmtree(data_dir, ignore_errors=True)
        where = str(data_dir)
        return [
            " ".join(str(issue).replace(where, "<data>").split())[:500] for issue in issues
        ], False

    def model_refusal(self, field: str, value: str) -> str | None:
        """Why the field's own model refuses ``value`` (``None``: it takes it)."""
        spec = _FIELDS[field]
        if spec.where == "directory":
            too_long = len(f"{value}-000000000000".encode()) > 255
            return "not a file name" if "/" in value or "\x00" in value or too_long else None
        model = {"plan": Plan, "record": TrialRecord, "annotations": Annotations}[spec.where]
        data = json.loads(json.dumps(self.samples[spec.where]))
        if spec.only_failed:
            data["status"] = "failed"
        _place(data, spec, value)
        try:
            model.model_validate(data)
        except ValidationError as exc:
            return " ".join(str(exc).split())[:300]
        return None


@dataclass
class HostileData:
    """A campaign with the corpus in every field that takes it."""

    directory: Path
    placed: dict[str, list[str]]
    """Field → the payloads it holds."""
    refused: dict[str, dict[str, str]]
    """Field → payload → why the field's model or the build's validation refused it."""
    probes: int = 0
    """Campaigns written to find the refusals."""

    @property
    def placements(self) -> int:
        return sum(len(names) for names in self.placed.values())


PLAIN_TEXT = "plain text"
"""What a field that refuses every payload is tried with: refusing it too, the field takes
no free text at all (an id, a reference, a date)."""


def hostile_site_data(data_dir: Path) -> HostileData:
    """Write into ``data_dir`` one campaign with the whole corpus in every field, less
    the payloads a field refuses (found with the field's own model first, then with the
    build's reading and validation); the refusals are part of the result."""
    with tempfile.TemporaryDirectory(prefix="sitegen-hostile-") as tmp:
        prober = _Prober(Path(tmp))
        if issues := prober.issues({}):
            raise AssertionError("the hostile base campaign is invalid:\n" + "\n".join(issues))
        placed: dict[str, list[str]] = {}
        refused: dict[str, dict[str, str]] = {f.name: {} for f in HOSTILE_FIELDS}
        separators = {f.name: "\n\n" for f in HOSTILE_FIELDS}

        def values(fields: Iterable[str]) -> dict[str, str]:
            return {f: field_text(f, placed[f], separators[f]) for f in fields if placed[f]}

        for spec in HOSTILE_FIELDS:  # the fields' own models: cheap, one payload at a time
            field = spec.name
            names = field_payload_names(field)

            def model_accepts(chosen: list[str], separator: str, field: str = field) -> bool:
                text = field_text(field, chosen, separator)
                return prober.model_refusal(field, text) is None

            if model_accepts(names, "\n\n"):
                placed[field] = names
                continue
            accepted = []
            for name in names:
                if why := prober.model_refusal(field, field_text(field, [name])):
                    refused[field][name] = why
                else:
                    accepted.append(name)
            placed[field], separators[field] = _largest_accepted(
                accepted, model_accepts, refused[field]
            )
        # The build's validation: first the fields its issues name (by a tag or a path),
        # then, if issues remain, every field.
        for round_ in ("named", "every"):
            if not (issues := prober.issues(values(placed))):
                break
            candidates = [f for f in placed if placed[f]]
            if round_ == "named":
                candidates = [f for f in candidates if _named_in(f, issues)]
            refusing = [field for field in candidates if prober.issues(values([field]))]
            _drop_refused(prober, refusing, placed, separators, refused)
        else:
            if issues := prober.issues(values(placed)):
                raise AssertionError("the hostile campaign is invalid:\n" + "\n".join(issues))
        directory = write_hostile_campaign(data_dir, values(placed))
        return HostileData(
            directory, placed, {f: r for f, r in refused.items() if r}, prober.probes
        )


def _named_in(field: str, issues: list[str]) -> bool:
    spec = _FIELDS[field]
    path = ".".join(str(key) for key in spec.path)
    return any(f"{field}." in issue or (path and path in issue) for issue in issues)


def _drop_refused(
    prober: _Prober,
    fields: list[str],
    placed: dict[str, list[str]],
    separators: dict[str, str],
    refused: dict[str, dict[str, str]],
) -> None:
    """Take out of each of ``fields`` what the build refuses: everything if it refuses
    plain text too, else each payload it refuses alone, then what it refuses together."""
    searched = []
    for field in fields:
        if plain := prober.issues({field: field_text_plain(field)}):
            reason = f"refuses any free text: {plain[0]}"
            refused[field].update(dict.fromkeys(placed[field], reason))
            placed[field] = []
        else:
            searched.append(field)
    for field, names in _refusing_payloads(
        prober, {field: placed[field] for field in searched}, refused
    ).items():
        for name in names:
            placed[field].remove(name)
    for field in searched:

        def build_accepts(chosen: list[str], separator: str, field: str = field) -> bool:
            return not prober.issues(
                {field: field_text(field, chosen, separator)} if chosen else {}
            )

        # Alone: what the bisection found together with other fields is checked here.
        placed[field], separators[field] = _largest_accepted(
            placed[field], build_accepts, refused[field]
        )


def field_text_plain(field: str) -> str:
    """``PLAIN_TEXT`` as ``field`` would hold it (with its prefix and suffix)."""
    spec = _FIELDS[field]
    return "unit-plain" if spec.where == "directory" else spec.prefix + PLAIN_TEXT + spec.suffix


def _refusing_payloads(
    prober: _Prober, groups: dict[str, list[str]], refused: dict[str, dict[str, str]]
) -> dict[str, list[str]]:
    """The payloads of each field's ``groups`` entry the build refuses on their own in it
    (bisection); records why in ``refused``. The fields are searched side by side, one
    group of each in one campaign, as long as the build's issues name a single field each
    (``_probe_side_by_side``)."""
    found: dict[str, list[str]] = {field: [] for field in groups}
    pending = [(field, names) for field, names in groups.items() if names]
    while pending:
        batch: dict[str, list[str]] = {}
        later = []
        for field, names in pending:
            if field in batch:
                later.append((field, names))
            else:
                batch[field] = names
        pending = later
        for field, issues in _probe_side_by_side(prober, batch).items():
            names = batch[field]
            if not issues:
                continue
            if len(names) == 1:
                refused[field][names[0]] = issues[0]
                found[field].append(names[0])
            else:
                half = len(names) // 2
                pending += [(field, names[:half]), (field, names[half:])]
    return found


def _probe_side_by_side(prober: _Prober, batch: dict[str, list[str]]) -> dict[str, list[str]]:
    """The build's issues with each field of ``batch`` holding its payloads: one campaign
    for all when its issues each name exactly one of them (an exception or an issue naming
    none or several could hide another field's: then one campaign per field)."""
    texts = {field: field_text(field, names) for field, names in batch.items()}
    if len(batch) > 1:
        issues, raised = prober.probe(texts)
        owners = [[f for f in batch if _named_in(f, [issue])] for issue in issues]
        if not raised and all(len(named) == 1 for named in owners):
            by_field: dict[str, list[str]] = {field: [] for field in batch}
            for issue, (field,) in zip(issues, owners, strict=True):
                by_field[field].append(issue)
            return by_field
    return {field: prober.issues({field: text}) for field, text in texts.items()}


def _largest_accepted(
    names: list[str], accepts: Callable[[list[str], str], bool], refused: dict[str, str]
) -> tuple[list[str], str]:
    """``names`` and their separator if accepted together (one paragraph each, else on one
    line); otherwise the longest run from the start that is, the rest recorded as refused
    together."""
    for separator in ("\n\n", " "):
        if not names or accepts(names, separator):
            return names, separator
    chosen: list[str] = []
    for name in names:
        if accepts([*chosen, name], " "):
            chosen.append(name)
        else:
            refused[name] = "refused together with the payloads before it (a length limit?)"
    return chosen, " "


def report_address(campaign_dir: Path) -> str:
    """The report's folder under ``reports/``: its plan's name."""
    return json.loads((campaign_dir / "plan.json").read_text(encoding="utf-8"))["name"]
