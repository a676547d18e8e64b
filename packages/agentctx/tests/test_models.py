"""`agentctx models download` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path


def test_models_download_loads_a_local_model(cli, tiny_model: Path) -> None:
    result = cli("models", "download")
    assert result.code == 0, result.err
    assert "Embedding model ready: agentctx/tiny-word-model (32 dimensions)" in result.out


def test_models_says_which_model_is_active_and_whether_it_was_measured(cli, monkeypatch) -> None:
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL", raising=False)
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    shown = cli("models")
    assert shown.code == 0, shown.err
    assert "sentence-transformers/all-MiniLM-L6-v2 (bundled, offline); measured" in shown.out
    doctor = cli("doctor", "--json")
    check = next(check for check in json.loads(doctor.out) if check["name"] == "embedding model")
    assert check["state"] == "ok" and check["extra"]["bundled"] and check["extra"]["measured"]
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "BAAI/bge-small-en-v1.5")
    other = json.loads(cli("models", "--json").out)
    assert (other["bundled"], other["measured"]) == (False, False)
    check = next(check for check in json.loads(cli("doctor", "--json").out) if check["name"] == "embedding model")
    assert check["state"] == "warn" and "not measured" in check["detail"]
