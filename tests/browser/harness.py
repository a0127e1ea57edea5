"""Headless-Chromium harness for browser tests of the generated site.

Drives Debian's ``chromium`` package (installed by ``scripts/install-chromium.sh``)
through the ``playwright`` PyPI package. Playwright's own browser downloads are
never used: the browser is always launched with ``executable_path``.

Typical use::

    with serve_directory(site_dir) as base_url, open_browser() as browser:
        with browser.new_page() as page:
            page.goto(base_url + "en/")
            page.wait_for("nav")
            page.click("text=日本語")
            assert page.href.startswith(base_url)
            page.screenshot(SCREENSHOT_DIR / "home.png")
            page.report.assert_clean(allow_404=["/favicon.ico"])

Every page records console errors, uncaught page errors, JS dialogs
(alert/confirm/prompt, which are dismissed and counted), failed requests,
HTTP error responses and requests to any host other than the loopback
server. Requests that would leave the machine are aborted (and recorded),
so a test never waits on DNS in a closed network.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS_DIR = REPO_ROOT / "test-artifacts"
SCREENSHOT_DIR = ARTIFACTS_DIR / "screenshots"

#: Path that marks chromium as installed (what scripts/install-chromium.sh checks).
CHROMIUM_WRAPPER = Path("/usr/bin/chromium")
#: Debian's real binary behind the /usr/bin/chromium shell wrapper. Launching it
#: directly skips the wrapper's /etc/chromium.d flags (e.g. --load-extension,
#: --enable-gpu-rasterization) and its noisy /dev/shm size check.
CHROMIUM_REAL = Path("/usr/lib/chromium/chromium")
#: Environment variable that overrides the browser executable.
CHROMIUM_ENV = "SITEGEN_CHROMIUM"

INSTALL_HINT = (
    "Chromium is required for the browser tests. Install it with "
    "`bash scripts/install-chromium.sh` (CI runs it; as root or with sudo), "
    f"or point {CHROMIUM_ENV} at a Chromium/Chrome executable."
)

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Containers often have a 64 MiB /dev/shm; use the temp dir instead.
    "--disable-dev-shm-usage",
)

DEFAULT_TIMEOUT_MS = 10_000
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
#: Schemes that never touch the network.
LOCAL_SCHEMES = frozenset({"data", "blob", "about", "chrome", "chrome-error", "devtools", "file"})


class ChromiumNotInstalled(RuntimeError):
    """Raised when no Chromium executable can be found."""


class PlaywrightNotInstalled(RuntimeError):
    """Raised when the ``playwright`` Python package is missing."""


# --------------------------------------------------------------------------- server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static file handler that logs to a list instead of stderr."""

    log_sink: list[str] | None = None

    def log_message(self, format: str, *args: Any) -> None:
        if self.log_sink is not None:
            self.log_sink.append(format % args)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # Do not join handler threads on close: a browser may hold a socket open.
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A browser that navigates away mid-download closes the socket: not an error.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


