"""The JSON surgery init and uninstall share across clients: which hooks are ours, removing ours
alone, and keeping a file's own indentation (what init registers is tested in the CLI package,
`packages/agentctx/tests/test_registration.py`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from agentctx.cli import _config_file as files
from agentctx.cli.clients import _settings as install


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("/opt/tools/agentctx/bin/agentctx hook SessionStart", True),
        ("'/path with space/agentctx' hook Stop", True),
        ("/usr/bin/python3 -m agentctx hook Stop", True),
        ("agentctx hook UserPromptSubmit", True),
        ("other-tool session-start", False),
        ("echo agentctx hook Stop", False),
        ("/bin/agentctx-other hook Stop", False),
        ("agentctx mcp", False),
        ("unbalanced 'quote", False),
        (None, False),
    ],
)
def test_our_hook_commands_are_recognised(command: object, ours: bool) -> None:
    assert install.is_our_hook(command) is ours


def test_our_hook_inside_a_shared_group_is_removed_alone() -> None:
    shared = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "say done"},
                        {"type": "command", "command": "/x/agentctx hook Stop"},
                    ]
                }
            ]
        }
    }
    cleaned = install.remove_hooks(shared, drop_events=None, drop_hooks_key=None)
    assert cleaned == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}


def test_dump_keeps_the_files_indentation() -> None:
    original = '{\n    "model": "opus"\n}\n'
    assert install.dump_json({"model": "opus"}, original) == original
    tabbed = '{\n\t"model": "opus"\n}\n'
    assert install.dump_json({"model": "opus"}, tabbed) == tabbed


@pytest.mark.parametrize(
    "original",
    [
        '{\n  "model": "opus"\n}',  # no final newline
        '{"model": "opus", "env": {"A": "1"}}\n',  # one line
        '{\r\n  "model": "opus"\r\n}\r\n',  # Windows line ends
        '{\n  "model": "caf\\u00e9"\n}\n',  # \u escapes
    ],
)
def test_dump_keeps_the_files_style(original: str) -> None:
    assert install.dump_json(json.loads(original), original) == original


def test_a_key_twice_in_one_object_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    text = '{\n  "env": {"A": "1", "A": "2"}\n}\n'
    path.write_text(text, encoding="utf-8")
    with pytest.raises(install.SettingsError, match=r"the key 'A' appears twice"):
        install.read_json(path)
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"model": "café"}'.encode("latin-1"), "not UTF-8 text (byte 14 is 0xE9: Windows-1252 or Latin-1, it seems)"),
        (None, "is a folder"),
    ],
)
def test_a_file_that_is_not_text_is_refused_in_one_line(tmp_path: Path, content: bytes | None, words: str) -> None:
    path = tmp_path / "settings.json"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(install.SettingsError) as caught:
        install.read_json(path)
    assert str(caught.value).startswith(f"{path}: ") and words in str(caught.value) and "\n" not in str(caught.value)


def test_a_write_goes_through_the_link_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "settings.json"
    target.parent.mkdir()
    target.write_text('{"a": 1}', encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "config" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(target)
    backup = install.write_with_backup(link, '{"a": 2}', had_file=True)
    assert link.is_symlink() and link.readlink() == target
    assert target.read_text(encoding="utf-8") == '{"a": 2}' and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert backup is not None and backup.parent == link.parent and backup.read_text(encoding="utf-8") == '{"a": 1}'
    assert sorted(path.name for path in target.parent.iterdir()) == ["settings.json"]  # no temp file left


def test_a_read_only_file_is_refused_before_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root ignores file modes, so `os.access` is what says read-only here (the e2e test uses
    `chattr +i` as root)."""
    folder = tmp_path / "config"
    folder.mkdir()
    path = folder / "settings.json"
    path.write_text("{}", encoding="utf-8")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda name, mode: False if Path(name) == path else real_access(name, mode))
    with pytest.raises(files.ConfigFileError, match=r"read-only; make it writable"):
        install.write_with_backup(path, '{"a": 1}', had_file=True)
    assert path.read_text(encoding="utf-8") == "{}"
    assert sorted(child.name for child in folder.iterdir()) == ["settings.json"]  # no backup, no temp file


def test_a_failed_write_leaves_the_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "config"
    folder.mkdir()
    path = folder / "settings.json"
    path.write_text("{}", encoding="utf-8")

    def refuse(source: object, destination: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(files.ConfigFileError, match=r"cannot be written \(Operation not permitted\)"):
        install.write_with_backup(path, '{"a": 1}', had_file=False)
    assert path.read_text(encoding="utf-8") == "{}"
    assert sorted(child.name for child in folder.iterdir()) == ["settings.json"]


def test_a_dangling_link_gets_its_target_or_a_refusal(tmp_path: Path) -> None:
    link = tmp_path / "settings.json"
    link.symlink_to(tmp_path / "dotfiles" / "settings.json")
    with pytest.raises(files.ConfigFileError, match=r"whose folder does not exist"):
        install.write_with_backup(link, "{}", had_file=False)
    assert link.is_symlink() and not (tmp_path / "dotfiles").exists()
    (tmp_path / "dotfiles").mkdir()
    install.write_with_backup(link, "{}", had_file=False)
    assert link.is_symlink() and (tmp_path / "dotfiles" / "settings.json").read_text(encoding="utf-8") == "{}"
    files.delete(link)
    assert link.is_symlink() and not link.exists()
    through = tmp_path / "home-link"  # a home reached through a link: missing folders below it are made
    through.symlink_to(tmp_path / "dotfiles")
    install.write_with_backup(through / ".claude" / "settings.json", "{}", had_file=False)
    assert (tmp_path / "dotfiles" / ".claude" / "settings.json").read_text(encoding="utf-8") == "{}"


def test_an_oversized_config_file_is_refused_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b" " * (files.MAX_CONFIG + 1))
    with pytest.raises(
        files.ConfigFileError, match=rf"{files.MAX_CONFIG + 1:,} bytes is over the {files.MAX_CONFIG:,}-byte limit\. "
    ):
        files.read_text(path)
