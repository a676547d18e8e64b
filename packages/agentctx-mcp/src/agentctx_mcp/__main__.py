"""`python -m agentctx_mcp`: the same server as `agentctx mcp`, without the CLI in front."""

from __future__ import annotations

import sys

from agentctx_mcp.server import serve

if __name__ == "__main__":
    sys.exit(serve())
