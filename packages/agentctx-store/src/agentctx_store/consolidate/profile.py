"""The developer profile (docs/adr/0010-developer-profile.md): cross-project preferences in the
reserved `_global` namespace, and their export to `$AGENTCTX_HOME/profile/` (derived: rewritten on
demand and by every consolidation run).

Inferred global preferences become `reinforced` once seen `reinforce_threshold` times (config,
default 3) or confirmed by one explicit statement; only reinforced and explicit ones reach the
SessionStart digest.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentctx_store import paths
from agentctx_store.files import atomic_write
from agentctx_store.projects import global_project
from agentctx_store.records import Record, utc_now
from agentctx_store.store import Store

CONFIDENCE_ORDER = {"explicit": 0, "reinforced": 1, "inferred": 2}


def preferences(store: Store) -> list[Record]:
    """Current global preferences: explicit first, then reinforced, then inferred; newest first."""
    records = store.list_records(global_project(), scope="global")
    return sorted(records, key=lambda record: CONFIDENCE_ORDER.get(record.confidence, 3))


def promote_reinforced(store: Store, threshold: int) -> int:
    """Apply the configured threshold to records already counted (e.g. after lowering it).
    One-way (docs/contracts.md#confidence): nothing is ever demoted."""
    return store.promote_reinforced(threshold)


def profile_dir() -> Path:
    return Path(paths.home()) / "profile"


def render_markdown(records: list[Record], threshold: int) -> str:
    lines = [
        "# Developer profile",
        "",
        f"Exported by agentctx at {utc_now()}. Derived from the store: edit with `agentctx profile edit ID`,",
        "remove with `agentctx profile clear ID`; hand edits here are overwritten.",
        "",
    ]
    for confidence, heading in (
        ("explicit", "Stated by you"),
        ("reinforced", f"Reinforced (seen in ≥ {threshold} sessions)"),
        ("inferred", "Inferred, not yet reinforced (not injected at session start)"),
    ):
        group = [record for record in records if record.confidence == confidence]
        if not group:
            continue
        lines.extend([f"## {heading}", ""])
        for record in group:
            body = " ".join(record.body.split())
            seen = f" (seen {record.reinforce_count}×)" if confidence == "inferred" else ""
            lines.append(f"- **{record.title}**{seen}: {body} `{record.record_id}`")
        lines.append("")
    if not records:
        lines.append("No global preferences yet.")
    return "\n".join(lines).rstrip() + "\n"


def export(store: Store, threshold: int, folder: Path | None = None) -> list[Path]:
    """Write `preferences.md` and `preferences.json` into the profile folder, atomically."""
    target = folder or profile_dir()
    records = preferences(store)
    files = {
        target / "preferences.md": render_markdown(records, threshold),
        target / "preferences.json": json.dumps([record.to_dict() for record in records], indent=2) + "\n",
    }
    for path, text in files.items():
        atomic_write(path, text)
    return list(files)
