"""`--help` in the usual Unix shape: `agentctx import [OPTIONS] FILE`, `--type <str>`, and each
command's summary in the list of commands as a whole sentence, never cut with `...`.

Typer 0.29 writes a required argument as `{file}` and a repeatable option's value as
`<list[str]>`, Python notation a user should not have to read. Two small overrides of typer's
display methods put the conventional forms back; `tests/test_cli_newcomer.py` checks every
command's help, so a typer release that renames them fails a test rather than the help.
"""

from __future__ import annotations

import re

from typer import core


def _usage_name(self: core.TyperArgument) -> str:
    """FILE, [KEY], QUERY... (upper case, brackets only when optional)."""
    name = str(self.metavar or self.name or "").upper()
    if self.nargs != 1:
        name += "..."
    return name if self.required else f"[{name}]"


# typer has no public hook for these two: this module overrides its private display methods on
# purpose (and the help test catches a release that renames them).
_typer_display_type = core._TyperParameter.display_type  # pyright: ignore[reportPrivateUsage]


def _display_type(
    self: core._TyperParameter,  # pyright: ignore[reportPrivateUsage]
    ctx: core._click.Context,  # pyright: ignore[reportPrivateUsage]  # typer 0.29 vendors click
) -> str:
    """`<str>` for a repeatable option of text, not `<list[str]>` (its help says it repeats)."""
    label = _typer_display_type(self, ctx)
    if label.startswith("<list[") and label.endswith("]>"):
        return f"<{label[len('<list[') : -len(']>')]}>"
    return label


def _short_help(self: core.TyperCommand | core.TyperGroup, limit: int = 45) -> str:
    """The first sentence of the command's help, whole (click would cut it at `limit` characters
    with `...`); the list of commands wraps it instead."""
    del limit
    if self.short_help:
        return " ".join(self.short_help.split())
    paragraph = " ".join((self.help or "").split("\n\n", 1)[0].split())
    return re.split(r"(?<=[.!?])\s", paragraph, maxsplit=1)[0]


def install() -> None:
    core.TyperCommand.get_short_help_str = _short_help
    core.TyperGroup.get_short_help_str = _short_help
    core.TyperArgument._usage_display_name = _usage_name  # pyright: ignore[reportPrivateUsage]
    core._TyperParameter.display_type = _display_type  # pyright: ignore[reportPrivateUsage]
