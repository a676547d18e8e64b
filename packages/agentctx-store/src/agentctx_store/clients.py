"""The coding agents agentctx serves, and what every package needs to know about each of them.

This is the one list of clients: `agentctx hook --client` accepts the names here and maps each
client's hook events to ours with `events`; the MCP server takes `AGENTCTX_CLIENT` from them;
`agentctx extract --client` picks the transcript reader by `transcript`; the CLI lists, installs
and checks them in this order. What a client needs beyond these facts sits next to its name in
two places: `agentctx/cli/clients/<name>.py` (its config files: what `init` writes, `uninstall`
restores, `status` and `doctor` read) and, when its payloads are not shaped like Claude Code's,
`agentctx_hooks/clients/<name>.py` (how they become ours, and how our answer is printed).

Claude Code is the reference client (`DEFAULT`): our event names, payloads and output are its own,
and `agentctx init` without `--client` sets it up.

Imported by every hook process, so nothing is imported here and the entries are plain objects.
"""

from __future__ import annotations

# The events `agentctx hook` implements, by Claude Code's names (each client maps its own to these).
HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "CwdChanged",
    "SubagentStart",
    "PreCompact",
    "Stop",
    "SessionEnd",
)


class UnknownClient(ValueError):
    """A client name agentctx does not support."""


class Client:
    """One coding agent.

    - `name`: how it is named on the command line (`--client`), in `AGENTCTX_CLIENT` and in the
      provenance of what it recorded; `label`: for people; `binary`: its command on PATH, and
      `install`: how to get it.
    - `transcript`: the transcript format `agentctx extract` reads for its sessions (a reader in
      `agentctx_extract/client_transcripts.py`), `transcript_name`: what that file is to a user.
    - `events`: its hook event names -> ours (`HOOK_EVENTS`). An event the client has that agentctx
      does not use maps to "" (ignored quietly); a name not in the map is unknown (one log line).

    Read-only. Written out rather than `@frozen`, which compiles an `__init__` in each process:
    every hook imports this module.
    """

    __slots__ = ("name", "label", "binary", "install", "transcript", "transcript_name", "events")
    name: str
    label: str
    binary: str
    install: str
    transcript: str
    transcript_name: str
    events: dict[str, str]

    def __init__(
        self,
        *,
        name: str,
        label: str,
        binary: str,
        install: str,
        transcript: str,
        transcript_name: str,
        events: dict[str, str],
    ) -> None:
        for slot, value in zip(
            Client.__slots__, (name, label, binary, install, transcript, transcript_name, events), strict=True
        ):
            object.__setattr__(self, slot, value)

    def __setattr__(self, name: str, value: object) -> None:
        from agentctx_store._frozen import frozen_error

        raise frozen_error(name)

    def __repr__(self) -> str:
        return f"Client(name={self.name!r}, label={self.label!r})"

    def uses(self, native_event: str) -> bool:
        """Whether agentctx handles this event of the client (False for an unknown one too)."""
        return bool(self.events.get(native_event))


CLIENTS: dict[str, Client] = {
    client.name: client
    for client in (
        Client(
            name="claude",
            label="Claude Code",
            binary="claude",
            install="npm install -g @anthropic-ai/claude-code",
            transcript="claude",
            transcript_name="a session .jsonl",
            events={event: event for event in HOOK_EVENTS},
        ),
        Client(
            name="codex",
            label="Codex CLI",
            binary="codex",
            install="npm install -g @openai/codex",
            transcript="codex",
            transcript_name="a rollout",
            events={
                "SessionStart": "SessionStart",  # startup / resume / fork / compact
                "UserPromptSubmit": "UserPromptSubmit",
                "PostToolUse": "PostToolUse",
                "PreCompact": "PreCompact",  # followed by SessionStart(compact), which re-injects the snapshot
                "Stop": "Stop",
                "SessionEnd": "SessionEnd",
                # events Codex has that agentctx does not use (never registered; quiet if they come anyway)
                "PreToolUse": "",
                "PermissionRequest": "",
                "PostCompact": "",
                "PreModelRequest": "",
                "PostModelRequest": "",
                "SubagentStart": "",
                "SubagentStop": "",
                "Interrupt": "",
            },
        ),
        Client(
            name="gemini",
            label="Gemini CLI",
            binary="gemini",
            install="npm install -g @google/gemini-cli",
            transcript="gemini",
            transcript_name="a chat recording",
            events={
                "SessionStart": "SessionStart",  # startup / resume (/ clear, interactive)
                "BeforeAgent": "UserPromptSubmit",
                "AfterTool": "PostToolUse",
                "AfterAgent": "Stop",
                "SessionEnd": "SessionEnd",
                # events Gemini has that agentctx does not use (never registered; quiet if they come anyway)
                "PreCompress": "",  # before every model call: a snapshot here would be taken every turn
                "BeforeModel": "",
                "AfterModel": "",
                "BeforeToolSelection": "",
                "BeforeTool": "",
                "Notification": "",
            },
        ),
    )
}
DEFAULT = "claude"  # the reference client: what a hook without `--client` and `agentctx init` serve


def names() -> tuple[str, ...]:
    """Every client's name, in the order the CLI lists them."""
    return tuple(CLIENTS)


def get(name: str) -> Client:
    """The client called `name`.

    Raises:
        UnknownClient: no client has that name (the message lists the ones there are).
    """
    client = CLIENTS.get(name)
    if client is None:
        raise UnknownClient(f"unknown client {name!r}; supported: {', '.join(CLIENTS)}")
    return client


def others() -> list[Client]:
    """Every client but the default one, in order (what `status` lists as "Other clients")."""
    return [client for name, client in CLIENTS.items() if name != DEFAULT]
