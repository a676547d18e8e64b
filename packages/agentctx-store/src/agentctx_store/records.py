"""The record: typed, atomic, bi-temporal (docs/contracts.md#records), and the rules a new one
must meet."""

from __future__ import annotations

from agentctx_store._frozen import field, frozen
from agentctx_store._frozen import replace as replace  # public here: a copy of a frozen record with changes
from agentctx_store.clock import utc_now as utc_now
from agentctx_store.errors import ValidationError

RECORD_TYPES: tuple[str, ...] = ("decision", "convention", "preference", "discovery", "bugfix", "handover", "profile")
CONFIDENCES: tuple[str, ...] = ("explicit", "inferred", "reinforced")
SCOPES: tuple[str, ...] = ("project", "global")
SOURCES: tuple[str, ...] = ("llm_extraction", "hook_observation", "mcp_tool", "cli", "import", "learn")

# The same choices as `Literal` types (the MCP server builds its tool schemas from them), made on
# first use (`typing` is not a core import: docs/architecture.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Literal

    RecordType = Literal["decision", "convention", "preference", "discovery", "bugfix", "handover", "profile"]
    Confidence = Literal["explicit", "inferred", "reinforced"]
    Scope = Literal["project", "global"]
    Source = Literal["llm_extraction", "hook_observation", "mcp_tool", "cli", "import", "learn"]

_LITERALS = {"RecordType": RECORD_TYPES, "Confidence": CONFIDENCES, "Scope": SCOPES, "Source": SOURCES}


def __getattr__(name: str) -> object:  # PEP 562: `RecordType`, `Confidence`, `Scope`, `Source`
    if name not in _LITERALS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Literal

    value = Literal[_LITERALS[name]]
    globals()[name] = value
    return value


MAX_TITLE_CHARS = 120
MAX_BODY_CHARS = 2000


@frozen
class Record:
    record_id: str
    project_id: str
    type: str
    title: str
    body: str
    scope: str = "project"
    pinned: bool = False
    confidence: str = "inferred"
    reinforce_count: int = 0
    valid_from: str
    recorded_at: str
    superseded_at: str | None = None
    superseded_by: str | None = None
    access_count: int = 0
    last_accessed: str | None = None
    score: float = 1.0
    claudemd_drift_score: float = 0.0
    source: str
    session_id: str | None = None
    pending_embedding: bool = True
    key: str | None = None
    updated_at: str | None = None

    @property
    def is_current(self) -> bool:
        return self.superseded_at is None

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.record_id,
            "project_id": self.project_id,
            "type": self.type,
            "title": self.title,
            "body": self.body,
            "scope": self.scope,
            "pinned": self.pinned,
            "confidence": self.confidence,
            "reinforce_count": self.reinforce_count,
            "valid_from": self.valid_from,
            "recorded_at": self.recorded_at,
            "superseded_at": self.superseded_at,
            "superseded_by": self.superseded_by,
            "access_count": self.access_count,
            "last_accessed": self.last_accessed,
            "score": self.score,
            "claudemd_drift_score": self.claudemd_drift_score,
            "source": self.source,
            "session_id": self.session_id,
            "key": self.key,
            "updated_at": self.updated_at,
        }


@frozen
class NewRecord:
    """What a caller supplies; the store fills ids, timestamps and derived fields."""

    type: str
    title: str
    body: str
    scope: str = "project"
    confidence: str = "explicit"
    source: str = "cli"
    session_id: str | None = None
    pinned: bool = False
    valid_from: str | None = None
    key: str | None = None
    reinforce_count: int = 0
    extra: dict[str, object] = field(default_factory=dict[str, object])


def trust_mark(record: Record) -> str:
    """How a record's trust shows wherever it is handed to an agent: inferred ones are
    visibly unconfirmed."""
    if record.confidence == "inferred":
        return " (unconfirmed — inferred, not stated by the developer)"
    return ""


