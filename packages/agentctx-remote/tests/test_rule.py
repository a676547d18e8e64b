"""What a remote shares (`rule.ShareRule`), the URL it keeps, and the ids of a conflict's two sides."""

from __future__ import annotations

import pytest
from agentctx_store.errors import ValidationError
from agentctx_store.ulid import is_ulid, new_ulid

from agentctx_remote.remotes import check_url
from agentctx_remote.rule import ShareRule
from agentctx_remote.sync import fork_id

RULE = ShareRule(projects=("p1",))
DECISION = {"type": "decision", "confidence": "explicit", "title": "Use uv", "body": "We use uv."}


def test_the_default_rule_is_the_team_files_set() -> None:
    assert RULE.covers("p1", DECISION)
    assert RULE.covers("p1", DECISION | {"type": "convention"})
    assert not RULE.covers("p2", DECISION)  # another project
    assert not RULE.covers("_global", DECISION)  # global records only when opted in
    assert not RULE.covers("p1", DECISION | {"type": "preference"})
    assert not RULE.covers("p1", DECISION | {"type": "handover"})
    assert not RULE.covers("p1", DECISION | {"confidence": "inferred"})


def test_opting_in_widens_it_but_a_redacted_record_never_goes() -> None:
    wide = ShareRule(
        projects=("p1",), types=("decision", "preference"), confidences=("explicit", "inferred"), global_records=True
    )
    assert wide.covers("_global", DECISION | {"type": "preference", "confidence": "inferred"})
    assert not wide.covers("p1", DECISION | {"body": "Token [REDACTED:github-pat] in CI."})
    assert not wide.covers("p1", DECISION | {"title": "[REDACTED:secret]"})


def test_a_rule_round_trips_through_json() -> None:
    rule = ShareRule(projects=("a", "b"), types=("bugfix",), global_records=True, names={"a": "shop"})
    assert ShareRule.from_json(rule.to_json()) == rule
    assert ShareRule.from_json("{}") == ShareRule()
    assert ShareRule.from_json('{"projects": "not a list", "types": [1, "decision"]}').types == ("decision",)


def test_a_url_keeps_no_password() -> None:
    assert check_url(" postgresql://alice@db/agentctx?sslmode=verify-full ") == (
        "postgresql://alice@db/agentctx?sslmode=verify-full"
    )
    with pytest.raises(ValidationError, match="pgpass"):
        check_url("postgresql://alice:secret@db/agentctx")
    with pytest.raises(ValidationError, match="postgresql://"):
        check_url("mysql://alice@db/agentctx")


def test_both_sides_of_a_conflict_get_the_same_ids_on_every_machine() -> None:
    record_id = new_ulid()
    mine, theirs = fork_id(record_id, "op-a"), fork_id(record_id, "op-b")
    assert mine == fork_id(record_id, "op-a") and mine != theirs
    assert is_ulid(mine) and is_ulid(theirs) and mine[:10] == record_id[:10]
