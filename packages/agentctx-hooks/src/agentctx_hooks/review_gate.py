"""`config review = required` on the prompt path (issue 14): extraction results are then not
injected until a person accepts them (`agentctx review`, the dashboard's Inbox).

Read from `$AGENTCTX_HOME/config.json` with the C JSON scanner the hooks already use, not
through `agentctx_store.upkeep.config` (it imports `json` and `pathlib`, kept off the prompt path).
"""

from __future__ import annotations

import os

from agentctx_hooks import _fast
from agentctx_hooks._json_lite import loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentctx_store import Record

EXTRACTION_SOURCE = "llm_extraction"  # agentctx_store.review.EXTRACTION_SOURCE


def review_required() -> bool:
    """Whether config.json (ours, by its marker) says `review = required`; False when unreadable."""
    try:
        with open(os.path.join(_fast.data_home(), "config.json"), "rb") as handle:
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
    return record.source == EXTRACTION_SOURCE and record.confidence == "inferred"