def parse_time(value: str) -> datetime:
    """ISO 8601 (date or datetime, `Z` or offset) → aware UTC datetime.

    Raises:
        ValidationError: the text is not an ISO 8601 date or time.
    """
    from datetime import UTC, datetime  # not at import: the prompt hook never needs it (clock.py)

    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationError(
            f"{value!r} is not an ISO 8601 date or time; use e.g. 2026-03-01 or 2026-03-01T12:00Z."
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # e.g. 0001-01-01T00:00+01:00 falls before year 1 in UTC
        raise ValidationError(f"{value!r} is out of range; use a date between years 1 and 9999.") from None


def normalize_time(value: str) -> str:
    return parsed_to_text(parse_time(value))


def as_of_moment(value: str) -> str:
    """An `--as-of` value as a UTC time: a bare date (2026-12-01) means the end of that day,
    so the day's own records count; a time is taken as given.

    Raises:
        ValidationError: empty, or not an ISO 8601 date or time.
    """
    text = value.strip()
    if not text:
        raise ValidationError("--as-of is empty; give a date such as 2026-03-01 or a time such as 2026-03-01T12:00Z.")
    moment = parse_time(text)
    if len(text) == 10:  # a bare date (YYYY-MM-DD): its last millisecond
        from datetime import timedelta

        moment += timedelta(days=1, milliseconds=-1)
    return parsed_to_text(moment)


def parsed_to_text(moment: datetime) -> str:
    from datetime import UTC

    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def check_type(value: str) -> str:
    if value not in RECORD_TYPES:
        raise ValidationError(f"Unknown record type {str(value)[:40]!r}; use one of: {', '.join(RECORD_TYPES)}.")
    return value


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValidationError(f"Invalid {name} {str(value)[:40]!r}; use one of: {', '.join(choices)}.")
    return value


KEYED_TYPES: tuple[str, ...] = ("handover", "profile")


def supersession_error(old_type: str, old_key: str | None, new_type: str, new_key: str | None) -> str | None:
    """Why a `new_type` record may not supersede an `old_type` one, or None when it may.

    A fact may change type when it is replaced (a convention becomes a decision); the keyed
    types keep their rule: a handover only by a handover, a profile key only by the same key.
    """
    if old_type == new_type:
        if old_type == "profile" and old_key != new_key:
            return f"a profile entry is superseded only by the same key ({old_key!r}, not {new_key!r})"
        return None
    keyed = next((kind for kind in (old_type, new_type) if kind in KEYED_TYPES), None)
    return None if keyed is None else f"a {keyed} is superseded only by a {keyed}, and supersedes only a {keyed}"


def check_text(title: str, body: str) -> tuple[str, str]:
    """Title and body limits of a record (docs/contracts.md#records), after trimming whitespace and
    redacting secrets (every record write passes here: add, supersede, edit, import)."""
    from agentctx_store.redact import redact_text  # not at the top: `re` stays off the prompt path

    title, body = title.strip(), body.strip()
    if not title:
        raise ValidationError("The title is empty; give the record a one-line title.")
    if len(title) > MAX_TITLE_CHARS:
        raise ValidationError(
            f"The title is {len(title)} characters; the limit is {MAX_TITLE_CHARS}. Shorten it and move detail to the body."
        )
    if "\n" in title:
        raise ValidationError("The title spans several lines; keep it to one line and move detail to the body.")
    if not body:
        raise ValidationError("The body is empty; say what the record means in a sentence or two.")
    if len(body) > MAX_BODY_CHARS:
        raise ValidationError(
            f"The body is {len(body)} characters; the limit is {MAX_BODY_CHARS}. "
            "Split it into atomic records (one fact each)."
        )
    return redact_text(title), redact_text(body)  # the limits hold what was given; a mark may be longer


def check_fields(type: str, scope: str, confidence: str, source: str, title: str, body: str) -> tuple[str, str]:
    """The record contract on a record's choices and text, for a new record and an imported
    one alike; returns the title and body trimmed.

    Raises:
        ValidationError: invalid type, scope, confidence or source, or text over the limits.
    """
    check_type(type)
    check_choice("scope", scope, SCOPES)
    check_choice("confidence", confidence, CONFIDENCES)
    check_choice("source", source, SOURCES)
    return check_text(title, body)


def validate(new: NewRecord) -> NewRecord:
    """Check a new record against the contract; returns it with trimmed text.

    Raises:
        ValidationError: invalid type, scope, confidence or source, or text over the limits.
    """
    title, body = check_fields(new.type, new.scope, new.confidence, new.source, new.title, new.body)
    if new.valid_from is not None:
        normalize_time(new.valid_from)
    return replace(new, title=title, body=body)
