"""`agentctx init / uninstall --client`, `status` and `doctor` for Codex CLI and Gemini CLI:
bad input is one line that says what to do, and nothing is changed (issue 20)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest


def fake_binary(folder: Path, name: str) -> None:
    """A stand-in `codex` / `gemini` on PATH: init only checks that the client is installed."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\necho 0.0.0\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin:/bin")
    return folder


def one_line_error(result, *fragments: str) -> None:
    assert result.code == 1, (result.out, result.err)
    assert result.err.startswith("Error: ") and len(result.err.strip().splitlines()) == 1, result.err
    for fragment in fragments:
        assert fragment in result.err, result.err


def test_unknown_client_names_the_supported_ones(cli, project_dir: Path) -> None:
    one_line_error(cli("init", "--client", "cursor", "--dir", str(project_dir)), "'cursor'", "claude, codex, gemini")
    one_line_error(cli("uninstall", "--client", "cursor"), "claude, codex, gemini")


def test_one_rule_for_a_client_that_is_not_installed(
    cli, project_dir: Path, on_path: Path, isolated_home: Path
) -> None:
    """Issue 33 item 5: every client named is registered before it is installed, with the same one
    line saying so; `--client all` (every client on PATH) finds none and says to name one."""
    all_of_them = cli("init", "--client", "all", "--dir", str(project_dir), "--no-learn")
    one_line_error(all_of_them, "none of claude, codex, gemini", "name the one to register with --client")
    assert not (isolated_home / ".codex").exists() and not (isolated_home / ".claude").exists()
    for name, label, written in (
        ("codex", "Codex CLI", ".codex/hooks.json"),
        ("gemini", "Gemini CLI", ".gemini/settings.json"),
        ("claude", "Claude Code", ".claude/settings.json"),
    ):
        done = cli("init", "--client", name, "--dir", str(project_dir), "--no-learn")
        assert done.code == 0, done.err
        note = f"{label}: not installed (`{name}` is not on PATH); registered anyway, in effect once you install it"
        assert note in done.out, done.out
        assert (isolated_home / written).is_file()
        fake_binary(on_path, name)
        again = cli("init", "--client", name, "--dir", str(project_dir), "--no-learn")
        assert again.code == 0 and "not installed" not in again.out, again.out
    assert "whether or not its CLI is installed" in " ".join(cli("init", "--help").out.split())


