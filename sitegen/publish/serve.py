"""``sitegen serve``: the built site over HTTP on 127.0.0.1, for a preview before
publishing (the root redirect, the version selector and search need HTTP, not files)."""

from __future__ import annotations

import functools
import mimetypes
import os
from collections.abc import Callable
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from sitegen.core.errors import ConfigError

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".gz": "application/gzip",
    ".parquet": "application/vnd.apache.parquet",
    ".csv": "text/csv; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}
"""Types by suffix, whatever the host's own MIME table says (some lack ``.json`` or give
``.js`` a legacy type that a strict browser refuses for scripts)."""


class _SiteHandler(SimpleHTTPRequestHandler):
    extensions_map = {**mimetypes.types_map, **CONTENT_TYPES}

    def log_message(self, format: str, *args: object) -> None:
        pass  # a preview, not a log: errors reach the browser

    def send_head(self):
        """Not found for anything whose real path is outside the site folder: a symbolic
        link inside the site (to a file, a folder or a folder's index) is never followed
        out of it."""
        path = self.translate_path(self.path)
        targets = [path]
        if os.path.isdir(path):
            targets += [os.path.join(path, index) for index in ("index.html", "index.htm")]
        if not all(_inside(target, self.directory) for target in targets):
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        return super().send_head()


def _inside(path: str, folder: str) -> bool:
    """Whether ``path``, its links resolved, is ``folder`` or in it (resolved too)."""
    real, root = os.path.realpath(path), os.path.realpath(folder)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def serve_site(site_dir: Path, port: int = 8000, ready: Callable[[str], None] = print) -> None:
    """Serve ``site_dir`` on 127.0.0.1:``port`` (0: any free port) until interrupted;
    ``ready`` receives the URL once the server listens."""
    if not (site_dir / "index.html").is_file():
        raise ConfigError(
            f"{site_dir}: no built site here (no index.html); run 'sitegen build' first"
        )
    handler = functools.partial(_SiteHandler, directory=str(site_dir))
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise ConfigError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from exc
    with server:
        ready(f"http://127.0.0.1:{server.server_address[1]}/")
        server.serve_forever()
