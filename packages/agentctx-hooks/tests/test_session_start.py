"""SessionStart: the digest from a file, composed once when missing, with the snapshot after compaction."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentctx_store import NewRecord, Project, Store, digest, digest_file
from agentctx_store.budget import SESSION_START, estimate_tokens
from agentctx_store.fence import DIGEST_CLOSE, DIGEST_OPEN
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx_hooks import log, state

Hook = Callable[..., dict[str, Any] | None]
Payload = Callable[..., dict[str, Any]]
Context = Callable[[dict[str, Any] | None], str]


@pytest.mark.parametrize("source", ["startup", "resume", "compact", "fork", "clear"])
def test_every_source_gets_the_digest(
    hook: Hook, payload: Payload, context: Context, store: Store, project: Project, project_dir: Path, source: str
) -> None:
    store.add(project, NewRecord(type="decision", title="Use SQLite in WAL mode", body="One file, WAL, no server."))
    store.close()
    text = context(hook("SessionStart", payload("SessionStart", project_dir, source=source)))
    assert text.startswith(f"{DIGEST_OPEN}\n## Project: {project.name}")
    assert "Use SQLite in WAL mode" in text
    assert "ctx_search" in text  # the MCP hint


def test_missing_digest_is_composed_once_with_the_detected_profile(
    hook: Hook, payload: Payload, context: Context, project: Project, project_dir: Path
) -> None:
    (project_dir / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nrequires-python = ">=3.11"\ndependencies = ["fastapi"]\n'
        '[project.scripts]\ndemo = "demo.cli:main"\n',
        encoding="utf-8",
    )
    assert digest_file.read(project.project_id) is None
    text = context(hook("SessionStart", payload("SessionStart", project_dir)))
    assert "Python >=3.11: fastapi" in text
    assert "demo → demo.cli:main" in text
    assert digest_file.read(project.project_id) is not None  # written: the next start reads the file
    log_text = Path(log.log_path()).read_text(encoding="utf-8")
    assert "consolidate --project" in log_text  # a consolidation was asked for (spawns are off in tests)


def test_fast_path_reads_the_file_without_the_store(
    hook: Hook, payload: Payload, context: Context, project: Project, project_dir: Path
) -> None:
    digest.write(
        project.project_id,
        f"{DIGEST_OPEN}\n## Project: written by consolidation\n- [decision 01ARZ3NDEKTSV4RRFFQ69G5FAV] X\n{DIGEST_CLOSE}",
        kind="full",
    )
    session = payload("SessionStart", project_dir, source="startup")
    text = context(hook("SessionStart", session))
    assert text.startswith(f"{DIGEST_OPEN}\n## Project: written by consolidation")
    data = state.load(session["session_id"])
    assert "01ARZ3NDEKTSV4RRFFQ69G5FAV" in data["injected"]  # prompts will not inject it again
    assert data["pending"]["tokens"] == estimate_tokens(text)  # accounting waits for the next store write


def test_over_budget_digest_file_is_cut(
    hook: Hook, payload: Payload, context: Context, project: Project, project_dir: Path
) -> None:
    digest.write(project.project_id, f"{DIGEST_OPEN}\n## Project: big\n" + "word " * 5000, kind="full")
    text = context(hook("SessionStart", payload("SessionStart", project_dir)))
    assert SESSION_START.allows(text)
    assert text.startswith(f"{DIGEST_OPEN}\n## Project: big")
    assert text.count(DIGEST_CLOSE) == 1  # cut inside the fence: it still closes


def test_compact_carries_the_pre_compact_snapshot(
    hook: Hook, payload: Payload, context: Context, project: Project, project_dir: Path
) -> None:
    session = "compact-session"
    hook("UserPromptSubmit", payload("UserPromptSubmit", project_dir, session, prompt="refactor the billing module"))
    edit = payload(
        "PostToolUse",
        project_dir,
        session,
        tool_name="Edit",
        tool_input={"file_path": str(project_dir / "src" / "billing.py"), "old_string": "a", "new_string": "b"},
        tool_response={"filePath": str(project_dir / "src" / "billing.py")},
    )
    hook("PostToolUse", edit)
    hook("PreCompact", payload("PreCompact", project_dir, session, trigger="auto", custom_instructions=None))
    text = context(hook("SessionStart", payload("SessionStart", project_dir, session, source="compact")))
    assert "## Before compaction" in text
    assert "refactor the billing module" in text
    assert "src/billing.py" in text
    startup = context(hook("SessionStart", payload("SessionStart", project_dir, session, source="startup")))
    assert "## Before compaction" not in startup


def test_no_cwd_means_nothing_and_a_log_line(hook: Hook, payload: Payload, monkeypatch: pytest.MonkeyPatch) -> None:
    data = payload("SessionStart", "relative/dir")
    assert hook("SessionStart", data) is None
    assert "no usable cwd" in Path(log.log_path()).read_text(encoding="utf-8")


record_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from(list("🦀漢字 \n\t{}\"'<>")),
    min_size=1,
    max_size=2000,
).filter(lambda text: text.strip())


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    bodies=st.lists(record_text, min_size=1, max_size=12),
    title=st.text(min_size=1, max_size=100).filter(str.strip),
    pinned=st.booleans(),
)
def test_session_start_and_prompt_output_stay_within_budget_whatever_the_store_holds(
    hook: Hook,
    payload: Payload,
    context: Context,
    store: Store,
    tmp_path_factory: pytest.TempPathFactory,
    bodies: list[str],
    title: str,
    pinned: bool,
) -> None:
    from agentctx_store import resolve_project
    from agentctx_store.budget import PROMPT

    root = tmp_path_factory.mktemp("budget")
    project = resolve_project(root)
    title_line = " ".join(title.split())[:100] or "x"
    with Store.open() as store:
        for index, body in enumerate(bodies):
            for kind in ("decision", "convention", "handover"):
                store.add(project, NewRecord(type=kind, title=f"{title_line} {index}"[:120], body=body, pinned=pinned))
    for source in ("startup", "compact"):
        text = context(hook("SessionStart", payload("SessionStart", root, source=source)))
        assert SESSION_START.allows(text)
    words = " ".join(" ".join(bodies).split()[:30]) + " " + title_line
    text = context(hook("UserPromptSubmit", payload("UserPromptSubmit", root, prompt=words)))
    assert PROMPT.allows(text)
    assert len(text) <= 8000 and estimate_tokens(text) <= 2000


def test_prompt_output_stays_within_budget_with_ten_thousand_matches(
    hook: Hook, payload: Payload, context: Context, store: Store, project: Project, project_dir: Path
) -> None:
    from agentctx_store.budget import PROMPT

    body = "Kafka consumer offsets " + "🦀 漢字 partition rebalance " * 60
    with store.transaction():
        for index in range(10_000):
            store.add(project, NewRecord(type="discovery", title=f"Kafka offsets note {index}", body=body[:1990]))
    for index in range(40):
        store.add(project, NewRecord(type="convention", title=f"Unrelated rule {index}", body=f"Topic number {index}."))
    for index in range(5):  # the ones that clear the floor, each as large as a record may be
        title = f"Kafka offsets reset runbook procedure {index}"
        store.add(project, NewRecord(type="decision", title=title, body=("reset runbook " + body)[:2000]))
    store.close()
    text = context(
        hook(
            "UserPromptSubmit", payload("UserPromptSubmit", project_dir, prompt="kafka offsets reset runbook procedure")
        )
    )
    assert text
    assert PROMPT.allows(text)
    assert 1 <= text.count("<agentctx-record ") <= 3
    json.dumps(text)  # the hook printed it as JSON


def test_digest_state_file_never_leaves_the_state_dir(hook: Hook, payload: Payload, project_dir: Path) -> None:
    hook("SessionStart", payload("SessionStart", project_dir, "../../etc/x", source="startup"))
    files = os.listdir(state.state_dir())
    assert files == [".._.._etc_x.json"] or all("/" not in name for name in files)


EARLIER = "01ARZ3NDEKTSV4RRFFQ69G5FAW"  # a record a prompt injected before the resume
# One transcript line as Claude Code 2.1.332 writes hook output (tests-e2e/fixtures/claude-code/transcripts).
REPLAYED_LINE = (
    '{"type":"attachment","attachment":{"type":"hook_additional_context",'
    '"content":["<agentctx-record id=\\"01ARZ3NDEKTSV4RRFFQ69G5FAW\\">"],"hookName":"UserPromptSubmit"}}\n'
)


# The first line of a Codex 0.171.0 rollout, shortened (a real one: tests-e2e/test_compaction.py).
CODEX_ROLLOUT_HEAD = (
    '{"timestamp":"2026-12-06T18:28:47.891Z","ordinal":0,"type":"session_meta","payload":{"id":"01a24c9d"}}\n'
)


@pytest.mark.parametrize(
    ("transcript", "kept"),
    [
        pytest.param(REPLAYED_LINE, True, id="2.1 keeps hook output and replays it"),
        pytest.param("x" * (1 << 20) + REPLAYED_LINE, True, id="2.1, entry past the first chunk"),
        pytest.param('{"type":"user","message":{"role":"user","content":"hi"}}\n', False, id="2.0 replays nothing"),
        pytest.param(CODEX_ROLLOUT_HEAD, True, id="Codex replays its rollout"),
        pytest.param(None, True, id="no transcript: as before"),
    ],
)
def test_resume_keeps_earlier_injections_only_when_the_client_replays_them(
    hook: Hook,
    payload: Payload,
    project: Project,
    project_dir: Path,
    tmp_path: Path,
    transcript: str | None,
    kept: bool,
) -> None:
    digest.write(
        project.project_id,
        f"{DIGEST_OPEN}\n## Project: p\n- [decision 01ARZ3NDEKTSV4RRFFQ69G5FAV] X\n{DIGEST_CLOSE}",
        kind="full",
    )
    session = payload("SessionStart", project_dir, source="resume")
    path = tmp_path / "transcript.jsonl"
    if transcript is not None:
        path.write_text(transcript, encoding="utf-8")
    session["transcript_path"] = str(path)
    data = state.load(session["session_id"])
    state.add_injected(data, [EARLIER])
    state.save(session["session_id"], data)

    hook("SessionStart", session)
    injected = state.load(session["session_id"])["injected"]
    assert (EARLIER in injected) is kept
    assert "01ARZ3NDEKTSV4RRFFQ69G5FAV" in injected  # the digest just printed, either way


def test_a_digest_is_old_past_the_refresh_interval_or_with_an_unreadable_date() -> None:
    import time

    from agentctx_store.clock import utc_now

    from agentctx_hooks.session_start import REFRESH_AFTER_SECONDS, _is_old

    assert not _is_old(utc_now())
    assert _is_old(time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - REFRESH_AFTER_SECONDS - 60)))
    assert not _is_old(time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - 60)))  # any ISO form
    assert _is_old("not a date") and _is_old("2026-02-30T00:00:00.000Z")
