"""What a new user tripped over (issue 10), each through the real CLI entry point.

Item numbers refer to the issue. Every test here failed on the code before the fix.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from agentctx_store import Store, resolve_project
from agentctx_store.records import NewRecord

# -- 1. a fact may change type when it is superseded --------------------------------------


def test_import_lets_a_decision_supersede_a_convention(cli, project_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "switch.jsonl"
    rows = [
        {"id": "old", "type": "convention", "title": "Run tests with VSTest", "body": "Filter tests with VSTest --filter."},
        {"id": "new", "type": "decision", "title": "Run tests on MTP", "body": "We now run tests on MTP; never use VSTest --filter.", "supersedes": ["old"]},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = cli("import", str(path), "--project", str(project_dir))
    assert result.code == 0, result.err
    assert "2 new" in result.out

    found = cli("search", "VSTest", "filter", "tests", "--all", "--project", str(project_dir), "--json").json()
    assert [hit["title"] for hit in found] == ["Run tests on MTP"]  # never the superseded convention
    head = found[0]["id"]
    chain = cli("history", head, "--project", str(project_dir), "--json").json()
    assert [(link["type"], link["title"]) for link in chain] == [
        ("convention", "Run tests with VSTest"),
        ("decision", "Run tests on MTP"),
    ]
    assert chain[0]["superseded_by"] == head


def test_record_supersedes_and_supersede_type_may_change_the_type(cli, record, project_dir: Path) -> None:
    old = record("convention", "Format with black", "We format Python with black.")
    new = record("decision", "Format with ruff", "We format with ruff format.", "--supersedes", old["id"])
    assert new["type"] == "decision"
    moved = cli("supersede", new["id"], "--body", "Back to black.", "--type", "preference",
                "--project", str(project_dir), "--json")  # fmt: skip
    assert moved.code == 0, moved.err
    assert moved.json()["new"]["type"] == "preference"
    kept = cli(
        "supersede", moved.json()["new"]["id"], "--body", "Black it is.", "--project", str(project_dir), "--json"
    )
    assert kept.json()["new"]["type"] == "preference"  # without --type, the old type stays


def test_keyed_types_keep_their_rule(cli, record, project_dir: Path) -> None:
    handover = record("handover", "Where we stopped", "Half-way through the migration.")
    result = cli("record", "-t", "decision", "--title", "t", "--body", "b", "--supersedes", handover["id"],
                 "--project", str(project_dir))  # fmt: skip
    assert result.code == 1
    assert "a handover is superseded only by a handover" in result.err
    decision = record("decision", "Use Redis", "Cache in Redis.")
    result = cli("record", "-t", "handover", "--title", "t", "--body", "b", "--supersedes", decision["id"],
                 "--project", str(project_dir))  # fmt: skip
    assert result.code == 1 and "handover" in result.err
    with Store.open() as store:  # a profile key only by the same key
        project = resolve_project(project_dir)
        first = store.add(project, NewRecord(type="profile", title="lang", body="Python", key="language"))
        with pytest.raises(Exception, match="same key"):
            store.add(
                project, NewRecord(type="profile", title="os", body="Linux", key="os"), supersedes=first.record_id
            )
        store.add(
            project, NewRecord(type="profile", title="lang", body="Rust", key="language"), supersedes=first.record_id
        )


# -- 2. an export can be imported into another project -----------------------------------


def test_an_export_imports_into_another_project_with_new_ids(
    cli, record, project_dir: Path, other_dir: Path, tmp_path: Path
) -> None:
    old = record("decision", "Deploy with Docker", "We deploy with Docker.")
    record("decision", "Deploy with Nomad", "We deploy with Nomad now.", "--supersedes", old["id"])
    export = tmp_path / "alpha.md"
    assert cli("export", "--history", "--output", str(export), "--project", str(project_dir)).code == 0

    refused = cli("import", str(export), "--project", str(other_dir))
    assert refused.code == 1
    assert "--new-ids" in refused.err

    done = cli("import", str(export), "--new-ids", "--project", str(other_dir), "--json")
    assert done.code == 0, done.err
    assert done.json()["created"] == 2
    theirs = cli("search", "deploy", "--all", "--project", str(other_dir), "--json").json()
    assert [hit["title"] for hit in theirs] == ["Deploy with Nomad"]  # the link inside the file was remapped
    assert theirs[0]["id"] not in {old["id"]}
    chain = cli("history", theirs[0]["id"], "--project", str(other_dir), "--json").json()
    assert [link["title"] for link in chain] == ["Deploy with Docker", "Deploy with Nomad"]
    assert {link["id"] for link in chain}.isdisjoint({old["id"]})
    ours = cli("search", "deploy", "--all", "--project", str(project_dir), "--json").json()
    assert [hit["id"] for hit in ours] != [hit["id"] for hit in theirs]  # the source project is untouched


# -- 3. an import that finds nothing is an error -----------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("notes.md", "# My notes\n\nNothing agentctx about this.\n", "No records found"),
        ("broken.jsonl", "not json\n", "Line 1: not valid JSON"),
        ("-", "", "No records found in stdin"),
    ],
)
def test_an_import_that_finds_nothing_fails(cli, project_dir: Path, tmp_path: Path, name, text, expected) -> None:
    if name == "-":
        result = cli("import", "-", "--project", str(project_dir), input=text)
    else:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        result = cli("import", str(path), "--project", str(project_dir))
    assert result.code == 1
    assert expected in result.err
    assert "Imported" not in result.out


def test_a_dry_run_of_one_record_says_record(cli, project_dir: Path) -> None:
    line = json.dumps({"type": "decision", "title": "One", "body": "Just one."})
    result = cli("import", "-", "--dry-run", "--project", str(project_dir), input=line)
    assert result.code == 0, result.err
    assert result.out.startswith("Would import 1 record into")


# -- 4. --as-of with a bare date means the end of that day --------------------------------


def test_as_of_a_bare_date_includes_that_days_records(cli, project_dir: Path) -> None:
    line = json.dumps({"type": "decision", "title": "Ship on Fridays", "body": "We ship on Fridays.",
                       "valid_from": "2026-12-01T15:00:00Z"})  # fmt: skip
    assert cli("import", "-", "--project", str(project_dir), input=line).code == 0
    found = cli("search", "ship", "fridays", "--as-of", "2026-12-01", "--project", str(project_dir), "--json").json()
    assert [hit["title"] for hit in found] == ["Ship on Fridays"]
    before = cli("search", "ship", "fridays", "--as-of", "2026-11-30", "--project", str(project_dir), "--json").json()
    assert before == []
    shown = cli("show", found[0]["id"], "--as-of", "2026-12-01", "--project", str(project_dir))
    assert shown.code == 0, shown.err


def test_as_of_empty_is_an_error(cli, project_dir: Path) -> None:
    result = cli("search", "ship", "--as-of", "", "--project", str(project_dir))
    assert result.code == 1
    assert "--as-of is empty" in result.err


# -- 5. search --history: the current record first, readable scores -----------------------


def test_search_history_ranks_the_head_above_its_superseded_match(cli, record, project_dir: Path) -> None:
    old = record("decision", "Cache sessions in Redis", "Redis caches sessions; Redis cluster, Redis sentinel, Redis.")
    new = record(
        "decision", "Cache sessions in memory", "Sessions now live in process memory.", "--supersedes", old["id"]
    )
    found = cli("search", "redis", "sessions", "--history", "--all", "--project", str(project_dir), "--json").json()
    ids = [hit["id"] for hit in found]
    assert old["id"] in ids and new["id"] in ids
    assert ids.index(new["id"]) < ids.index(old["id"])
    text = cli("search", "redis", "sessions", "--history", "--all", "--project", str(project_dir)).out
    lines = text.splitlines()
    assert new["id"] in lines[0]
    assert not re.search(r"\de-\d", text), text  # no 2.95e-06
    assert re.match(r"\s*\d{1,3}%\s", lines[0]), lines[0]


# -- 6. a read-only store can be read ----------------------------------------------------


def _as_reader() -> list[str] | None:
    """A command prefix under which the store's permission bits bind (root ignores them)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    probe = subprocess.run([setpriv, "--bounding-set=-dac_override,-dac_read_search", "true"], check=False)
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"] if probe.returncode == 0 else None


