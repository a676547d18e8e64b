"""The warning the CLI prints when what you typed or imported held a secret.

The store redacts every text it is given (`agentctx_store.redact`), whoever writes; the CLI
runs the same redactor first to tell you what was replaced, on stderr, with only the kind and
the first four characters of each secret (never the secret itself: terminals are logged).
"""

from __future__ import annotations

import typer
from agentctx_store.redact import redact


def warn_redacted(*texts: str | None) -> int:
    """Warn on stderr about the secrets in `texts`; returns how many there were."""
    found: list[tuple[str, str]] = []
    for text in texts:
        if text:
            found.extend(redact(text).found)
    if found:
        shown = ", ".join(f"{kind} ({secret[:4]}…)" if len(secret) > 8 else kind for kind, secret in found)
        typer.echo(
            f"Warning: {len(found)} secret(s) replaced by [REDACTED:<kind>] before storing: {shown}. "
            "Keep secrets in a password manager or env vars, not in records.",
            err=True,
        )
    return len(found)
