"""Claude Code hook handlers for agentctx. Imports only the standard library and agentctx-store."""
