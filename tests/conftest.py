"""Shared fixtures: plans for the deterministic fake engine (unit tests only), the
``slow`` marker on every test that starts a real engine, a browser or killed processes,
or publishes a site through mkdocs (enforced: see ``_publishing_only_in_slow_tests``),
and the order of the test files.

``pytest -m "not slow"`` is the inner loop, one worker per CPU; ``.ci/run`` runs
everything, one worker per CPU and one more; up to ``MAX_WORKERS`` (pytest-xdist: ``-n
auto --dist loadfile``, see ``pyproject.toml``); ``-n 0`` runs in one process (``--pdb``
does that by itself).

``--dist loadfile``: a file's tests run on one worker, one after the other, so a
module-scoped fixture (a built site, a llama.cpp server) is made once, and tests that must
never run beside each other (two Ray clusters) belong in one file. Files run slow ones
first, then the longest first (``FILE_SECONDS``, else by their number of tests; xdist keeps
this order with ``--no-loadscope-reorder``): the long ones start early instead of last,
beside an idle worker. The inner loop does not even import the files that hold only slow
tests (``pytest_ignore_collect``).
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitegen.core.signing import KEY_ENV
from sitegen.plan.plan_models import ConditionSpec, InputSpec, ModelSpec, Plan, SpeculativeSpec

_TESTS = Path(__file__).parent
SLOW_MODULES = (
    "browser",  # real headless Chromium
    "test_end_to_end.py",  # sitegen measure with the real embedded engine
    "measure/test_sweep_real.py",  # a draft-length and concurrency sweep on the real engine
    "measure/test_resume_kill.py",  # SIGKILLed measure processes
    "measure/test_engine_builds.py",  # two real xllamacpp builds, one from the package index
    "pages/test_determinism.py",  # two builds in subprocesses
    "fleet/test_fleet_cluster.py",  # a Ray cluster running real campaigns
    # Sites published through mkdocs: the archive, objects, atomic switches, links, serving
    # and auditing a published version.
    "publish",
    "pages/test_archive.py",
    "pages/test_build.py",
    "pages/test_links.py",
    "commands/test_audit.py",
    "commands/test_audit_tampering.py",
    "test_fuzz_inputs.py",  # 2,000 mutated input files, each through the command a user runs
)
SLOW_FIXTURES = frozenset(
    {"server_url", "ngram_server_url", "browser", "published", "machine_site"}
)
"""Fixtures that start a real llama.cpp server or Chromium, or publish a site."""
_in_slow_test = False
"""Whether the test this process runs now (fixtures included) is marked slow."""


def pytest_configure(config: pytest.Config) -> None:
    # The suite never reads the developer's own sitegen config: a signing key there made
    # every measure that resumes a test's unsigned campaign refuse it. Set in each process
    # (xdist workers too), so that the commands tests start inherit it.
    home = tempfile.mkdtemp(prefix="sitegen-tests-config-")
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))
    os.environ["XDG_CONFIG_HOME"] = home
    os.environ.pop(KEY_ENV, None)
    # Compiled modules are kept between runs, by the workers and by the commands tests
    # start (they inherit this): an environment that turns that off makes each of them
    # compile sitegen and rewrite the tests' asserts anew on every run.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


def _publishing_only_in_slow_tests() -> None:
    """A test outside the slow tier that publishes a site fails, naming the cure. A
    publication runs mkdocs once per language, slow even for a tiny campaign. The inner
    loop checks reading, validation, statistics and every rendered page (``render_site``);
    publishing (the archive, atomic switches, faults while writing) is the slow tier's."""
    import sitegen.publish.site as site

    render_version = site.render_version

    def render_version_in_a_slow_test(*args, **kwargs):
        if not _in_slow_test:
            pytest.fail(
                "this test publishes a site through mkdocs: mark it slow "
                "(@pytest.mark.slow), or check the pages render_site rendered",
                pytrace=False,
            )
        return render_version(*args, **kwargs)

    site.render_version = render_version_in_a_slow_test


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    global _in_slow_test
    _in_slow_test = item.get_closest_marker("slow") is not None
    _downloads_written_in_place(item)


def _downloads_written_in_place(item: pytest.Item) -> None:
    """Fast tests write a build's downloads in the test's own process, unless marked
    ``forked_writer`` (the tests of that writer); the slow tier builds as a user's build
    does. A build forks its writer to use a CPU the rendering leaves idle, but here every
    CPU has a worker of its own, and forking a worker's large heap (page tables, then a
    copy of each page either process writes) costs more than the overlap gains."""
    import sitegen.pages.render as render

    global _forked_below
    if _forked_below is None:
        _forked_below = render.WRITE_BESIDE_BELOW_RECORDS
    forked = _in_slow_test or item.get_closest_marker("forked_writer") is not None
    render.WRITE_BESIDE_BELOW_RECORDS = _forked_below if forked else 0


_forked_below: int | None = None
"""``sitegen.pages.render.WRITE_BESIDE_BELOW_RECORDS`` as sitegen sets it."""


