"""The log files of agentctx's long-running processes: `agentctx mcp` (`mcp.log`) and the warm
search service (`service.log`), in `$AGENTCTX_HOME/logs/`.

Every line is redacted as it is written, tracebacks included: an exception's text can quote the
data that caused it (a tool's input, a record's body), and a log file is the last place a secret
should land. The hooks keep their own one-line log (`agentctx_hooks.log`), redacted the same way.
"""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from agentctx_store import paths
from agentctx_store.redact import redact_text

LOG_BYTES = 1_000_000  # then one rotation (`<name>.1`)
FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


class RedactingFormatter(logging.Formatter):
    """A formatter whose every formatted record (message, traceback, stack) is redacted."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(super().format(record))


def log_to_file(name: str) -> logging.Handler:
    """Add a rotating, redacting handler for `logs/<name>` to the root logger (a `NullHandler`
    when the directory cannot be written) and return it. A root handler also keeps libraries
    (the MCP SDK) from adding their own on stderr."""
    try:
        directory = Path(paths.logs_dir())
        directory.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            directory / name, maxBytes=LOG_BYTES, backupCount=1, encoding="utf-8"
        )
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(RedactingFormatter(FORMAT))
    logging.getLogger().addHandler(handler)
    return handler