@contextlib.contextmanager
def serve_directory(path: str | os.PathLike[str], log: list[str] | None = None) -> Iterator[str]:
    """Serve ``path`` on 127.0.0.1 (random free port) in a background thread.

    Yields the base URL, ending in ``/`` (e.g. ``http://127.0.0.1:43123/``).
    If ``log`` is given, one line per request (``"GET /x HTTP/1.1" 200 -``)
    is appended to it.
    """
    root = Path(path)
    if not root.is_dir():
        raise NotADirectoryError(f"cannot serve {root}: not a directory")
    handler = type("Handler", (_QuietHandler,), {"log_sink": log})
    server = _Server(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# --------------------------------------------------------------------------- chromium


def find_chromium() -> str:
    """Return the Chromium executable to launch, or raise ChromiumNotInstalled."""
    override = os.environ.get(CHROMIUM_ENV)
    if override:
        resolved = shutil.which(override) or override
        if not os.access(resolved, os.X_OK):
            raise ChromiumNotInstalled(
                f"{CHROMIUM_ENV}={override!r} is not executable. " + INSTALL_HINT
            )
        return resolved
    if CHROMIUM_REAL.is_file() and os.access(CHROMIUM_REAL, os.X_OK):
        return str(CHROMIUM_REAL)
    if CHROMIUM_WRAPPER.is_file() and os.access(CHROMIUM_WRAPPER, os.X_OK):
        return str(CHROMIUM_WRAPPER)
    raise ChromiumNotInstalled(f"{CHROMIUM_WRAPPER} not found. " + INSTALL_HINT)


def _import_playwright() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise PlaywrightNotInstalled(
            "The `playwright` Python package is required for the browser tests: "
            "install the test extras (`pip install -e '.[test]'`). "
            "Do NOT run `playwright install`; Debian's chromium is used instead."
        ) from exc
    return sync_playwright


# --------------------------------------------------------------------------- reports


def is_local_url(url: str) -> bool:
    """True for loopback http(s)/ws(s) URLs and for non-network schemes."""
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return True
    return parts.hostname in LOOPBACK_HOSTS


@dataclass(frozen=True)
class ConsoleMessage:
    type: str
    text: str
    url: str


@dataclass(frozen=True)
class DialogRecord:
    type: str  # "alert" | "confirm" | "prompt" | "beforeunload"
    message: str


@dataclass(frozen=True)
class FailedRequest:
    url: str
    failure: str


@dataclass(frozen=True)
class HttpError:
    url: str
    status: int


def _url_matches(url: str, patterns: Iterable[str]) -> bool:
    """Match a URL against patterns: a full URL, a path, or an fnmatch glob of either."""
    path = urlsplit(url).path
    for pat in patterns:
        target = url if "://" in pat else path
        if target == pat or fnmatch.fnmatchcase(target, pat):
            return True
    return False


@dataclass
class PageReport:
    """Everything a page did that a test may want to assert on."""

    console: list[ConsoleMessage] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[DialogRecord] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    failed_requests: list[FailedRequest] = field(default_factory=list)
    http_errors: list[HttpError] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)

    @property
    def console_errors(self) -> list[str]:
        return [m.text for m in self.console if m.type == "error"]

    @property
    def dialog_count(self) -> int:
        return len(self.dialogs)

    @property
    def not_found(self) -> list[str]:
        return [e.url for e in self.http_errors if e.status == 404]

    def problems(self, allow_404: Iterable[str] = ()) -> list[str]:
        """Human-readable list of everything wrong; empty when the page is clean.

        ``allow_404`` holds URL paths (``"/favicon.ico"``), full URLs, or
        fnmatch globs of either whose 404s (and the matching console
        "Failed to load resource" errors) are tolerated.
        """
        allow = tuple(allow_404)
        out: list[str] = []
        out += [f"page error: {e}" for e in self.page_errors]
        out += [f"JS dialog ({d.type}): {d.message!r}" for d in self.dialogs]
        out += [f"external request (blocked): {u}" for u in self.external_requests]
        for e in self.http_errors:
            if not (e.status == 404 and _url_matches(e.url, allow)):
                out.append(f"HTTP {e.status}: {e.url}")
        external = set(self.external_requests)
        for f in self.failed_requests:
            if f.url not in external:
                out.append(f"request failed ({f.failure}): {f.url}")
        for m in self.console:
            if m.type != "error":
                continue
            # Chromium logs every 4xx/5xx/blocked load as a console error too;
            # those are reported above (or allowlisted), so do not double count.
            if (
                m.text.startswith("Failed to load resource")
                and m.url
                and (
                    _url_matches(m.url, allow)
                    or m.url in external
                    or any(e.url == m.url for e in self.http_errors)
                    or any(f.url == m.url for f in self.failed_requests)
                )
            ):
                continue
            out.append(f"console error: {m.text}" + (f" ({m.url})" if m.url else ""))
        return out

    def assert_clean(self, allow_404: Iterable[str] = ()) -> None:
        """Fail if the page logged errors, threw, opened dialogs, left 127.0.0.1,
        or hit a 4xx/5xx (other than allowlisted 404s)."""
        problems = self.problems(allow_404)
        if problems:
            raise AssertionError("page was not clean:\n  " + "\n  ".join(problems))