def test_a_read_only_store_can_be_read(record, project_dir: Path, isolated_home: Path, tmp_path: Path) -> None:
    prefix = _as_reader()
    if prefix is None:
        pytest.skip("running as root without setpriv: file permissions do not bind")
    made = record("decision", "Use Postgres", "We store data in Postgres.")
    data = isolated_home / ".agentctx"
    read_only = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
    for path in data.glob("agentctx.db*"):
        path.chmod(read_only)
    data.chmod(read_only | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    try:

        def agentctx(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [*prefix, sys.executable, "-m", "agentctx", *args, "--project", str(project_dir)],
                capture_output=True, text=True, check=False, env=os.environ.copy(), timeout=120,
            )  # fmt: skip

        for args in (("search", "postgres"), ("show", made["id"]), ("status",), ("export",), ("history", made["id"])):
            result = agentctx(*args)
            assert result.returncode == 0, (args, result.stderr)
            assert "not writable" not in result.stderr
        assert "Use Postgres" in agentctx("search", "postgres").stdout
        write = agentctx("record", "-t", "decision", "--title", "t", "--body", "b")
        assert write.returncode == 1
        assert "not writable" in write.stderr and "Traceback" not in write.stderr
    finally:
        data.chmod(stat.S_IRWXU)
        for path in data.glob("agentctx.db*"):
            path.chmod(stat.S_IRUSR | stat.S_IWUSR)


# -- 7. doctor reads the config ------------------------------------------------------------


def test_doctor_does_not_warn_about_the_key_after_no_llm(cli, project_dir: Path) -> None:
    assert cli("config", "--no-llm").code == 0
    checks = {check["name"]: check for check in cli("doctor", "--project", str(project_dir), "--json").json()}
    assert checks["api key"]["state"] == "ok"
    assert "ANTHROPIC_API_KEY" not in checks["api key"]["fix"]


# -- 8. no Python internals in errors ------------------------------------------------------


@pytest.mark.parametrize(("key", "value"), [("reinforce_threshold", "abc"), ("monthly_cap_usd", "lots")])
def test_a_bad_number_names_the_setting_and_an_example(cli, key: str, value: str) -> None:
    result = cli("config", key, value)
    assert result.code == 1
    assert key in result.err and "such as" in result.err
    assert "invalid literal" not in result.err and "could not convert" not in result.err


def test_an_unwritable_config_names_the_path_and_the_fix(cli, isolated_home: Path) -> None:
    prefix = _as_reader()
    if prefix is None:
        pytest.skip("running as root without setpriv: file permissions do not bind")
    data = isolated_home / ".agentctx"
    data.mkdir(exist_ok=True)
    data.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        result = subprocess.run([*prefix, sys.executable, "-m", "agentctx", "config", "--no-llm"],
                                capture_output=True, text=True, check=False, env=os.environ.copy(), timeout=120)  # fmt: skip
    finally:
        data.chmod(stat.S_IRWXU)
    assert result.returncode == 1
    assert "config.json" in result.stderr and "AGENTCTX_HOME" in result.stderr
    assert "Errno" not in result.stderr and "PermissionError" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# -- 9. every install hint says the same true thing ----------------------------------------


def test_ui_without_the_extra_gives_the_doctor_hint(cli, project_dir: Path, monkeypatch) -> None:
    from agentctx.cli._health import OPTIONAL_PARTS

    monkeypatch.setitem(sys.modules, "agentctx_ui.server", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "agentctx_ui", None)
    result = cli("ui", "--no-open", "--project", str(project_dir))
    assert result.code == 1
    assert "uv tool install 'agentctx[ui]'" not in result.err  # that is PyPI's unrelated package
    hint = next(fix for name, _, _, fix in OPTIONAL_PARTS if name == "dashboard")
    assert hint in result.err
    assert hint.startswith("`uv sync --all-packages --all-extras")  # this checkout's environment (test_wheel: others)


def test_models_download_without_the_extra_gives_the_doctor_hint(cli, monkeypatch) -> None:
    from agentctx.cli import _health

    real = _health.module_available
    monkeypatch.setattr(_health, "module_available", lambda name: name != "agentctx_embed" and real(name))
    result = cli("models", "download")
    assert result.code == 1
    assert _health.install_command("embeddings") in result.err


# -- 11. shell completion ------------------------------------------------------------------


def test_shell_completion_is_offered_and_completes(cli, tmp_path: Path) -> None:
    help_text = cli("--help").out
    assert "--install-completion" in help_text and "--show-completion" in help_text
    # typer guesses the shell from the process tree unless told not to (its own test switch); then
    # `--install-completion bash` names it, as a user without a detectable shell would
    env = os.environ | {
        "HOME": str(tmp_path),
        "SHELL": "/bin/bash",
        "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1",
    }
    installed = subprocess.run([sys.executable, "-m", "agentctx", "--install-completion", "bash"], capture_output=True,
                               text=True, check=False, env=env, timeout=120)  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert (tmp_path / ".bash_completions" / "agentctx.sh").is_file()
    env |= {"_AGENTCTX_COMPLETE": "complete_bash", "COMP_WORDS": "agentctx sea", "COMP_CWORD": "1"}
    completed = subprocess.run([sys.executable, "-m", "agentctx"], capture_output=True, text=True, check=False,
                               env=env, timeout=120)  # fmt: skip
    assert completed.stdout.split() == ["search"]


# -- 13. --help shows no Python metavars ---------------------------------------------------


def test_help_has_no_python_metavars(cli) -> None:
    from typer.main import get_command

    from agentctx.cli.app import app

    def walk(command, path):
        yield path
        for name, sub in (getattr(command, "commands", None) or {}).items():
            yield from walk(sub, [*path, name])

    bad = []
    for path in walk(get_command(app), []):
        text = cli(*path, "--help").out
        bad += [(" ".join(path), found) for found in re.findall(r"\{\w+\}|<list\[\w+\]>|<\w+\[", text)]
    assert bad == []
    assert "Usage: agentctx import [OPTIONS] FILE\n" in cli("import", "--help").out


def test_the_docs_index_lists_each_page_once() -> None:
    index = (Path(__file__).resolve().parents[3] / "docs" / "index.md").read_text(encoding="utf-8")
    pages = re.findall(r"\]\((\w[\w./-]*\.md)\)", index)
    assert pages, "docs/index.md links no page"
    assert sorted(page for page in set(pages) if pages.count(page) > 1) == []


# -- 12. compiled bytecode for the installed tool, not on every `uv run` --------------------


def test_bytecode_is_compiled_at_install_and_sync_not_on_every_uv_run() -> None:
    import tomllib

    from agentctx.cli._install import install_command

    root = Path(__file__).resolve().parents[3]
    workspace = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert "compile-bytecode" not in workspace.get("tool", {}).get("uv", {})  # it recompiled ~7,000 files per run
    ci = (root / ".ci" / "run").read_text(encoding="utf-8")
    lines = [line.split("#")[0].strip() for line in ci.splitlines()]
    sync = lines.index("uv sync --all-packages --all-extras --frozen")
    assert lines[sync - 1 : sync + 2] == [
        "export UV_COMPILE_BYTECODE=1",
        "uv sync --all-packages --all-extras --frozen",
        "unset UV_COMPILE_BYTECODE",
    ]
    assert "uv tool install --compile-bytecode ./packages/agentctx" in (root / "README.md").read_text()
    assert "--compile-bytecode" not in install_command("ui")  # the checkout's sync; uv tool hints: test_wheel.py
