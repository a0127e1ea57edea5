"""mkdocs hooks of every build (``hooks`` in ``BUILD_CONFIG``)."""

from __future__ import annotations

import jinja2

from sitegen.pages import template_cache


def on_env(env: jinja2.Environment, config: object, files: object) -> jinja2.Environment:
    """The theme's templates compiled once, not at every build (``template_cache``)."""
    env.bytecode_cache = template_cache.bytecode_cache()
    return env