MAX_WORKERS = 8
"""``-n auto``: one worker per CPU this process may run on (and one more with the slow
tests), at most this many (each worker imports everything and may start Chromium or a
model: memory, not CPUs, limits a large machine)."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist reads it
    # Not psutil's physical cores (xdist's choice when psutil is installed): they ignore a
    # container's CPU set, and two vCPUs that are one core's two threads count as one.
    # One more where the slow tests run: they wait on the processes they start (browsers,
    # engines, Ray, builds to kill), so that one worker per CPU leaves the CPUs idle much
    # of the time. The fast ones keep the CPUs busy by themselves.
    spare = 0 if config.option.markexpr == "not slow" else 1
    return max(1, min(len(os.sched_getaffinity(0)) + spare, MAX_WORKERS))


FILE_SECONDS = {
    "pages/test_content_policy.py": 5,
    "pages/test_figure_corpus.py": 5,
    "measure/test_measure_load.py": 5,
    "pages/test_comparison.py": 5,
    "validation/test_rules.py": 5,
    "pages/test_overview_and_polish.py": 5,
    "pages/test_headline_choice.py": 4,
    "test_cli.py": 4,
    "pages/test_kpi_cards.py": 3,
    "commands/test_build_faults.py": 3,
    "validation/test_preregistration.py": 3,
    "pages/test_beside_headline.py": 2,
    "pages/test_comparison_labels.py": 2,
    "statistics/test_sweep.py": 2,
    "statistics/test_examples.py": 2,
    "pages/test_series_page.py": 2,
    "pages/test_precision.py": 2,
    "pages/test_observations.py": 2,
    "measure/test_preflight.py": 2,
    "engine/test_llamacpp_http.py": 2,
}
"""The inner loop's longest files, the seconds their tests took on two busy CPUs (the sum
of ``--durations=0``): each file runs on one worker, so one that starts last beside an idle
worker adds its whole time to the run's. A file not named here counts ``SECONDS_PER_TEST``
a test; a stale entry only costs balance."""
SECONDS_PER_TEST = 0.01


def _in_slow_module(path: Path) -> bool:
    path = path.resolve()
    return any(path == p or path.is_relative_to(p) for p in (_TESTS / m for m in SLOW_MODULES))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # The inner loop would import these files (some 2 of a worker's 7 collecting seconds,
    # Chromium's and Ray's modules among them) only to deselect every test in them.
    if config.option.markexpr == "not slow" and _in_slow_module(collection_path):
        return True
    return None


@pytest.hookimpl(tryfirst=True)  # marks before -m deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        in_slow_module = _in_slow_module(Path(str(item.path)))
        if in_slow_module or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    # Whole files move, in a stable sort: a module's tests stay together and in order.
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    tests_in = Counter(item.path for item in items)

    def seconds(path: Path) -> float:
        name = Path(path).resolve().relative_to(_TESTS.resolve()).as_posix()
        return FILE_SECONDS.get(name, SECONDS_PER_TEST * tests_in[path])

    items.sort(key=lambda item: (item.path not in slow_files, -seconds(item.path)))


def pytest_collection_finish(session: pytest.Session) -> None:
    # What was imported and collected lives to the end: kept out of the garbage collector's
    # full passes, which would walk all of it again each time.
    gc.freeze()
    # Here, not at configure: xdist's controller collects nothing and runs no test, so it
    # need not import the renderer.
    _publishing_only_in_slow_tests()


def make_plan(**overrides) -> Plan:
    """A small plan on the fake engine; keyword arguments replace plan fields."""
    fields = dict(
        name="unit",
        title={"ja": "単体テスト", "en": "Unit test"},
        engine="fake",
        model=ModelSpec(name="fake-model", source="unused", quantization="none"),
        conditions=[
            ConditionSpec(id="off", context_capacity=512),
            ConditionSpec(
                id="on",
                speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
                context_capacity=512,
            ),
        ],
        inputs=[
            InputSpec(id="short", text="question one", max_output_tokens=16),
            InputSpec(
                id="padded", text="question two", target_prompt_tokens=40, max_output_tokens=16
            ),
        ],
        repetitions=3,
        warmups=1,
    )
    fields.update(overrides)
    return Plan(**fields)


@pytest.fixture
def fake_plan() -> Plan:
    return make_plan()


@pytest.fixture
def reuse_renders() -> Iterator[None]:
    """``tests.builtsites.reusing_renders`` for one test: a build from the inputs of an
    earlier build of this process reuses its rendering (for tests of publishing, not of
    rendering; ``pytest.mark.usefixtures("reuse_renders")``). Not undone by the test's own
    ``monkeypatch.undo()``."""
    from tests.builtsites import reusing_renders

    with reusing_renders():
        yield


def break_the_sixth_append(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """Make the campaign store's sixth append write half its line, then raise ``error``
    (a kill mid-write, a full disk …); ``monkeypatch.undo()`` repairs it."""
    from sitegen.records import store

    real_write_all = store._write_all
    appends = 0

    def half_then_fail(fd: int, data: bytes) -> None:
        nonlocal appends
        appends += 1
        if appends < 6:
            return real_write_all(fd, data)
        real_write_all(fd, data[: len(data) // 2])
        raise error

    monkeypatch.setattr(store, "_write_all", half_then_fail)
