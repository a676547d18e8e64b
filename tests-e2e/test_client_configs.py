"""Client configs are the user's files: `agentctx init` / `uninstall` through the installed command
with a temporary HOME, on the four files init edits (Claude Code's `~/.claude/settings.json` and
`~/.claude.json`, Codex's `config.toml`, Gemini's `settings.json`).

Each file is linked from a dotfiles folder, as many people keep them: init edits the target and
the link stays a link; uninstall puts the target back byte for byte. A dangling link survives.
A file agentctx cannot safely change (not UTF-8, a key twice, not JSON, a folder, read-only) is
refused in one line that names it, with exit 1, and is left exactly as it was.

Stand-in `codex` and `gemini` scripts on PATH (init only checks they are installed); `claude`
is kept off PATH so init edits `~/.claude.json` itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

AGENTCTX = Path(sys.executable).with_name("agentctx")

# Four files in four styles: key order no tool would choose, unicode, 2 spaces or a tab, with a
# final newline or without one, a comment block, `\u` escapes.
ORIGINALS = {
    "claude-settings": (
        '{\n  "statusLine": {"type": "command", "command": "~/bin/línea ✓"},\n  "model": "opus",\n'
        '  "env": {\n    "ZED": "1",\n    "ALPHA": "ü"\n  }\n}'
    ),
    "claude-json": (
        '{\n  "theme": "dark",\n  "numStartups": 7,\n  "projects": {"/home/dev/ñ": {"allowedTools": []}},\n'
        '  "tips": "caf\\u00e9"\n}\n'
    ),
    "codex-config": '# my Codex config — ✓\nmodel = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"  # keep',
    "gemini-settings": '{\n\t"ui": {\n\t\t"theme": "Dracula ☾"\n\t},\n\t"security": {"auth": {"selectedType": "x"}}\n}\n',
}


def locations(home: Path) -> dict[str, Path]:
    return {
        "claude-settings": home / ".claude" / "settings.json",
        "claude-json": home / ".claude.json",
        "codex-config": home / ".codex" / "config.toml",
        "gemini-settings": home / ".gemini" / "settings.json",
    }


@pytest.fixture
def env(isolated_home: Path, tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("codex", "gemini"):
        script = bin_dir / name
        script.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        script.chmod(0o755)
    paths = [part for part in os.environ.get("PATH", "").split(os.pathsep) if not (Path(part) / "claude").exists()]
    environment = {**os.environ, "PATH": os.pathsep.join([str(bin_dir), *paths])}
    for name in ("CODEX_HOME", "GEMINI_CLI_HOME", "CLAUDE_CONFIG_DIR"):
        environment.pop(name, None)
    return environment


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    root.mkdir()
    return root


def agentctx(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENTCTX), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


ALL = ("init", "--client", "claude", "--client", "codex", "--client", "gemini", "--no-learn")


def link_all(home: Path, dotfiles: Path) -> dict[str, Path]:
    """Every config a link into `dotfiles`, holding its original; returns the targets."""
    dotfiles.mkdir()
    targets = {}
    for name, path in locations(home).items():
        target = dotfiles / f"{name}.{path.suffix.lstrip('.')}"
        target.write_bytes(ORIGINALS[name].encode("utf-8"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
        targets[name] = target
    return targets


def test_linked_configs_are_edited_through_the_link_and_restored_byte_for_byte(
    env: dict[str, str], project: Path, isolated_home: Path, tmp_path: Path
) -> None:
    targets = link_all(isolated_home, tmp_path / "dotfiles")
    paths = locations(isolated_home)

    done = agentctx(env, project, *ALL)
    assert done.returncode == 0, done.stderr
    for name, path in paths.items():
        assert path.is_symlink() and path.readlink() == targets[name], name
    settings = json.loads(targets["claude-settings"].read_text(encoding="utf-8"))
    assert "SessionStart" in settings["hooks"] and settings["model"] == "opus"
    assert "agentctx" in json.loads(targets["claude-json"].read_text(encoding="utf-8"))["mcpServers"]
    codex = tomllib.loads(targets["codex-config"].read_text(encoding="utf-8"))
    assert "agentctx" in codex["mcp_servers"] and codex["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    gemini = json.loads(targets["gemini-settings"].read_text(encoding="utf-8"))
    assert "BeforeAgent" in gemini["hooks"] and "agentctx" in gemini["mcpServers"]
    assert targets["claude-settings"].read_text(encoding="utf-8").startswith('{\n  "statusLine"')  # its 2 spaces
    assert targets["gemini-settings"].read_text(encoding="utf-8").startswith('{\n\t"ui"')  # its tab
    assert str(targets["claude-settings"]) in done.stdout  # init says where the link leads

    installed = {name: target.read_bytes() for name, target in targets.items()}
    dry = agentctx(env, project, "uninstall", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert {name: target.read_bytes() for name, target in targets.items()} == installed
    assert '-    "SessionStart": [' in dry.stdout and '+  "tips": "caf\\u00e9"' in dry.stdout  # the exact bytes

    done = agentctx(env, project, "uninstall")
    assert done.returncode == 0, done.stderr
    for name, path in paths.items():
        assert path.is_symlink() and path.readlink() == targets[name], name
        assert targets[name].read_bytes() == ORIGINALS[name].encode("utf-8"), name
    assert done.stdout.count("byte for byte") == 4, done.stdout
    assert not (isolated_home / ".codex" / "hooks.json").exists()  # init created it, unchanged since: gone


def test_a_file_edited_since_init_loses_only_our_entries_and_keeps_its_style(
    env: dict[str, str], project: Path, isolated_home: Path, tmp_path: Path
) -> None:
    targets = link_all(isolated_home, tmp_path / "dotfiles")
    assert agentctx(env, project, *ALL).returncode == 0
    for name in ("claude-settings", "gemini-settings"):
        text = targets[name].read_text(encoding="utf-8")
        targets[name].write_text(text.replace('"model": "opus"', '"model": "sonnet"').replace("☾", "☽"), "utf-8")

    done = agentctx(env, project, "uninstall")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("byte for byte") == 2, done.stdout  # ~/.claude.json and config.toml
    assert "only our entries removed" in done.stdout
    settings = targets["claude-settings"].read_text(encoding="utf-8")
    assert json.loads(settings) == json.loads(ORIGINALS["claude-settings"].replace("opus", "sonnet"))
    assert settings.startswith('{\n  "statusLine": {\n    "type"') and not settings.endswith("\n")
    gemini = targets["gemini-settings"].read_text(encoding="utf-8")
    assert json.loads(gemini) == json.loads(ORIGINALS["gemini-settings"].replace("☾", "☽"))
    assert gemini.startswith('{\n\t"ui": {\n\t\t"theme": "Dracula ☽"') and gemini.endswith("}\n")
    for path in locations(isolated_home).values():
        assert path.is_symlink()


def test_dangling_links_survive(env: dict[str, str], project: Path, isolated_home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    settings = locations(isolated_home)["claude-settings"]
    settings.parent.mkdir()
    settings.symlink_to(dotfiles / "claude-settings.json")  # its folder exists
    gemini = locations(isolated_home)["gemini-settings"]
    gemini.parent.mkdir()
    gemini.symlink_to(dotfiles / "not-cloned-yet" / "settings.json")  # its folder does not

    done = agentctx(env, project, "uninstall", "--client", "all")
    assert done.returncode == 0, done.stderr
    assert settings.is_symlink() and gemini.is_symlink()

    refused = agentctx(env, project, "init", "--client", "gemini", "--no-learn")
    assert refused.returncode == 1
    assert refused.stderr.startswith(f"Error: {gemini}: links to ") and refused.stderr.count("\n") == 1
    assert gemini.is_symlink() and not gemini.exists()

    done = agentctx(env, project, "init", "--no-mcp", "--no-learn")  # creates the file the link points to
    assert done.returncode == 0, done.stderr
    created = json.loads((dotfiles / "claude-settings.json").read_text(encoding="utf-8"))
    assert settings.is_symlink() and "SessionStart" in created["hooks"]
    done = agentctx(env, project, "uninstall")
    assert done.returncode == 0, done.stderr
    assert settings.is_symlink() and not (dotfiles / "claude-settings.json").exists()  # back to dangling
    assert sorted(path.name for path in dotfiles.iterdir()) == []


def _immutable(path: Path) -> Iterator[None]:
    """Root ignores file modes, so as root the file is made immutable (`chattr +i`) instead."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        yield
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)], check=False).returncode:
        pytest.skip("running as root, where chmod 0444 is ignored, and `chattr +i` is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=False)


LATIN1 = '{"model": "café"}\n'.encode("latin-1")


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("claude-settings", LATIN1, "not UTF-8 text"),
        ("claude-settings", b'{"model": "opus", "hooks": {}, "model": "sonnet"}\n', "appears twice"),
        ("claude-settings", b'{"model": "opus",,}\n', "not valid JSON"),
        ("claude-settings", None, "is a folder"),
        ("claude-settings", b'{"model": "opus"}\n', "read-only"),
        ("claude-json", LATIN1, "not UTF-8 text"),
        ("claude-json", b'{"mcpServers": {}, "mcpServers": {"a": {}}}', "appears twice"),
        ("claude-json", b'{"theme": "dark"}', "read-only"),
        ("codex-config", 'model = "café"\n'.encode("latin-1"), "not UTF-8 text"),
        ("codex-config", b'model = "o4"\n', "read-only"),
        ("gemini-settings", b'{\n  "ui": {"theme": "a", "theme": "b"}\n}\n', "appears twice"),
        ("gemini-settings", b"{\n  ui: 1\n}\n", "line 2: not valid JSON"),
        ("gemini-settings", LATIN1, "not UTF-8 text"),
        ("gemini-settings", b'{"ui": {}}', "read-only"),
    ],
)
def test_a_file_that_cannot_be_changed_safely_is_refused_in_one_line_and_left_alone(
    env: dict[str, str],
    project: Path,
    isolated_home: Path,
    tmp_path: Path,
    name: str,
    content: bytes | None,
    words: str,
) -> None:
    path = locations(isolated_home)[name]
    path.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    client = {"claude-settings": "claude", "claude-json": "claude", "codex-config": "codex"}.get(name, "gemini")
    guard = _immutable(path) if words == "read-only" else iter([None])
    next(guard)
    try:
        done = agentctx(env, project, "init", "--client", client, "--no-learn")
        assert done.returncode == 1, done.stdout
        assert done.stderr.startswith(f"Error: {path}") and done.stderr.count("\n") == 1, done.stderr
        assert words in done.stderr and "Traceback" not in done.stderr
        assert path.is_dir() if content is None else path.read_bytes() == content
        assert not list(path.parent.glob(f"*{path.name}.agentctx-*"))  # no temp file, no backup
    finally:
        next(guard, None)


