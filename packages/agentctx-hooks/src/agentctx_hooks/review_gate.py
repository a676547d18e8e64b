"""`config review = required` on the prompt path (issue 14): extraction results are then not
injected until a person accepts them (`agentctx review`, the dashboard's Inbox). Which records
those are: `agentctx_store.review.awaiting_review`.

One key of `$AGENTCTX_HOME/config.json`, read directly: `agentctx_store.upkeep.config` validates
the whole file, which a prompt does not need.
"""

from __future__ import annotations

from agentctx_store import paths
from agentctx_store.jsontext import is_object, loads


def review_required() -> bool:
    """Whether config.json (ours, by its marker) says `review = required`; False when unreadable."""
    try:
        with open(paths.config_path(), "rb") as handle:
            raw = handle.read()
    except OSError:
        return False
    if b"required" not in raw:
        return False
    try:
        data = loads(raw)
    except (ValueError, RecursionError):
        return False
    return is_object(data) and data.get("_written_by") == "agentctx" and data.get("review") == "required"
