"""The extraction output contract (docs/contracts.md#extraction): the JSON schema the model must
fill, and its validation.

The model is forced to answer through a tool whose `input_schema` is `OUTPUT_SCHEMA`, but its
answer is still checked here with plain code: a top-level shape that is wrong makes the whole
answer unusable (`MalformedOutput`); a single bad entry is dropped with a reason and the rest
is kept.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from agentctx_store.jsontext import is_array, is_object
from agentctx_store.records import MAX_BODY_CHARS

CONFIDENCE = ("explicit", "inferred")
CATEGORIES = ("style", "tooling", "process", "naming")
PREFERENCE_SCOPES = ("project", "global")
CONVENTION_SCOPES = ("file", "module", "project")
MAX_ENTRIES = 25  # per category: more than this from one session is noise, not facts
MAX_LIST_ITEMS = 10

_TEXT = {"type": "string", "minLength": 1, "maxLength": MAX_BODY_CHARS}
_CONFIDENCE = {"type": "string", "enum": list(CONFIDENCE)}
_TEXT_LIST = {"type": "array", "items": {"type": "string"}, "maxItems": MAX_LIST_ITEMS}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decisions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "what": _TEXT,
                    "rationale": {"type": "string"},
                    "supersedes": {"type": ["string", "null"]},
                    "confidence": _CONFIDENCE,
                },
                "required": ["what", "rationale", "supersedes", "confidence"],
            },
        },
        "preferences": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "category": {"type": "string", "enum": list(CATEGORIES)},
                    "rule": _TEXT,
                    "confidence": _CONFIDENCE,
                    "scope": {"type": "string", "enum": list(PREFERENCE_SCOPES)},
                },
                "required": ["category", "rule", "confidence", "scope"],
            },
        },
        "conventions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "scope": {"type": "string", "enum": list(CONVENTION_SCOPES)},
                    "convention": _TEXT,
                    "confidence": _CONFIDENCE,
                },
                "required": ["scope", "convention", "confidence"],
            },
        },
        "active_work": {
            "type": "object",
            "properties": {
                "current_task": {"type": "string"},
                "blockers": _TEXT_LIST,
                "next_steps": _TEXT_LIST,
                "open_questions": _TEXT_LIST,
            },
            "required": ["current_task", "blockers", "next_steps", "open_questions"],
        },
        "gotchas": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"pattern": _TEXT, "why_it_matters": {"type": "string"}},
                "required": ["pattern", "why_it_matters"],
            },
        },
        "flush_ok": {"type": "boolean"},
    },
    "required": ["decisions", "preferences", "conventions", "active_work", "gotchas", "flush_ok"],
}


class MalformedOutput(ValueError):
    """The model's answer does not have the contract's shape at all; nothing of it can be used."""


@dataclass(frozen=True, kw_only=True)
class Decision:
    what: str
    rationale: str
    supersedes: str | None
    confidence: str


@dataclass(frozen=True, kw_only=True)
class Preference:
    category: str
    rule: str
    confidence: str
    scope: str


@dataclass(frozen=True, kw_only=True)
class Convention:
    scope: str
    convention: str
    confidence: str


@dataclass(frozen=True, kw_only=True)
class ActiveWork:
    current_task: str
    blockers: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.current_task or self.blockers or self.next_steps or self.open_questions)


@dataclass(frozen=True, kw_only=True)
class Gotcha:
    pattern: str
    why_it_matters: str


@dataclass(frozen=True, kw_only=True)
class Extraction:
    decisions: tuple[Decision, ...] = ()
    preferences: tuple[Preference, ...] = ()
    conventions: tuple[Convention, ...] = ()
    active_work: ActiveWork | None = None
    gotchas: tuple[Gotcha, ...] = ()
    flush_ok: bool = False
    dropped: tuple[str, ...] = field(default=())  # why entries were dropped, for the log

    def to_json(self) -> dict[str, Any]:
        """The contract's shape again (what a synthesis call is given)."""
        work = self.active_work or ActiveWork(current_task="")
        return {
            "decisions": [asdict(item) for item in self.decisions],
            "preferences": [asdict(item) for item in self.preferences],
            "conventions": [asdict(item) for item in self.conventions],
            "active_work": {
                "current_task": work.current_task,
                "blockers": list(work.blockers),
                "next_steps": list(work.next_steps),
                "open_questions": list(work.open_questions),
            },
            "gotchas": [asdict(item) for item in self.gotchas],
            "flush_ok": self.flush_ok,
        }


class _EntryError(ValueError):
    pass


