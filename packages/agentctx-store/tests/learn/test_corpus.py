"""`learn` on the corpus of real repositories (fixtures/corpus: 19 ADR folders in Nygard, adr-tools,
MADR 2-4, log4brains, cosmos, unpadded, project-prefixed, snake_case, setext and table layouts, and
13 repositories' agent instruction files), against the hand labels of `fixtures/corpus/labels.json`:
every ADR found, every current one current, exactly the labelled supersession and amendment links,
no superseded or rejected ADR current; every instruction file read once, no rule twice, and `sync`
right after `learn` missing nothing learned. Per-repository figures: bench/test_bench_learn.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agentctx_store import Store

sys.path.insert(0, str(Path(__file__).parent))

import corpus


def _adr_cases() -> list[Any]:
    """Every ADR folder; one with a `known_miss` label is an expected failure (strict: a fix shows)."""
    return [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=label["known_miss"]))
        if label.get("known_miss")
        else name
        for name, label in sorted(corpus.LABELS["adr"].items())
    ]


@pytest.mark.parametrize("name", _adr_cases())
def test_every_adr_and_every_labelled_link_of_a_real_repository(store: Store, tmp_path: Path, name: str) -> None:
    figures = corpus.adr_figures(store, name, tmp_path)
    assert figures["found"] == figures["adr_files"], figures
    assert figures["current_learned"] == figures["current_expected"], figures
    assert figures["stale_current"] == [], figures
    assert (figures["links_found"], figures["links_wrong"]) == (figures["links_hand"], []), figures
    assert (figures["amended_found"], figures["amended_wrong"]) == (figures["amended_hand"], []), figures


@pytest.mark.parametrize("name", sorted(corpus.LABELS["rules"]))
def test_instruction_files_of_a_real_repository_give_each_rule_once_and_sync_misses_none(
    store: Store, tmp_path: Path, name: str
) -> None:
    figures = corpus.rules_figures(store, name, tmp_path)
    assert figures["files_read"] == figures["instruction_files"] > 0, figures
    assert figures["records"] > 0 and figures["duplicate_bodies"] == 0, figures
    assert figures["sync_missing_learned"] == 0, figures
    assert figures["titles_over_90"] == 0, figures
    if figures["hand_rules"]:  # a hand-split sample (labels.json, rule_splits)
        assert figures["covered"] >= 0.9 * figures["hand_rules"], figures
        assert figures["noise"] <= 0.1 * figures["learned"], figures
