"""The review inbox (issue 14): what nobody has confirmed yet, for a person to accept, correct
or reject. `agentctx review` and the dashboard's Inbox view both call these functions.

The inbox holds a project's current `inferred` records (and the `_global` ones it sees),
newest first: by default those session-end extraction wrote and the team file's blocks that
would have changed a private record (`sharing.team`), with `everything=True` also the
ones hooks observed or tools recorded as inferred. Handovers are left out: each session's
replaces the last, and the digest already shows it marked as unconfirmed. Explicit records
(`agentctx record`, `ctx_record`) never enter it.

- accept: the record becomes `explicit` (a person stated it), so it reaches the digest and,
  with `review = required`, prompt injection;
- edit: correct its title or body, which accepts it too;
- reject: delete it for good (`Store.delete`, which closes its chain over the gap).
"""

from __future__ import annotations

from agentctx_store import paths
from agentctx_store.jsontext import is_object, loads

TYPE_CHECKING = False
if TYPE_CHECKING:  # the prompt path reads the setting without loading the store
    from agentctx_store.projects import Project
    from agentctx_store.records import Record
    from agentctx_store.store import Store

EXTRACTION_SOURCE = "llm_extraction"
# What waits for a person by default: extraction's guesses, and a team file's block that would
# have changed a private record (`sharing.team`: kept as an inferred record from `import`).
REVIEWED_SOURCES = (EXTRACTION_SOURCE, "import")
NOT_REVIEWED = ("handover",)


def review_required() -> bool:
    """Whether `agentctx config review required` is set: config.json (ours, by its marker) says
    `review = required`; False when it is missing or unreadable. One key, read directly: the
    prompt path (the hook's keyword path, the warm service) does not need
    `agentctx_store.config` to validate the whole file."""
    try:
        with open(paths.config_path(), "rb") as handle:
            raw = handle.read()
    except OSError:
        return False
    if b"required" not in raw:
        return False
    try:
        data = loads(raw)
    except (ValueError, RecursionError):
        return False
    return is_object(data) and data.get("_written_by") == "agentctx" and data.get("review") == "required"


def awaiting_review(record: Record) -> bool:
    """An extraction result (or a team block kept for review) nobody has accepted yet: what
    `review = required` keeps out of prompts (the hook's keyword path and the warm service alike)."""
    return record.source in REVIEWED_SOURCES and record.confidence == "inferred"


def inbox(store: Store, project: Project, *, everything: bool = False, limit: int | None = None) -> list[Record]:
    """Unconfirmed current records of the project and `_global`, newest first."""
    found = [
        record
        for record in store.list_records(project, confidence="inferred")
        if record.type not in NOT_REVIEWED and (everything or record.source in REVIEWED_SOURCES)
    ]
    return found[:limit] if limit is not None else found


def accept(
    store: Store, project: Project, record_id: str, *, title: str | None = None, body: str | None = None
) -> Record:
    """Confirm a record (optionally corrected first): it becomes `explicit`.

    Raises:
        RecordNotFound: no such current record in this project.
        ValidationError: the corrected title or body breaks the record contract.
    """
    store.get(project, record_id)  # current only: a superseded record is history, not a claim to confirm
    return store.edit(project, record_id, title=title, body=body, confidence="explicit")


def reject(store: Store, project: Project, record_id: str) -> Record:
    """Delete a wrong record for good; returns what was deleted.

    Raises:
        RecordNotFound: no such record in this project.
    """
    return store.delete(project, record_id)