# --------------------------------------------------------------------------- pages


CHART_GEOMETRY = """() => [...document.querySelectorAll('div.sg-plot')].map(p => {
    const box = p.getBoundingClientRect(), svg = p.querySelector('.main-svg');
    const titles = [...p.querySelectorAll('.g-xtitle text, .g-ytitle text')].map(t => {
        const r = t.getBoundingClientRect(); return [r.left, r.top]; });
    return {box: [box.width, box.height], svg: svg ? svg.getBoundingClientRect().width : null,
            titles};
})"""
"""Where each chart and its axis titles are (what moves while plotly redraws)."""


class Page:
    """A tracked page in its own fresh browser context (cookies/storage isolated)."""

    def __init__(self, context: Any, block_external: bool = True) -> None:
        self.context = context
        self.report = PageReport()
        self._attach(block_external)
        self.raw = context.new_page()  # the playwright Page, for anything else

    # -- event wiring (context-level, so popups are tracked too)
    def _attach(self, block_external: bool) -> None:
        r = self.report
        ctx = self.context

        def on_console(msg: Any) -> None:
            loc = msg.location or {}
            r.console.append(ConsoleMessage(msg.type, msg.text, loc.get("url", "")))

        def on_dialog(dialog: Any) -> None:
            r.dialogs.append(DialogRecord(dialog.type, dialog.message))
            with contextlib.suppress(Exception):
                dialog.dismiss()

        def on_request(req: Any) -> None:
            r.requests.append(req.url)
            if not is_local_url(req.url):
                r.external_requests.append(req.url)

        def on_failed(req: Any) -> None:
            r.failed_requests.append(FailedRequest(req.url, req.failure or "unknown"))

        def on_response(resp: Any) -> None:
            if resp.status >= 400:
                r.http_errors.append(HttpError(resp.url, resp.status))

        def on_page(page: Any) -> None:
            page.on("pageerror", lambda exc: r.page_errors.append(str(exc)))

        ctx.on("console", on_console)
        ctx.on("dialog", on_dialog)
        ctx.on("request", on_request)
        ctx.on("requestfailed", on_failed)
        ctx.on("response", on_response)
        ctx.on("page", on_page)
        if block_external:
            ctx.route(
                lambda url: not is_local_url(url), lambda route: route.abort("blockedbyclient")
            )

    # -- navigation and interaction
    def goto(self, url: str, wait_until: str = "load") -> int | None:
        """Navigate; returns the HTTP status of the main document (None for data:/about:)."""
        resp = self.raw.goto(url, wait_until=wait_until)
        return resp.status if resp is not None else None

    def resize(self, width: int, height: int, limit_s: float = 10) -> None:
        """Lay the page out at another window size, then wait until every chart has been
        drawn again: plotly redraws a responsive chart shortly after the resize event, in
        steps, so until each chart's drawing is as wide as its box and nothing moved
        between two looks 100 ms apart."""
        self.raw.set_viewport_size({"width": width, "height": height})
        deadline = time.monotonic() + limit_s
        before = None
        while time.monotonic() < deadline:
            self.raw.wait_for_timeout(100)
            now = self.raw.evaluate(CHART_GEOMETRY)
            fitted = all(c["svg"] is not None and abs(c["svg"] - c["box"][0]) <= 1 for c in now)
            if fitted and now == before:
                return
            before = now
        raise AssertionError(f"charts still moving {limit_s} s after a resize: {before}")

    def wait_for(self, selector: str, state: str = "visible", timeout_ms: int | None = None) -> Any:
        """Wait for a CSS (or playwright) selector; returns the element handle."""
        return self.raw.wait_for_selector(selector, state=state, timeout=timeout_ms)

    def click(self, selector: str, timeout_ms: int | None = None) -> None:
        self.raw.click(selector, timeout=timeout_ms)

    def text(self, selector: str) -> str:
        return self.raw.inner_text(selector)

    def evaluate(self, expression: str, arg: Any = None) -> Any:
        return self.raw.evaluate(expression, arg)

    @property
    def href(self) -> str:
        """``location.href`` as the page itself sees it."""
        return self.raw.evaluate("() => location.href")

    def wait_for_url(self, url: str, timeout_ms: int | None = None) -> None:
        """Wait until the main frame's URL equals / glob-matches ``url``."""
        self.raw.wait_for_url(url, timeout=timeout_ms)

    def screenshot(self, path: str | os.PathLike[str], full_page: bool = True) -> Path:
        """Save a PNG screenshot (full page by default); creates parent dirs."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        self.raw.screenshot(path=str(out), full_page=full_page, type="png")
        return out

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.context.close()


CHARTS_IN_VIEW = """(() => {
    const Native = window.IntersectionObserver;
    if (!Native) return;
    window.IntersectionObserver = class extends Native {
        constructor(callback, options) { super(callback, options); this.sgCallback = callback; }
        observe(target) {
            if (!(target instanceof Element && target.matches('div.sg-plot'))) return super.observe(target);
            queueMicrotask(() => this.sgCallback(
                [{target, isIntersecting: true, intersectionRatio: 1}], this));
        }
    };
})()"""
"""A reader who has scrolled past every chart: charts.js draws a chart (and loads
plotly.js) only once it comes near the window; this reports each observed ``div.sg-plot``
in view at once, so a test waits for every chart without scrolling. Other observers
(material's) are left as they are."""


class Browser:
    """A launched Chromium; hands out isolated, tracked pages."""

    def __init__(self, pw_browser: Any, executable: str) -> None:
        self.raw = pw_browser
        self.executable = executable

    @property
    def version(self) -> str:
        return self.raw.version

    @contextlib.contextmanager
    def new_page(
        self,
        *,
        viewport: tuple[int, int] = (1280, 800),
        locale: str | None = None,
        block_external: bool = True,
        bypass_csp: bool = False,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        charts_in_view: bool = True,
        **context_kwargs: Any,
    ) -> Iterator[Page]:
        """Open a page in a fresh context; extra kwargs go to ``new_context``
        (e.g. ``color_scheme="dark"``, ``java_script_enabled=False``).

        ``bypass_csp`` ignores the pages' Content-Security-Policy (``<meta>`` and header
        alike), so a test sees what escaping alone prevents. With ``charts_in_view`` (the
        default) every chart counts as near the window from the start, so every chart
        draws without scrolling (``CHARTS_IN_VIEW``)."""
        context = self.raw.new_context(
            viewport={"width": viewport[0], "height": viewport[1]},
            locale=locale,
            service_workers="block",
            bypass_csp=bypass_csp,
            **context_kwargs,
        )
        if charts_in_view:
            context.add_init_script(CHARTS_IN_VIEW)
        context.set_default_timeout(timeout_ms)
        page = Page(context, block_external=block_external)
        try:
            yield page
        finally:
            page.close()


@contextlib.contextmanager
def open_browser(
    executable: str | None = None, extra_args: Iterable[str] = ()
) -> Iterator[Browser]:
    """Launch headless Chromium with a fresh temporary profile; yields a Browser.

    Raises ChromiumNotInstalled / PlaywrightNotInstalled with an actionable
    message when the environment lacks them.
    """
    exe = executable or find_chromium()
    sync_playwright = _import_playwright()
    # Playwright itself passes a fresh temporary --user-data-dir
    # (playwright_chromiumdev_profile-*, deleted on close; it refuses an explicit
    # --user-data-dir in args). TMPDIR keeps chromium's own temp/shm files in a
    # dir we remove ourselves, even if chromium gets killed.
    tmp = tempfile.mkdtemp(prefix="sitegen-chromium-")
    env = dict(os.environ, TMPDIR=tmp, HOME=tmp, XDG_CONFIG_HOME=tmp, XDG_CACHE_HOME=tmp)
    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(
            executable_path=exe,
            headless=True,
            args=[*CHROMIUM_ARGS, *extra_args],
            env=env,
            timeout=60_000,
        )
        try:
            yield Browser(browser, exe)
        finally:
            with contextlib.suppress(Exception):
                browser.close()
    finally:
        pw.stop()
        shutil.rmtree(tmp, ignore_errors=True)
