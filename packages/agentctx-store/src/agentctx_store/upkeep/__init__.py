"""The store's offline half: consolidation, digests, drift, freshness checks, transfer, teams,
learning from a project's docs, configuration.

Nothing here runs on a prompt. Ordinary Python is the norm (dataclasses, pathlib, json,
contextlib); the rule that keeps the top of `agentctx_store` light does not apply.
"""
