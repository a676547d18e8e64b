"""The package's public surface, pinned: changing it is a deliberate act."""

from __future__ import annotations

import agentctx_extract


def test_public_names() -> None:
    assert sorted(agentctx_extract.__all__) == [
        "Outcome",
        "Transcript",
        "Turn",
        "extract_session",
        "read_transcript",
        "redact",
        "redact_text",
        "render",
    ]
    for name in agentctx_extract.__all__:
        assert getattr(agentctx_extract, name) is not None
