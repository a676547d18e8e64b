"""Hook code that runs on demand, not on every event: the detached background runner, project
profile detection, and reading Bash output. Ordinary Python (regular expressions, json,
dataclasses); the core rule of `agentctx_hooks` (docs/architecture.md) does not apply here.
"""
