"""`agentctx config` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx_store import paths


def test_config_lists_gets_and_sets_with_validation(cli) -> None:
    listing = cli("config")
    assert listing.code == 0 and "reinforce_threshold = 3" in listing.out and "Sightings" in listing.out

    assert cli("config", "reinforce_threshold", "5").out.strip() == "reinforce_threshold = 5"
    assert cli("config", "reinforce_threshold").out.strip() == "5"
    assert cli("config", "--json").json()["reinforce_threshold"] == 5

    bad = cli("config", "reinforce_threshold", "many")
    unknown = cli("config", "colour", "blue")
    assert bad.code == 1 and bad.err.startswith("Error: Invalid value 'many' for reinforce_threshold")
    assert unknown.code == 1 and "Unknown setting 'colour'" in unknown.err
    assert cli("config", "reinforce_threshold").out.strip() == "5"


def test_config_flags_switch_llm_and_embeddings(cli) -> None:
    result = cli("config", "--no-llm", "--no-embeddings")
    assert result.code == 0
    values = cli("config", "--json").json()
    assert values["llm"] == "off" and values["embeddings"] is False
    cli("config", "--llm")
    assert cli("config", "--json").json()["llm"] == "auto"
    stored = json.loads(Path(paths.config_path()).read_text(encoding="utf-8"))
    assert stored["_written_by"] == "agentctx"
