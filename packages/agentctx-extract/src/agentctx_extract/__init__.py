"""Session-end extraction for agentctx: Claude Haiku turns a transcript into typed records."""
