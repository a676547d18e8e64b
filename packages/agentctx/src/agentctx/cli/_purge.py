"""`agentctx uninstall --purge`: delete what agentctx wrote, and nothing else.

Only paths we can name are deleted: our files by their exact name or by the naming pattern
of the code that writes them (spool captures, session state, digests, logs, the embedding
model cache), never a whole folder. A folder goes only when it is empty afterwards, so a
file someone else put inside the data dir, or inside one of our folders, stays, and so does
the folder holding it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from agentctx_store.jsontext import is_object

# exact names in the data dir
TOP_FILES = (
    "agentctx.db",
    "agentctx.db-wal",
    "agentctx.db-shm",
    "agentctx.db-journal",
    "agentctx.db.consolidate.lock",
    "install.json",
    "cli-path",  # where the CLI is, for the Claude Code plugin's launcher
    "remote-sync.next",  # when the hooks next start a remote sync (agentctx_store.paths)
)
_PROJECT = r"(?:[0-9a-f]{64}|_global)"


def _is_state_file(path: Path) -> bool:
    """A session state file as `agentctx_hooks.state` writes it: a JSON object of our keys."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    from agentctx_hooks.state import KEYS

    return is_object(data) and set(data) <= KEYS


def _is_lock_file(path: Path) -> bool:
    """A spawn lock: its content is the pid of its holder (or nothing, mid-write)."""
    try:
        return path.read_text(encoding="utf-8").strip().isdigit() or path.stat().st_size == 0
    except OSError:
        return False


# folder -> [(name pattern, optional content check, whole folder of ours?)]
Rule = tuple[str, Callable[[Path], bool] | None, bool]
FOLDERS: dict[str, list[Rule]] = {
    "digests": [
        (rf"{_PROJECT}\.(?:md|json)", None, False),
        (rf"\.{_PROJECT}\.(?:md|json)\.[A-Za-z0-9_]+", None, False),
    ],
    "logs": [(r"(?:hooks|mcp)\.log(?:\.1)?|background\.log|extract\.log", None, False)],
    "spool": [
        (r"\d{20}-\d+-\d+\.json(?:\.\d+\.claim)?", None, False),
        (r"\.\d{20}-\d+-\d+\.tmp", None, False),
        (r"\.reserve", None, False),  # room kept for captures made on a full disk (agentctx_hooks.spool)
    ],
    "state": [
        (r"[A-Za-z0-9_.~-]+\.json", _is_state_file, False),
        (r"[A-Za-z0-9_.~-]+\.lock", _is_lock_file, False),
        (r"[A-Za-z0-9_.~-]+\.json\.\d+\.tmp", None, False),
    ],
    # each project's relevance floors (agentctx_store.calibration, the warm service): the keyword
    # folder first, so it is empty (and removed) before its parent is tried
    "calibration/keyword": [
        (rf"{_PROJECT}\.json", None, False),
        (rf"\.{_PROJECT}\.json\.[A-Za-z0-9_]+", None, False),
    ],
    "calibration": [
        (rf"{_PROJECT}\.json", None, False),
        (rf"\.{_PROJECT}\.json\.[A-Za-z0-9_]+", None, False),
    ],
    "locks": [(r"extract-[A-Za-z0-9_.-]+\.lock", None, False)],
    "open-sessions": [(r"[A-Za-z0-9_.-]+\.json", None, False), (r"[A-Za-z0-9_.-]+\.json\.\d+\.tmp", None, False)],
    "profile": [(r"preferences\.(?:md|json)", None, False)],
    # the embedding model cache: fastembed / Hugging Face hub folders named after the model
    "models": [
        (r"models--[A-Za-z0-9_.-]+|fast-[A-Za-z0-9_.-]+|\.locks", None, True),
        (r"\.download-failed\.json", None, False),
    ],
    "exports": [],
}


def _matches(path: Path, rules: list[Rule]) -> Rule | None:
    for pattern, check, whole in rules:
        if re.fullmatch(pattern, path.name) and (check is None or check(path)):
            return pattern, check, whole
    return None


def our_paths(data_home: Path, *, config_is_ours: bool, legacy_state: Path | None = None) -> list[Path]:
    """Every file (and model cache folder) of ours under `data_home`, deepest first; with
    `legacy_state`, also the session state older versions kept in `$TMPDIR/agentctx-<uid>`."""
    found: list[Path] = []
    if not data_home.is_dir():
        return found
    for name in TOP_FILES:
        if (data_home / name).is_file():
            found.append(data_home / name)
    found.extend(sorted(path for path in data_home.glob("hang-*") if path.is_file()))  # test markers
    if config_is_ours:
        found.append(data_home / "config.json")
    places = [(data_home / folder, rules) for folder, rules in FOLDERS.items()]
    if legacy_state is not None:
        places.append((legacy_state, FOLDERS["state"]))
    for folder, rules in places:
        if not folder.is_dir() or folder.is_symlink():
            continue
        for child in sorted(folder.iterdir()):
            if child.is_symlink():
                continue
            rule = _matches(child, rules)
            if rule is None:
                continue
            if child.is_dir():
                if rule[2]:
                    found.append(child)
            else:
                found.append(child)
    return found


def our_folders(data_home: Path, legacy_state: Path | None = None) -> list[Path]:
    """Folders we create, removed when (and only when) they are empty afterwards."""
    folders = [data_home / name for name in FOLDERS]
    if legacy_state is not None:
        folders.append(legacy_state)
    return [*folders, data_home]


def delete(paths: list[Path], folders: list[Path]) -> list[Path]:
    """Delete `paths`, then each folder of `folders` that is empty; returns the folders kept."""
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    kept: list[Path] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        try:
            os.rmdir(folder)
        except OSError:
            kept.append(folder)
    return kept
