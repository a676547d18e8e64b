"""The client registry: each client once, its events mapped onto the ones `agentctx hook` implements."""

from __future__ import annotations

import dataclasses

import pytest

from agentctx_store import clients


def test_each_client_is_listed_once_under_its_name() -> None:
    assert clients.names() == ("claude", "codex", "gemini")  # the order the CLI lists them
    assert all(client.name == name for name, client in clients.CLIENTS.items())
    assert len({client.label for client in clients.CLIENTS.values()}) == len(clients.CLIENTS)
    assert [client.name for client in clients.others()] == ["codex", "gemini"]


def test_the_default_client_speaks_our_events() -> None:
    """Claude Code is the reference: its event names are ours, one for one."""
    assert clients.get(clients.DEFAULT).events == {event: event for event in clients.HOOK_EVENTS}


@pytest.mark.parametrize("name", clients.names())
def test_every_event_maps_to_one_of_ours_or_to_nothing(name: str) -> None:
    client = clients.get(name)
    assert set(client.events.values()) <= {*clients.HOOK_EVENTS, ""}
    assert {"SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd"} <= set(client.events.values())
    assert all(client.uses(native) == bool(ours) for native, ours in client.events.items())
    assert not client.uses("NoSuchEvent")


def test_an_unknown_client_names_the_supported_ones() -> None:
    with pytest.raises(clients.UnknownClient, match=r"^unknown client 'cursor'; supported: claude, codex, gemini$"):
        clients.get("cursor")
    assert issubclass(clients.UnknownClient, ValueError)


def test_an_entry_is_read_only() -> None:
    client = clients.get("gemini")
    with pytest.raises(dataclasses.FrozenInstanceError):
        client.label = "Gemini"
    assert repr(client) == "Client(name='gemini', label='Gemini CLI')"
