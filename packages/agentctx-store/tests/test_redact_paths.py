"""Issue 13, items 1 and 2: one redactor, generated from gitleaks' rules and kept current,
linear on crafted input, and applied by every store write (records, edits, supersessions,
imports, session metadata, graph nodes, exports)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from secrets_corpus import NEAR_MISSES, SECRETS

from agentctx_store import NewRecord, Project, Store, redact
from agentctx_store._secret_rules import GLOBAL_ALLOW, RULES
from agentctx_store.sharing import transfer

ROOT = Path(__file__).resolve().parents[3]
CORPUS_TEXT = "\n".join(text for _label, text, _secret in SECRETS)


def test_the_corpus_is_large_and_has_near_misses() -> None:
    assert len(SECRETS) + len(NEAR_MISSES) >= 80 and len(NEAR_MISSES) >= 30


def test_the_generated_rules_are_current_and_compile() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "secret-rules" / "generate.py"), "--check"], capture_output=True
    )
    assert done.returncode == 0, "run scripts/secret-rules/generate.py: _secret_rules.py is out of date"
    assert len(RULES) > 200
    for rule in RULES:
        re.compile(rule[1])
        for allow in rule[5]:
            re.compile(allow)
    for allow in GLOBAL_ALLOW:
        re.compile(allow)


def test_extraction_hooks_and_store_share_one_redactor() -> None:
    import agentctx_extract

    assert agentctx_extract.redact is redact.redact and agentctx_extract.redact_text is redact.redact_text
    assert not (ROOT / "packages" / "agentctx-extract" / "src" / "agentctx_extract" / "redact.py").exists()


def test_provider_rules_come_from_gitleaks() -> None:
    """The kinds issue 13 listed as leaking are caught by a gitleaks rule, not a hand-written one."""
    by_label = {label: text for label, text, _secret in SECRETS}
    expected = {
        "slack app token": "slack-app-token",
        "twilio": "twilio-api-key",
        "telegram": "telegram-bot-api-token",
        "discord": "discord-api-token",
        "mailchimp": "mailchimp-api-key",
        "square": "square-access-token",
        "shopify": "shopify-access-token",
        "vault": "vault-service-token",
        "databricks": "databricks-api-token",
        "age": "age-secret-key",
        "linear": "linear-api-key",
        "postman": "postman-api-token",
        "new relic": "new-relic-user-api-key",
        "artifactory": "artifactory-api-key",
    }
    for label, kind in expected.items():
        assert kind in redact.redact(by_label[label]).kinds, label


# -- linear time --------------------------------------------------------------------------------

CRAFTED = {
    "dotted run": "a.",  # a URL scheme could restart at every letter
    "mysql words": "mysql ",  # the `mysql … -p` rule scanned to the line's end from each one
    "key headers": "-----BEGIN RSA PRIVATE KEY-----\n",
    "curl words": "curl ",  # gitleaks' curl rules: 31 s and 65 s on 64 KB before bounding
    "schemes": "x://",
    "token words": "token ",
    "api keys": "api_key:",
    "at signs": "u://a:b@",
}


def _seconds(text: str, pattern: re.Pattern[str] | None = None) -> float:
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        if pattern is None:
            redact.redact(text)
        else:
            pattern.sub("", text)
        best = min(best, time.perf_counter() - started)
    return best


def _crafted(unit: str, size: int = 64 * 1024) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("unit", list(CRAFTED.values()), ids=list(CRAFTED))
def test_crafted_64_kb_inputs_are_redacted_in_linear_time(unit: str) -> None:
    """A complexity guard, not a speed target (bench/test_bench_redact.py prints the figures): the
    quadratic cases took 5.4 s (mysql), 31 s and 65 s (gitleaks' curl rules) on 64 KB; linear
    ones take tens of milliseconds. The ceiling leaves a wide margin for shared CPUs."""
    text = _crafted(unit)
    redact.redact(text)  # compile what the text triggers
    assert _seconds(text) < 2.0, unit


def test_every_gitleaks_rule_is_linear_on_its_own_keywords() -> None:
    """Each rule on 64 KB of its own keywords (what its prefilter lets through)."""
    slow = []
    for rule in RULES:
        unit = " ".join(rule[2] or (rule[0],)) + " = x9 "
        took = _seconds(_crafted(unit), re.compile(rule[1]))
        if took > 1.0:
            slow.append((rule[0], round(took, 2)))
    assert slow == []


# -- every store write ------------------------------------------------------------------------


def _leaked(text: str) -> list[str]:
    return [label for label, _text, secret in SECRETS if secret in text]


def _everything(store: Store) -> str:
    rows = []
    for (table,) in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        if table.startswith("records_fts_"):
            continue
        rows.extend(tuple(row) for row in store.conn.execute(f'SELECT * FROM "{table}"'))
    return json.dumps(rows, default=str)


def test_every_store_write_redacts(store: Store, project: Project) -> None:
    first = store.add(project, NewRecord(type="decision", title="Secrets in a body", body=CORPUS_TEXT[:1900]))
    store.edit(project, first.record_id, body=CORPUS_TEXT[1900:3800])
    store.supersede(project, first.record_id, body=CORPUS_TEXT[3800:5700], rationale=CORPUS_TEXT[5700:7000])
    for label, text, _secret in SECRETS:
        store.add(project, NewRecord(type="discovery", title=text.splitlines()[0][:120], body=text))
        store.upsert_node(project, "test", text[:200])
        store.update_session_meta(project, "sess-1", **{f"k{len(label)}": [text, {"command": text}]})
    assert _leaked(_everything(store)) == []
    assert _leaked(transfer.render_markdown(store, project, include_history=True)) == []


def test_import_redacts(store: Store, project: Project) -> None:
    lines = [
        json.dumps({"type": "discovery", "title": f"Item {index}", "body": text})
        for index, (_l, text, _s) in enumerate(SECRETS)
    ]
    transfer.import_items(store, project, transfer.parse_file_text("\n".join(lines)))
    assert _leaked(_everything(store)) == []


def test_near_misses_are_stored_unchanged(store: Store, project: Project) -> None:
    for label, text in NEAR_MISSES:
        record = store.add(project, NewRecord(type="discovery", title=label, body=text))
        assert record.body == text.strip(), label
