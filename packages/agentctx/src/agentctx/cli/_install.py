"""The one install hint every message gives (`doctor`, `status`, `ui`, `models download`).

Until agentctx is published on PyPI under its own name, the name `agentctx` there belongs to an
unrelated package: a hint never says `pip install agentctx` bare. It installs from a checkout,
or from the wheels `scripts/build-dist` puts in `dist/` (docs/install.md).
"""

from __future__ import annotations

# Where `uv tool install` takes agentctx from: the CLI's package in a checkout.
INSTALL_SOURCE = "./packages/agentctx"


def install_command(extra: str | None = None) -> str:
    """The command that installs agentctx (with `extra`, e.g. `ui`, `embeddings`), and its
    offline alternative from built wheels."""
    source = f"{INSTALL_SOURCE}[{extra}]" if extra else INSTALL_SOURCE
    wheels = f"agentctx[{extra}]" if extra else "agentctx"
    return (
        f"uv tool install --reinstall --compile-bytecode '{source}' in an agentctx checkout "
        f"(or, from the wheels of scripts/build-dist: pipx install --pip-args='--no-index --find-links dist' '{wheels}'; "
        "the `agentctx` on PyPI is another project)"
    )
