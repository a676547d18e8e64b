"""The agentctx MCP server: seven context tools over stdio."""
