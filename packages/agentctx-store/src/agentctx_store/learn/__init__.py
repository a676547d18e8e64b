"""Learning from what a project already wrote: ADRs, agent instruction files, Claude Code's
auto-memory (see `apply` for how re-runs stay idempotent). Offline: never on the hook path."""

from agentctx_store.learn.apply import Action, Item, LearnPlan, apply_plan, learn, plan_learn
from agentctx_store.learn.discover import Found, Source, discover, find, memory_dir

__all__ = [
    "Action", "Found", "Item", "LearnPlan", "Source", "apply_plan", "discover", "find", "learn", "memory_dir", "plan_learn",
]  # fmt: skip
