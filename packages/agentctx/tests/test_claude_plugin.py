"""The Claude Code plugin (issue 34): its files are generated from what `agentctx init --client
claude` writes and the repository holds exactly those; its launcher finds the CLI or says in
one line how to install it; the plugin and init never both register."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agentctx_hooks.__main__ import run as run_hook
from agentctx_hooks.plugin import mcp_refusal

from agentctx.cli.clients import claude, claude_plugin, gemini, gemini_extension


@pytest.fixture(autouse=True)
def no_spawn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_HOOKS_NO_SPAWN", "1")  # hooks run in-process here: no background runs


REPO = Path(__file__).resolve().parents[3]
PLUGIN = REPO / claude_plugin.FOLDER
LAUNCHER = PLUGIN / "bin" / "agentctx-run"


def test_the_hooks_and_the_generator_name_the_plugin_alike() -> None:
    from agentctx_hooks import plugin

    assert (plugin.PLUGIN_ID, plugin.VIA_ENV, plugin.VIA_PLUGIN) == (
        claude_plugin.PLUGIN_ID,
        claude_plugin.VIA_ENV,
        claude_plugin.VIA_PLUGIN,
    )


def test_the_repository_holds_exactly_the_generated_plugin() -> None:
    """Regenerate with `uv run python -m agentctx.cli.clients.claude_plugin` when this fails."""
    for relative, text in claude_plugin.files().items():
        path = REPO / relative
        assert path.is_file(), f"{relative} is missing"
        assert path.read_text(encoding="utf-8") == text, f"{relative} differs from what init registers"
    assert os.access(LAUNCHER, os.X_OK)


def test_the_plugin_registers_every_hook_and_the_mcp_server_init_does() -> None:
    """Same events, matchers, timeouts and MCP entry as init for the newest client; only the
    command differs (the launcher instead of this installation's path)."""
    newest = claude.events_for((9, 9, 9))
    init_groups = claude.desired_groups(["/x/agentctx"], newest)
    registered = json.loads((PLUGIN / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert list(registered) == newest and "SubagentStart" in registered
    for event, (group,) in registered.items():
        command = group["hooks"][0]["command"]
        assert command == f'"{claude_plugin.LAUNCHER}" hook {event}'
        expected = json.loads(
            json.dumps(init_groups[event]).replace("/x/agentctx hook", f"{claude_plugin.LAUNCHER} hook")
        )
        expected["hooks"][0]["command"] = command
        assert group == expected
    server = json.loads((PLUGIN / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["agentctx"]
    assert server == {**claude.mcp_entry(["/x/agentctx"], always_load=False), "command": claude_plugin.LAUNCHER}
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    assert market["plugins"][0]["source"] == f"./{claude_plugin.FOLDER}"


def test_the_plugin_carries_codex_its_own_hooks_and_mcp_server() -> None:
    """Codex reads `.codex-plugin/plugin.json` first: init's Codex hooks and MCP entry."""
    from agentctx.cli.clients import codex

    manifest = json.loads((PLUGIN / ".codex-plugin" / "plugin.json").read_text(encoding="utf-8"))
    registered = json.loads((PLUGIN / manifest["hooks"]).read_text(encoding="utf-8"))["hooks"]
    init_groups = codex.groups(["/x/agentctx"])
    assert list(registered) == list(init_groups)
    for event, (group,) in registered.items():
        assert group["hooks"][0]["command"] == f'"{claude_plugin.CODEX_LAUNCHER}" hook --client codex {event}'
        expected = json.loads(json.dumps(init_groups[event]))
        expected["hooks"][0]["command"] = group["hooks"][0]["command"]
        assert group == expected
    server = json.loads((PLUGIN / manifest["mcpServers"]).read_text(encoding="utf-8"))["mcpServers"]["agentctx"]
    assert server["args"] == ["mcp"] and server["env"] == {"AGENTCTX_CLIENT": "codex", "AGENTCTX_VIA": "claude-plugin"}


def test_init_refuses_codex_while_the_plugin_is_enabled_there(
    cli: Any, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentctx.cli.clients import codex

    folder = tmp_path / "fakebin"
    folder.mkdir()
    (folder / "codex").write_text("#!/bin/sh\necho 0.171.0\n", encoding="utf-8")
    (folder / "codex").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin:/bin")
    config = codex.home() / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[plugins."agentctx@agentctx"]\nenabled = true\n', encoding="utf-8")
    refused = cli("init", "--client", "codex", "--no-learn", "--dir", str(project_dir))
    assert refused.code != 0 and "codex plugin remove agentctx@agentctx" in refused.err
    assert config.read_text(encoding="utf-8") == '[plugins."agentctx@agentctx"]\nenabled = true\n'
    config.write_text('[plugins."agentctx@agentctx"]\nenabled = false\n', encoding="utf-8")
    assert cli("init", "--client", "codex", "--no-learn", "--dir", str(project_dir)).code == 0


def test_the_repository_holds_exactly_the_generated_gemini_extension() -> None:
    """Regenerate with `uv run python -m agentctx.cli.clients.gemini_extension` when this fails."""
    for relative, text in gemini_extension.files().items():
        assert (REPO / relative).read_text(encoding="utf-8") == text, f"{relative} differs from what init registers"
    folder = REPO / gemini_extension.FOLDER
    registered = json.loads((folder / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    init_groups = gemini.groups(["/x/agentctx"])
    assert list(registered) == list(init_groups)
    for event, (group,) in registered.items():
        assert group["hooks"][0]["command"] == f'"{gemini_extension.LAUNCHER}" hook --client gemini {event}'
        expected = json.loads(json.dumps(init_groups[event]))
        expected["hooks"][0]["command"] = group["hooks"][0]["command"]
        assert group == expected
    server = json.loads((folder / "gemini-extension.json").read_text(encoding="utf-8"))["mcpServers"]["agentctx"]
    assert server == {
        **gemini.mcp_server(["/x/agentctx"]),
        "command": gemini_extension.LAUNCHER,
        "env": {"AGENTCTX_CLIENT": "gemini"},
    }


# -- the launcher -----------------------------------------------------------------------------------


def launch(
    home: Path, *args: str, payload: str = "{}", path: str = "/usr/bin:/bin", **env: str
) -> subprocess.CompletedProcess[str]:
    """The launcher as Claude Code runs it: a bare PATH, HOME and the data dir."""
    environment = {"PATH": path, "HOME": str(home), "AGENTCTX_HOME": str(home / ".agentctx"), **env}
    return subprocess.run(
        [str(LAUNCHER), *args], input=payload, env=environment, capture_output=True, text=True, timeout=60, check=False
    )


def fake_cli(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "agentctx"
    script.write_text(
        '#!/bin/sh\n[ "$*" = "hook --help" ] && echo "usage: agentctx hook …" && exit 0\necho "ran $0 $* via=$AGENTCTX_VIA"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def test_without_the_cli_a_hook_says_how_to_install_it_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "bare"
    home.mkdir()
    start = launch(home, "hook", "SessionStart")
    assert start.returncode == 0 and start.stderr == ""
    (line,) = start.stdout.splitlines()
    message = json.loads(line)["systemMessage"]
    assert "not found" in message and "uv tool install" in message
    for event in ("UserPromptSubmit", "SubagentStart", "PostToolUse", "SessionEnd"):
        quiet = launch(home, "hook", event, payload='{"prompt": "x"}')
        assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", ""), event
    named = launch(home, "hook", "--client", "gemini", "SessionStart")  # the Gemini extension's form
    assert named.returncode == 0 and "not found" in json.loads(named.stdout)["systemMessage"]
    server = launch(home, "mcp")
    assert server.returncode == 1 and len(server.stderr.splitlines()) == 1 and "not found" in server.stderr
    assert not (home / ".agentctx").exists()  # nothing recorded, nothing created


def test_the_cli_is_found_in_a_tool_folder_off_path_and_recorded(tmp_path: Path) -> None:
    home = tmp_path / "bare"
    script = fake_cli(home / ".local" / "bin")  # where `uv tool` and `pipx` install
    found = launch(home, "hook", "UserPromptSubmit")
    assert found.stdout.strip() == f"ran {script} hook UserPromptSubmit via=claude-plugin"
    recorded = home / ".agentctx" / claude_plugin.RECORDED
    assert recorded.read_text(encoding="utf-8") == f"{script}\n"
    assert recorded.stat().st_mode & 0o077 == 0
    elsewhere = fake_cli(tmp_path / "opt" / "agentctx" / "bin")  # recorded by init: wins over the search
    recorded.write_text(f"{elsewhere}\n", encoding="utf-8")
    assert launch(home, "mcp").stdout.startswith(f"ran {elsewhere} mcp")
    elsewhere.unlink()  # a stale record: back to the search
    assert launch(home, "mcp").stdout.startswith(f"ran {script} mcp")
    on_path = fake_cli(tmp_path / "onpath")
    assert launch(home, "mcp", path=f"{on_path.parent}:/usr/bin:/bin", AGENTCTX_BIN=str(script)).stdout.startswith(
        f"ran {script}"
    )


def test_another_agentctx_on_path_is_not_taken_for_ours(tmp_path: Path) -> None:
    home = tmp_path / "bare"
    home.mkdir()
    impostor = tmp_path / "pypi" / "agentctx"  # PyPI's `agentctx` is another project
    impostor.parent.mkdir()
    impostor.write_text("#!/bin/sh\necho impostor ran\n", encoding="utf-8")
    impostor.chmod(0o755)
    done = launch(home, "hook", "SessionStart", path=f"{impostor.parent}:/usr/bin:/bin")
    assert (
        "impostor ran" not in done.stdout and "not found" in json.loads(done.stdout.splitlines()[-1])["systemMessage"]
    )
    assert done.stdout.count("impostor") == 0 and done.returncode == 0


def test_init_records_the_cli_for_the_launcher(cli: Any, project_dir: Path) -> None:
    assert cli("init", "--no-mcp", "--no-learn", "--dir", str(project_dir)).code == 0
    recorded = Path(os.environ["AGENTCTX_HOME"]) / claude_plugin.RECORDED
    assert Path(recorded.read_text(encoding="utf-8").strip()).name == "agentctx"


# -- never both ---------------------------------------------------------------------------------------


def enable_plugin(settings: Path) -> None:
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledPlugins": {claude_plugin.PLUGIN_ID: True}}), encoding="utf-8")


def test_init_refuses_while_the_plugin_is_enabled(cli: Any, project_dir: Path) -> None:
    settings = claude.home() / "settings.json"
    enable_plugin(settings)
    before = settings.read_text(encoding="utf-8")
    refused = cli("init", "--no-learn", "--dir", str(project_dir))
    assert refused.code != 0 and "already runs agentctx through the plugin agentctx@agentctx" in refused.err
    assert "claude plugin uninstall agentctx@agentctx" in refused.err
    assert settings.read_text(encoding="utf-8") == before
    settings.write_text(json.dumps({"enabledPlugins": {claude_plugin.PLUGIN_ID: False}}), encoding="utf-8")
    assert cli("init", "--no-mcp", "--no-learn", "--dir", str(project_dir)).code == 0  # disabled: init may


def test_uninstall_leaves_the_plugin_and_says_so(cli: Any, project_dir: Path) -> None:
    assert cli("init", "--no-mcp", "--no-learn", "--dir", str(project_dir)).code == 0
    settings = claude.home() / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    data["enabledPlugins"] = {claude_plugin.PLUGIN_ID: True}  # installed afterwards, by hand
    settings.write_text(json.dumps(data), encoding="utf-8")
    done = cli("uninstall", "--dir", str(project_dir))
    assert done.code == 0 and "left as it is" in done.out
    assert json.loads(settings.read_text(encoding="utf-8")) == {"enabledPlugins": {claude_plugin.PLUGIN_ID: True}}


def test_the_plugin_stays_idle_where_init_registered(
    cli: Any, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = json.dumps({"session_id": "s1", "cwd": str(project_dir), "source": "startup"}).encode()
    monkeypatch.setenv("AGENTCTX_VIA", "claude-plugin")
    assert run_hook("SessionStart", payload).startswith('{"hookSpecificOutput"')  # the plugin alone: serves
    assert cli("init", "--no-mcp", "--no-learn", "--dir", str(project_dir)).code == 0
    notice = json.loads(run_hook("SessionStart", payload))
    assert set(notice) == {"systemMessage"} and "stays idle" in notice["systemMessage"]
    prompt = json.dumps({"session_id": "s1", "cwd": str(project_dir), "prompt": "what about redis?"}).encode()
    assert run_hook("UserPromptSubmit", prompt) == ""
    monkeypatch.delenv("AGENTCTX_VIA")  # init's own hooks run as before
    assert run_hook("SessionStart", payload).startswith('{"hookSpecificOutput"')


def test_a_project_scope_init_idles_the_plugin_only_in_that_project(
    cli: Any, project_dir: Path, other_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("init", "--project", "--no-mcp", "--no-learn", "--dir", str(project_dir)).code == 0
    monkeypatch.setenv("AGENTCTX_VIA", "claude-plugin")
    here = json.dumps({"session_id": "s1", "cwd": str(project_dir / "sub"), "source": "startup"}).encode()
    (project_dir / "sub").mkdir()
    assert "systemMessage" in run_hook("SessionStart", here)
    there = json.dumps({"session_id": "s2", "cwd": str(other_dir), "source": "startup"}).encode()
    assert run_hook("SessionStart", there).startswith('{"hookSpecificOutput"')


def test_the_plugin_mcp_server_stays_off_where_init_registered_one(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentctx.cli.clients import _manifest

    home = Path(os.environ["AGENTCTX_HOME"])
    assert mcp_refusal() == ""
    _manifest.save_manifest(home, {"settings": {}, "mcp": {"via": "file"}})
    assert mcp_refusal() == ""  # not started by the plugin
    monkeypatch.setenv("AGENTCTX_VIA", "claude-plugin")
    refused = cli("mcp")
    assert refused.code == 1 and "plugin's stays off" in refused.err


def test_doctor_counts_the_plugin_as_registered(cli: Any, project_dir: Path) -> None:
    before = cli("doctor", "--json", "--project", str(project_dir))
    checks = {check["name"]: check for check in json.loads(before.out)}
    assert checks["claude code hooks"]["state"] == "warn"
    enable_plugin(claude.home() / "settings.json")
    after = cli("doctor", "--json", "--project", str(project_dir))
    checks = {check["name"]: check for check in json.loads(after.out)}
    for name in ("claude code hooks", "mcp server registered"):
        assert checks[name]["state"] == "ok" and "through the plugin agentctx@agentctx" in checks[name]["detail"]


# -- the Gemini CLI extension and `init --client gemini` ------------------------------------------------


def fake_gemini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "fakebin"
    folder.mkdir()
    (folder / "gemini").write_text("#!/bin/sh\necho 0.61.0\n", encoding="utf-8")
    (folder / "gemini").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin:/bin")


def test_init_refuses_gemini_while_the_extension_is_installed(
    cli: Any, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_gemini(tmp_path, monkeypatch)
    installed = gemini.home() / "extensions" / "agentctx"
    installed.mkdir(parents=True)
    (installed / "gemini-extension.json").write_text("{}", encoding="utf-8")
    refused = cli("init", "--client", "claude", "--client", "gemini", "--no-learn", "--dir", str(project_dir))
    assert refused.code != 0 and "already runs agentctx through its extension" in refused.err
    assert not (claude.home() / "settings.json").exists()  # nothing written for any client
    (installed / "gemini-extension.json").unlink()
    assert cli("init", "--client", "gemini", "--no-learn", "--dir", str(project_dir)).code == 0


def test_the_extension_stays_idle_where_init_registered_gemini(
    cli: Any, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_gemini(tmp_path, monkeypatch)
    start = json.dumps({"session_id": "g1", "cwd": str(project_dir), "source": "startup"}).encode()
    monkeypatch.setenv("AGENTCTX_VIA", "gemini-extension")
    assert "hookSpecificOutput" in run_hook("SessionStart", start, "gemini")  # the extension alone: serves
    assert mcp_refusal() == ""
    assert cli("init", "--client", "gemini", "--no-learn", "--dir", str(project_dir)).code == 0
    notice = json.loads(run_hook("SessionStart", start, "gemini"))
    assert set(notice) == {"systemMessage"} and "gemini extensions uninstall agentctx" in notice["systemMessage"]
    prompt = json.dumps({"session_id": "g1", "cwd": str(project_dir), "prompt": "redis?"}).encode()
    assert run_hook("BeforeAgent", prompt, "gemini") == ""
    assert "the agentctx extension's stays off" in mcp_refusal()
    monkeypatch.setenv("AGENTCTX_VIA", "claude-plugin")  # the other client's package is not affected
    assert "hookSpecificOutput" in run_hook("SessionStart", start)


def test_the_plugin_in_codex_stays_idle_where_init_registered_codex(
    cli: Any, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "fakebin"
    folder.mkdir()
    (folder / "codex").write_text("#!/bin/sh\necho 0.171.0\n", encoding="utf-8")
    (folder / "codex").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin:/bin")
    start = json.dumps({"session_id": "c1", "cwd": str(project_dir), "source": "startup"}).encode()
    monkeypatch.setenv("AGENTCTX_VIA", "claude-plugin")
    assert "hookSpecificOutput" in run_hook("SessionStart", start, "codex")
    assert cli("init", "--client", "codex", "--no-learn", "--dir", str(project_dir)).code == 0
    notice = json.loads(run_hook("SessionStart", start, "codex"))
    assert "codex plugin remove agentctx@agentctx" in notice["systemMessage"]
    monkeypatch.setenv("AGENTCTX_CLIENT", "codex")
    assert "plugin's stays off" in mcp_refusal()
