"""Errors a user is meant to read: one sentence that says what went wrong and what to do."""

from __future__ import annotations


class AgentctxError(Exception):
    """Base for every error whose message is shown to the user as is."""


class ValidationError(AgentctxError):
    """A record, an id or a config value does not meet the contract (docs/contracts.md#records)."""


class RecordNotFound(AgentctxError):
    """No record with that id exists in the current project (or `_global`)."""


class AmbiguousIdError(RecordNotFound):
    """A short id matches several records; the message lists them."""


class NotHeadError(AgentctxError):
    """Superseding a record that is itself already superseded; carries the current head."""

    def __init__(self, message: str, *, head_id: str | None) -> None:
        super().__init__(message)
        self.head_id = head_id


class StoreError(AgentctxError):
    """The store file cannot be used: corrupt, foreign, too new, or not writable."""


class StoreLockedError(StoreError):
    """Another process holds the store's write lock for longer than the busy timeout."""
