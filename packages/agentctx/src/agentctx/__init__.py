"""agentctx: a context layer for coding agents (the CLI and composition root)."""

__version__ = "0.1.0"