def test_init_and_uninstall_codex_and_gemini(cli, project_dir: Path, on_path: Path, isolated_home: Path) -> None:
    fake_binary(on_path, "codex")
    fake_binary(on_path, "gemini")
    (isolated_home / ".codex").mkdir()
    config = isolated_home / ".codex" / "config.toml"
    config.write_text('model = "m"\n', encoding="utf-8")

    dry = cli("init", "--client", "all", "--dir", str(project_dir), "--dry-run")
    assert dry.code == 0, dry.err
    assert "hooks.json" in dry.out and "Dry run: nothing was written." in dry.out
    assert config.read_text(encoding="utf-8") == 'model = "m"\n' and not (isolated_home / ".gemini").exists()

    done = cli("init", "--client", "codex", "--client", "gemini", "--dir", str(project_dir))
    assert done.code == 0, done.err
    assert "6 of 6 agentctx hooks trusted" in done.out
    settings = json.loads((isolated_home / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    assert "--client gemini BeforeAgent" in settings["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]
    again = cli("init", "--client", "codex", "--client", "gemini", "--dir", str(project_dir))
    assert again.out.count("already up to date") == 3, again.out

    status = cli("status", "--project", str(project_dir))
    assert "Codex CLI: active" in status.out and "trusted 6/6" in status.out, status.out
    assert "Gemini CLI: active" in status.out, status.out
    doctor = cli("doctor", "--project", str(project_dir), "--json")
    names = {check["name"]: check["state"] for check in json.loads(doctor.out)}
    assert names["codex cli hooks"] == "ok" and names["gemini cli hooks"] == "ok", names

    # a stale trust (the hook command changed by hand) shows as inactive in doctor
    hooks = isolated_home / ".codex" / "hooks.json"
    hooks.write_text(hooks.read_text(encoding="utf-8").replace("hook --client codex Stop", "hook --client codex  Stop"))
    doctor = cli("doctor", "--project", str(project_dir), "--json")
    names = {check["name"]: check["state"] for check in json.loads(doctor.out)}
    assert names["codex cli hooks"] == "fail"

    gone = cli("uninstall")  # every client init set up
    assert gone.code == 0, gone.err
    assert config.read_text(encoding="utf-8") == 'model = "m"\n'
    assert not hooks.exists() and not (isolated_home / ".gemini" / "settings.json").exists()


def test_malformed_gemini_settings_is_refused_before_anything_is_written(
    cli, project_dir: Path, on_path: Path, isolated_home: Path
) -> None:
    fake_binary(on_path, "codex")
    fake_binary(on_path, "gemini")
    settings = isolated_home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "ide": {\n}\n', encoding="utf-8")
    result = cli("init", "--client", "codex", "--client", "gemini", "--dir", str(project_dir))
    one_line_error(result, str(settings), "line ")
    assert not (isolated_home / ".codex").exists()  # codex came first, but nothing was written


def test_codex_has_no_project_scope_and_says_what_to_do(
    cli, project_dir: Path, on_path: Path, isolated_home: Path
) -> None:
    """Codex runs a repository's .codex/hooks.json only in a project the user trusted as a whole
    (its config and every committed hook): agentctx does not make that choice, so `--project`
    refuses Codex in one line naming the user-scope command, and writes nothing anywhere."""
    fake_binary(on_path, "codex")
    fake_binary(on_path, "gemini")
    for args in (("--client", "codex"), ("--client", "gemini,codex"), ("--client", "claude", "--client", "codex")):
        refused = cli("init", *args, "--project", "--dir", str(project_dir))
        one_line_error(refused, "no project scope", "trust the whole project", "`agentctx init --client codex`")
    assert not (isolated_home / ".codex").exists() and not (isolated_home / ".gemini").exists()
    assert not (project_dir / ".codex").exists() and not (project_dir / ".gemini").exists()
    assert not (project_dir / ".claude").exists()

    # the step it names works: user scope
    assert cli("init", "--client", "codex", "--dir", str(project_dir)).code == 0
    assert (isolated_home / ".codex" / "hooks.json").exists() and not (project_dir / ".codex").exists()
    refused = cli("uninstall", "--client", "codex", "--project", "--dir", str(project_dir))
    one_line_error(refused, "no project scope", "`agentctx uninstall --client codex`")
    assert (isolated_home / ".codex" / "hooks.json").exists()  # refused: nothing removed

    # `--client all --project` sets up the others and leaves Codex out with a note
    done = cli("init", "--client", "all", "--project", "--dir", str(project_dir))
    assert done.code == 0, done.err
    assert "Codex CLI: skipped (no project scope)" in done.out
    assert (project_dir / ".gemini" / "settings.json").exists() and not (project_dir / ".codex").exists()


def test_every_client_has_its_setup_and_registers_only_events_it_maps() -> None:
    """Each registry entry but the default has `agentctx/cli/clients/<name>.py` with the names
    of `ClientSetup`; what init registers is among the events the registry maps to ours."""
    from agentctx_store import clients as registry

    from agentctx.cli import clients
    from agentctx.cli.clients import claude, codex, gemini

    protocol = {name for name in vars(clients.ClientSetup) if not name.startswith("_")} | {"NO_PROJECT_SCOPE"}
    for client in registry.others():
        setup = clients.setup_for(client.name)
        assert protocol <= set(vars(setup)), (client.name, protocol - set(vars(setup)))
    for module, name in ((codex, "codex"), (gemini, "gemini")):
        assert set(module.REGISTERED) <= {event for event, ours in registry.get(name).events.items() if ours}
    assert "PreCompress" not in gemini.REGISTERED
    assert set(claude.events_for((99, 0, 0))) <= set(registry.get("claude").events)


FOURTH_CLIENT = '''
"""A made-up fourth client: hooks and MCP server in `~/.aider/settings.json`."""

from pathlib import Path

from agentctx.cli.clients import hook_groups, mcp_entry
from agentctx.cli.clients._changes import add_json_entries, check, our_events, read_json, remove_json_entries

NO_PROJECT_SCOPE = None


def settings():
    return Path.home() / ".aider" / "settings.json"


def plan(base, record, *, no_mcp, project_root):
    groups = hook_groups(base, "aider", ["start", "prompt"], matchers={}, timeout=lambda event: 10)
    change, remembered = add_json_entries(settings(), groups, None if no_mcp else mcp_entry(base, "aider"), record)
    check([change])
    return [change], remembered


def after_init():
    return "Aider: ready"


def plan_removal(record, project_root):
    return [remove_json_entries(settings(), record)]


def remaining(record, project_root):
    return None


def registration(project_root):
    events = our_events(settings())
    servers = read_json(settings())[0].get("mcpServers") or {}
    return {"hooks": {str(settings()): events} if events else {}, "mcp": "agentctx" in servers, "active": bool(events)}


def note(info):
    return ""


def inactive(info):
    return "never", ""
'''


def test_a_fourth_client_is_its_registry_entry_and_its_setup_module(
    cli, project_dir: Path, on_path: Path, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry in `agentctx_store.clients` and a module `agentctx/cli/clients/<name>.py` are all
    the CLI needs: init accepts the name and writes the client's file, status and doctor list it,
    the hook command init wrote is served, and uninstall puts the file back."""
    import importlib.util
    import sys

    from agentctx_store import clients as registry

    events = {"start": "SessionStart", "prompt": "UserPromptSubmit"}
    monkeypatch.setitem(
        registry.CLIENTS,
        "aider",
        registry.Client(
            name="aider",
            label="Aider",
            binary="aider",
            install="pipx install aider-chat",
            transcript="claude",
            transcript_name="a session .jsonl",
            events=events,
        ),
    )
    source = tmp_path / "aider.py"
    source.write_text(FOURTH_CLIENT, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("agentctx.cli.clients.aider", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "agentctx.cli.clients.aider", module)

    fake_binary(on_path, "aider")
    done = cli("init", "--client", "aider", "--dir", str(project_dir), "--no-learn")
    assert done.code == 0, done.err
    assert "Aider: wrote" in done.out and "Aider: ready" in done.out
    settings = isolated_home / ".aider" / "settings.json"
    written = json.loads(settings.read_text(encoding="utf-8"))
    command = written["hooks"]["prompt"][0]["hooks"][0]["command"]
    assert command.endswith(" hook --client aider prompt")
    assert written["mcpServers"]["agentctx"]["env"]["AGENTCTX_CLIENT"] == "aider"
    manifest = json.loads((isolated_home / ".agentctx" / "install.json").read_text(encoding="utf-8"))
    assert set(manifest["clients"]) == {"aider"}

    status = cli("status", "--project", str(project_dir))
    assert "Aider: active; hooks prompt, start; MCP yes" in status.out, status.out
    doctor = {check["name"]: check["state"] for check in cli("doctor", "--project", str(project_dir), "--json").json()}
    assert (doctor["aider hooks"], doctor["aider mcp"]) == ("ok", "ok"), doctor

    cli("record", "--type", "decision", "--title", "Use SQLite for the job queue", "--body", "Jobs in a table.",
        "--project", str(project_dir))  # fmt: skip
    payload = json.dumps({"session_id": "aider-1", "cwd": str(project_dir), "prompt": "the sqlite job queue?"})
    answer = cli("hook", "--client", "aider", "prompt", input=payload)
    assert json.loads(answer.out)["hookSpecificOutput"]["hookEventName"] == "prompt", answer

    gone = cli("uninstall")  # every client init set up, the fourth one too
    assert gone.code == 0, gone.err
    assert "Aider: removed" in gone.out and not settings.exists()
