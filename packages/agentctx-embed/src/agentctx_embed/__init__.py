"""Offline embeddings and consolidation helpers for agentctx (fastembed, sqlite-vec)."""
