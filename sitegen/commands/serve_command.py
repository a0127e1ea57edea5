"""``sitegen serve``: the built site on 127.0.0.1, to preview it as it will be hosted."""

from __future__ import annotations

import argparse


def serve(args: argparse.Namespace) -> None:
    """Serve ``--site`` on ``--port`` until Ctrl+C, which ends it without a traceback."""
    from sitegen.publish.serve import serve_site

    def ready(url: str) -> None:
        print(f"serving {args.site} at {url} (Ctrl+C stops)", flush=True)

    try:
        serve_site(args.site, args.port, ready)
    except KeyboardInterrupt:
        print("stopped")
