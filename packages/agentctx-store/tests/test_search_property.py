"""Any text a developer can type or paste must search without raising (FTS5 syntax never leaks through)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx_store import NewRecord, Project, Store, search

FTS_SYNTAX = ['"', "'", ":", "(", ")", "-", "*", "^", "+", "NEAR", "NEAR(", "AND", "OR", "NOT", "{", "}", ",", "\\"]
WORDS = ["auth", "token", "jwt", "title", "body", "records_fts", "rowid", "🚀", "日本語", "ß", "\x00", "\u202e", "İ"]
PROMPTS = st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from(FTS_SYNTAX + WORDS + [" ", "\n", "\t"]), max_size=60).map("".join),
    st.lists(st.sampled_from(FTS_SYNTAX + WORDS), max_size=30).map(" ".join),
)
RECORDS = [
    ("JWT auth tokens", "Access tokens are JWTs signed with RS256; refresh tokens rotate."),
    ("NEAR operator", 'Search syntax like NEAR(a b) and "quoted" text is stored verbatim: title:body.'),
    ("Unicode names", "Straße, 日本語 and emoji 🚀 appear in customer data."),
]
EXPLICIT = [
    '"',
    '""',
    '"unterminated',
    "title:auth",
    "body: NEAR(auth token, 3)",
    "auth AND OR NOT token",
    "(((",
    ")",
    "-token",
    "*",
    "auth*",
    "^auth",
    "NEAR",
    "col:(a OR b)",
    "\x00",
    "a\x00b auth",
    "🚀🚀🚀",
    "records_fts MATCH 'x'); DROP TABLE records; --",
    " ".join(["token"] * 5000),
]


def _seed(store: Store, project: Project) -> None:
    for title, body in RECORDS:
        store.add(project, NewRecord(type="decision", title=title, body=body))


def _pasted_log(size: int = 50_000) -> str:
    """A realistic paste: a Python traceback and JSON log lines, repeated to `size` characters."""
    rng = random.Random(7)
    lines = []
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(
            rng.choice(
                [
                    'Traceback (most recent call last):\n  File "/app/auth.py", line 42, in verify',
                    f'{{"level":"error","ts":{rng.random():.6f},"msg":"token expired: \\"jwt\\" (code=401)"}}',
                    'sqlite3.OperationalError: fts5: syntax error near "\'"',
                    f"2026-11-29T13:{rng.randint(0, 59):02d}:00Z WARN NEAR(limit) AND * -- retry {rng.randint(1, 9)}",
                ]
            )
        )
    return "\n".join(lines)[:size]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=PROMPTS)
def test_search_never_raises_on_any_prompt(store: Store, project: Project, prompt: str) -> None:
    if not store.list_records(project):
        _seed(store, project)
    for floor in (None, 1.4):
        result = search(store, project, prompt, floor=floor)
        assert result.degraded is None
        assert all(hit.record.project_id == project.project_id for hit in result.hits)
    search(store, project, prompt, include_superseded=True, types=["decision"], scope="project")


@pytest.mark.parametrize("prompt", EXPLICIT, ids=range(len(EXPLICIT)))
def test_fts_syntax_and_control_characters_are_searched_as_plain_words(
    store: Store, project: Project, prompt: str
) -> None:
    _seed(store, project)
    search(store, project, prompt)
    search(store, project, prompt, floor=None)


def test_a_50kb_pasted_log_searches_and_still_finds_the_relevant_record(store: Store, project: Project) -> None:
    _seed(store, project)
    log = _pasted_log()
    assert len(log) == 50_000
    result = search(store, project, log, floor=None)
    assert result.hits and result.hits[0].record.title == "JWT auth tokens"
    assert len(result.terms) <= 48


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=PROMPTS)
def test_like_search_never_raises_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: Project, prompt: str
) -> None:
    monkeypatch.setenv("AGENTCTX_SIMULATE_NO_FTS5", "1")
    with Store.open(tmp_path / "like.db") as store:
        if not store.list_records(project):
            _seed(store, project)
        result = search(store, project, prompt)
        assert result.degraded in (None, "like-search")
        search(store, project, prompt + " %_\\", floor=None)
