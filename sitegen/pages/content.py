"""Content pages (``content/<lang>/…md``): sandboxed templates, and the figure policy.

Authors write prose in jinja2 templates that run in an immutable sandbox and see only
the directives and ``t(key)`` (catalog strings without values): no attribute of a
directive, report or record is reachable, and no figure can be computed in a template.

Every directive call is replaced by a placeholder while the template renders, so the
prose around the directives can be checked on its own (the ``prose`` checks of the rule
catalog, e.g. C-FIGURE) before the outputs are put in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

_PLACEHOLDER = "\x02sg{index}\x03"
_PLACEHOLDERS = re.compile("\x02sg(\\d+)\x03")


def content_environment(content_dir: Path) -> jinja2.Environment:
    """Content templates: an immutable sandbox with autoescape and no globals."""
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(content_dir)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.globals.clear()  # no range, dict, lipsum, cycler, joiner or namespace
    return env


@dataclass
class DirectiveCalls:
    """Outputs of the directives called while one page renders, by placeholder index."""

    outputs: list[str] = field(default_factory=list)

    def wrap(self, function: Callable[..., object]) -> Callable[..., object]:
        """A plain function (no ``__self__`` to reach the report through) that renders
        the directive and returns its placeholder. Booleans (``has_speed()``) pass as
        they are, for ``{% if %}``."""

        def call(*args: object, **kwargs: object) -> object:
            output = function(*args, **kwargs)
            if isinstance(output, bool):
                return output
            self.outputs.append(str(output))
            return Markup(_PLACEHOLDER.format(index=len(self.outputs) - 1))

        call.__name__ = getattr(function, "__name__", "directive")
        return call

    def substitute(self, text: str) -> str:
        return _PLACEHOLDERS.sub(lambda m: self.outputs[int(m.group(1))], text)


def without_directive_outputs(text: str) -> str:
    """The prose of a rendered template: every directive output replaced by a space."""
    return _PLACEHOLDERS.sub(" ", text)
