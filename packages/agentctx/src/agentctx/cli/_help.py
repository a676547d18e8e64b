"""`--help` in the usual Unix shape: `agentctx import [OPTIONS] FILE`, `--type <str>`.

Typer 0.29 writes a required argument as `{file}` and a repeatable option's value as
`<list[str]>`, Python notation a user should not have to read. Two small overrides of typer's
display methods put the conventional forms back; `tests/test_cli_newcomer.py` checks every
command's help, so a typer release that renames them fails a test rather than the help.
"""

from __future__ import annotations

from typer import core


def _usage_name(self: core.TyperArgument) -> str:
    """FILE, [KEY], QUERY... (upper case, brackets only when optional)."""
    name = str(self.metavar or self.name or "").upper()
    if self.nargs != 1:
        name += "..."
    return name if self.required else f"[{name}]"


_typer_display_type = core._TyperParameter.display_type


def _display_type(self: core._TyperParameter, ctx: core._click.Context) -> str:  # typer 0.29 vendors click
    """`<str>` for a repeatable option of text, not `<list[str]>` (its help says it repeats)."""
    label = _typer_display_type(self, ctx)
    if label.startswith("<list[") and label.endswith("]>"):
        return f"<{label[len('<list[') : -len(']>')]}>"
    return label


def install() -> None:
    core.TyperArgument._usage_display_name = _usage_name
    core._TyperParameter.display_type = _display_type
