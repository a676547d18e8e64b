"""Session-end extraction for agentctx: Claude Haiku turns a transcript into typed records.

`extract_session(session_id, transcript_path)` is the whole pipeline; the CLI command
`agentctx extract` calls it. It imports `anthropic` only when it actually calls the model.
"""

from agentctx_store.redact import redact, redact_text

from agentctx_extract.pipeline import Outcome, extract_session
from agentctx_extract.transcript import Transcript, Turn, read_transcript, render

__all__ = ["Outcome", "Transcript", "Turn", "extract_session", "read_transcript", "redact", "redact_text", "render"]
