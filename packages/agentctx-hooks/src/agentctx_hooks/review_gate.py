"""`config review = required` on the prompt path (issue 14): extraction results are then not
injected until a person accepts them (`agentctx review`, the dashboard's Inbox).

One key of `$AGENTCTX_HOME/config.json`, read directly: `agentctx_store.upkeep.config` validates
the whole file, which a prompt does not need.
"""

from __future__ import annotations

from agentctx_store import paths
from agentctx_store.jsontext import loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentctx_store import Record


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
    return isinstance(data, dict) and data.get("_written_by") == "agentctx" and data.get("review") == "required"


def awaiting_review(record: Record) -> bool:
    """An extraction result nobody has accepted yet."""
    from agentctx_store.review import EXTRACTION_SOURCE

    return record.source == EXTRACTION_SOURCE and record.confidence == "inferred"
