"""The agentctx local dashboard: browse, search and correct the context store."""