def _text(entry: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = entry.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise _EntryError(f"{key} is not a string")
    value = value.strip()
    if required and not value:
        raise _EntryError(f"{key} is empty")
    if len(value) > MAX_BODY_CHARS:
        raise _EntryError(f"{key} is {len(value)} chars, over the {MAX_BODY_CHARS} limit")
    return value


def _choice(entry: dict[str, Any], key: str, choices: tuple[str, ...]) -> str:
    value = entry.get(key)
    if value not in choices:
        raise _EntryError(f"{key} {value!r} is not one of {', '.join(choices)}")
    return str(value)


def _text_list(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not is_array(value) or not all(isinstance(item, str) for item in value):
        raise MalformedOutput(f"active_work.{key} is not a list of strings")
    texts: list[str] = value
    return tuple(item.strip() for item in texts if item.strip())[:MAX_LIST_ITEMS]


def _decision(entry: dict[str, Any]) -> Decision:
    supersedes = entry.get("supersedes")
    if supersedes is not None and not isinstance(supersedes, str):
        raise _EntryError("supersedes is neither a record id nor null")
    return Decision(
        what=_text(entry, "what"),
        rationale=_text(entry, "rationale", required=False),
        supersedes=(supersedes or "").strip() or None,
        confidence=_choice(entry, "confidence", CONFIDENCE),
    )


def _preference(entry: dict[str, Any]) -> Preference:
    return Preference(
        category=_choice(entry, "category", CATEGORIES),
        rule=_text(entry, "rule"),
        confidence=_choice(entry, "confidence", CONFIDENCE),
        scope=_choice(entry, "scope", PREFERENCE_SCOPES),
    )


def _convention(entry: dict[str, Any]) -> Convention:
    return Convention(
        scope=_choice(entry, "scope", CONVENTION_SCOPES),
        convention=_text(entry, "convention"),
        confidence=_choice(entry, "confidence", CONFIDENCE),
    )


def _gotcha(entry: dict[str, Any]) -> Gotcha:
    return Gotcha(pattern=_text(entry, "pattern"), why_it_matters=_text(entry, "why_it_matters", required=False))


_PARSERS = {"decisions": _decision, "preferences": _preference, "conventions": _convention, "gotchas": _gotcha}


def parse_extraction(data: Any) -> Extraction:
    """Validate a model answer against the output contract, dropping bad entries one by one.

    Raises:
        MalformedOutput: not an object, a required key missing, or a category that is not a list.
    """
    if not is_object(data):
        raise MalformedOutput(f"the answer is a {type(data).__name__}, not an object")
    missing = [key for key in OUTPUT_SCHEMA["required"] if key not in data]
    if missing:
        raise MalformedOutput(f"the answer lacks {', '.join(missing)}")
    if not isinstance(data["flush_ok"], bool):
        raise MalformedOutput("flush_ok is not a boolean")
    dropped: list[str] = []
    parsed: dict[str, list[Any]] = {}
    for key, parse in _PARSERS.items():
        entries = data[key]
        if not is_array(entries):
            raise MalformedOutput(f"{key} is not a list")
        kept: list[Any] = []
        for index, entry in enumerate(entries):
            if len(kept) >= MAX_ENTRIES:
                dropped.append(f"{key}[{index}]: over {MAX_ENTRIES} entries")
                continue
            try:
                if not is_object(entry):
                    raise _EntryError("not an object")
                item = parse(entry)
            except _EntryError as exc:
                dropped.append(f"{key}[{index}]: {exc}")
                continue
            if item not in kept:  # the same fact twice in one answer
                kept.append(item)
        parsed[key] = kept
    work = data["active_work"]
    if work is not None and not is_object(work):
        raise MalformedOutput("active_work is not an object")
    active: ActiveWork | None = None
    if work:
        task = work.get("current_task") or ""
        if not isinstance(task, str):
            raise MalformedOutput("active_work.current_task is not a string")
        active = ActiveWork(
            current_task=task.strip(),
            blockers=_text_list(work.get("blockers"), "blockers"),
            next_steps=_text_list(work.get("next_steps"), "next_steps"),
            open_questions=_text_list(work.get("open_questions"), "open_questions"),
        )
        if active.is_empty:
            active = None
    return Extraction(
        decisions=tuple(parsed["decisions"]),
        preferences=tuple(parsed["preferences"]),
        conventions=tuple(parsed["conventions"]),
        active_work=active,
        gotchas=tuple(parsed["gotchas"]),
        flush_ok=data["flush_ok"],
        dropped=tuple(dropped),
    )
