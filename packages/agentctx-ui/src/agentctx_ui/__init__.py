"""The agentctx local dashboard: browse, search and correct the context store."""

__version__ = "0.1.0"
