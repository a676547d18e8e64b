"""`agentctx models download` through the real entry point."""

from __future__ import annotations

from pathlib import Path


def test_models_download_loads_a_local_model(cli, tiny_model: Path) -> None:
    result = cli("models", "download")
    assert result.code == 0, result.err
    assert "Embedding model ready: agentctx/tiny-word-model (32 dimensions)" in result.out
