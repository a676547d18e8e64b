"""Text conventions of the agent clients that both the hooks and extraction must read the same
way (one definition, imported by `agentctx_hooks.clients.gemini` and
`agentctx_extract.client_transcripts`). Standard library only, nothing imported."""

from __future__ import annotations

HOOK_CONTEXT_OPEN = "<hook_context>"
HOOK_CONTEXT_CLOSE = "</hook_context>"


def strip_hook_context(text: str) -> str:
    """What the developer typed: Gemini CLI prepends each SessionStart hook context to the
    prompt as `<hook_context>…</hook_context>\\n\\n`. Hook text cannot close the element early:
    Gemini escapes its `<` and `>`. Text without that prefix comes back unchanged."""
    rest = text
    while rest.lstrip().startswith(HOOK_CONTEXT_OPEN):
        _, closed, after = rest.partition(HOOK_CONTEXT_CLOSE)
        if not closed:
            return text
        rest = after
    return text if rest is text else rest.lstrip("\n")
