"""What a remote shares (docs/remote.md#what-is-shared): projects, types, confidences, global records.

The default is the team file's set (`agentctx team export`): current project records of type
decision, convention or discovery, stated explicitly. Preferences, handovers, bug fixes, profile
entries, inferred or reinforced records and global records go only when the rule names them. A
record the store redacted (its text holds a `[REDACTED:` mark) never goes, whatever the rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentctx_store.errors import ValidationError
from agentctx_store.jsontext import is_array, is_object, strings
from agentctx_store.projects import GLOBAL_PROJECT_ID
from agentctx_store.records import CONFIDENCES, RECORD_TYPES
from agentctx_store.sharing.team import TEAM_TYPES

DEFAULT_TYPES = TEAM_TYPES
DEFAULT_CONFIDENCES = ("explicit",)
REDACTION_MARK = "[REDACTED:"


@dataclass(frozen=True, kw_only=True)
class ShareRule:
    """Which records travel to and from one remote."""

    projects: tuple[str, ...] = ()
    types: tuple[str, ...] = DEFAULT_TYPES
    confidences: tuple[str, ...] = DEFAULT_CONFIDENCES
    global_records: bool = False
    names: dict[str, str] = field(default_factory=dict[str, str])  # project id -> name, for `remote status`

    def namespaces(self) -> list[str]:
        """The server's project keys this rule reads and writes."""
        return [*self.projects, *([GLOBAL_PROJECT_ID] if self.global_records else [])]

    def covers(self, project_id: str, state: dict[str, Any]) -> bool:
        """Whether a record of `project_id` in `state` (an operation's state) is shared."""
        if project_id not in self.namespaces():
            return False
        if state.get("type") not in self.types or state.get("confidence") not in self.confidences:
            return False
        text = f"{state.get('title') or ''}\n{state.get('body') or ''}"
        return REDACTION_MARK not in text

    def widens(self, old: ShareRule) -> bool:
        """Whether this rule covers a record `old` did not (a project, type or confidence more,
        or global records)."""
        return bool(
            set(self.projects) - set(old.projects)
            or set(self.types) - set(old.types)
            or set(self.confidences) - set(old.confidences)
            or (self.global_records and not old.global_records)
        )

    def both(self, other: ShareRule) -> ShareRule:
        """The rule covering what this one and `other` both cover."""
        return ShareRule(
            projects=tuple(p for p in self.projects if p in other.projects),
            types=tuple(t for t in self.types if t in other.types),
            confidences=tuple(c for c in self.confidences if c in other.confidences),
            global_records=self.global_records and other.global_records,
            names=self.names,
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "projects": list(self.projects),
                "types": list(self.types),
                "confidences": list(self.confidences),
                "global": self.global_records,
                "names": self.names,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> ShareRule:
        value: object = json.loads(text or "{}")
        if not is_object(value):
            return cls()
        names = value.get("names")
        return cls(
            projects=_strings(value.get("projects"), ()),
            types=_strings(value.get("types"), DEFAULT_TYPES),
            confidences=_strings(value.get("confidences"), DEFAULT_CONFIDENCES),
            global_records=value.get("global") is True,
            names={str(k): str(v) for k, v in names.items()} if is_object(names) else {},
        )


def _strings(value: object, default: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(strings(value)) if is_array(value) else default


def check_rule(types: list[str], confidences: list[str]) -> None:
    """Raise on a type or confidence agentctx does not know.

    Raises:
        ValidationError: an unknown name, with the known ones.
    """
    for name in types:
        if name not in RECORD_TYPES:
            raise ValidationError(f"Unknown record type {name!r}; choose from {', '.join(RECORD_TYPES)}.")
    for name in confidences:
        if name not in CONFIDENCES:
            raise ValidationError(f"Unknown confidence {name!r}; choose from {', '.join(CONFIDENCES)}.")