def test_uninstall_refuses_a_read_only_file_in_one_line(
    env: dict[str, str], project: Path, isolated_home: Path
) -> None:
    assert agentctx(env, project, "init", "--client", "gemini", "--no-learn").returncode == 0
    path = locations(isolated_home)["gemini-settings"]
    installed = path.read_bytes()
    guard = _immutable(path)
    next(guard)
    try:
        done = agentctx(env, project, "uninstall", "--client", "gemini")
        assert done.returncode == 1
        assert done.stderr.startswith(f"Error: {path}: read-only") and done.stderr.count("\n") == 1
        assert path.read_bytes() == installed
    finally:
        next(guard, None)
    assert agentctx(env, project, "uninstall", "--client", "gemini").returncode == 0
    assert not path.exists()


def test_the_manifest_holding_the_original_text_is_the_users_alone(
    env: dict[str, str], project: Path, isolated_home: Path, tmp_path: Path
) -> None:
    link_all(isolated_home, tmp_path / "dotfiles")
    manifest = Path(env["AGENTCTX_HOME"]) / "install.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text('{"settings": {}, "mcp": null}\n', encoding="utf-8")
    manifest.chmod(0o644)  # as an older version left it
    assert agentctx(env, project, *ALL).returncode == 0
    assert json.loads(manifest.read_text(encoding="utf-8"))["mcp"]["restore"]["before"] == ORIGINALS["claude-json"]
    assert manifest.stat().st_mode & 0o777 == 0o600


def test_a_link_committed_in_a_repository_is_never_followed(
    env: dict[str, str], project: Path, isolated_home: Path, tmp_path: Path
) -> None:
    """With --project the file is the repository's, and anyone can commit a link there: following
    it would edit the user's own settings, or copy them into the repository."""
    mine = locations(isolated_home)["claude-settings"]
    mine.parent.mkdir(parents=True)
    mine.write_bytes(ORIGINALS["claude-settings"].encode("utf-8"))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(mine)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".gemini").symlink_to(elsewhere)
    for args in (("init", "--project", "--no-mcp"), ("init", "--project", "--client", "gemini")):
        done = agentctx(env, project, *args, "--no-learn")
        assert done.returncode == 1, done.stdout
        assert "refused, it is a symbolic link" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert mine.read_bytes() == ORIGINALS["claude-settings"].encode("utf-8")
    assert (project / ".claude" / "settings.json").is_symlink() and list(elsewhere.iterdir()) == []
    done = agentctx(env, project, "uninstall", "--project", "--client", "all")
    assert done.returncode == 1 and "refused, it is a symbolic link" in done.stderr
    assert mine.read_bytes() == ORIGINALS["claude-settings"].encode("utf-8")
