"""Model choice and loading: the tiny model goes through the same fastembed path a real local
model folder does (`AGENTCTX_EMBED_MODEL` + `AGENTCTX_EMBED_MODEL_DIR`)."""

from __future__ import annotations

from pathlib import Path

import agentctx_model_minilm
import numpy as np
import pytest
from agentctx_store import config

from agentctx_embed import models
from agentctx_embed.models import DEFAULT_MODEL, Embedder, ModelUnavailable, choose_model, load
from agentctx_embed.tiny import TINY_MODEL_NAME

pytestmark = pytest.mark.embed


def test_default_choice_is_the_bundled_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL", raising=False)
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    choice = choose_model(config.load())
    assert choice.name == DEFAULT_MODEL == "sentence-transformers/all-MiniLM-L6-v2"
    assert choice.bundled and choice.measured
    assert choice.model_dir == agentctx_model_minilm.folder()
    assert choice.cache_dir == Path(config.paths.home()) / "models"
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "BAAI/bge-small-en-v1.5")  # another model: not bundled, not measured
    other = choose_model(config.load())
    assert (other.model_dir, other.bundled, other.measured) == (None, False, False)


def test_the_bundled_model_loads_with_no_network_and_no_hub_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default embeds offline from the first run: nothing downloaded, nothing cached."""
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL", raising=False)
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    hub = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(hub))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed"))
    import socket

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the bundled model reached for the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    choice = choose_model(config.load())
    embedder = load(choice, allow_download=False)
    assert (embedder.name, embedder.dims) == (DEFAULT_MODEL, 384)
    vectors = embedder.passages(
        ["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."]
    )
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.7 > 0.35 > similarity[0, 2]  # 0.76 and 0.27 (../shared/models/README.md)
    cached = [
        path for path in (hub, tmp_path / "fastembed", choice.cache_dir) if path.exists() and any(path.rglob("*.onnx"))
    ]
    assert cached == []


def test_config_keys_choose_the_model_and_env_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL", raising=False)
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    settings = config.save({"embed_model": "sentence-transformers/all-MiniLM-L6-v2", "embed_model_dir": str(tmp_path)})
    assert choose_model(settings).name == "sentence-transformers/all-MiniLM-L6-v2"
    assert choose_model(settings).model_dir == tmp_path
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "BAAI/bge-base-en-v1.5")
    assert choose_model(settings).name == "BAAI/bge-base-en-v1.5"


def test_tiny_model_loads_through_fastembed_and_embeds(tiny_model: Path) -> None:
    assert sum(path.stat().st_size for path in tiny_model.rglob("*") if path.is_file()) < 50_000
    embedder = load(choose_model(config.load()), allow_download=False)
    assert (embedder.name, embedder.dims) == (TINY_MODEL_NAME, 32)
    assert type(embedder.model).__module__.startswith("fastembed")
    vectors = embedder.passages(
        ["Sessions live in Redis with a TTL of one day.", "Sessions live in Redis with a TTL.", "Deploy to Fly.io"]
    )
    assert vectors.shape == (3, 32) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.8 > similarity[0, 2]


def test_a_missing_local_folder_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", TINY_MODEL_NAME)
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(ModelUnavailable, match="AGENTCTX_EMBED_MODEL_DIR"):
        load(choose_model(config.load()))


def test_an_uncached_model_is_not_downloaded_when_not_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "BAAI/bge-small-en-v1.5")  # a hub model, not the bundled one
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable, match="agentctx models download"):
        load(choose_model(config.load()), allow_download=False)


def test_unknown_model_name_without_a_folder_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "nobody/no-such-model")
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    with pytest.raises(ModelUnavailable, match="AGENTCTX_EMBED_MODEL_DIR"):
        load(choose_model(config.load()))


class RecordingModel:
    """Stands in for a fastembed model to see the text the query side sends."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: list[str], batch_size: int = 0) -> list[np.ndarray]:
        self.seen.extend(texts)
        return [np.ones(4, dtype=np.float32) for _ in texts]


def test_bge_queries_get_the_prefix_and_passages_do_not() -> None:
    model = RecordingModel()
    bge = Embedder(model, "BAAI/bge-small-en-v1.5", 4)
    bge.query("where is the cache")
    bge.passages(["a passage"])
    assert model.seen == ["Represent this sentence for searching relevant passages: where is the cache", "a passage"]
    other = RecordingModel()
    Embedder(other, "sentence-transformers/all-MiniLM-L6-v2", 4).query("where is the cache")
    assert other.seen == ["where is the cache"]


def _download_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """A download that starts (the hub is allowed and reachable) and fails at once: fastembed
    itself still sees HF_HUB_OFFLINE, so no test waits for its retries or reaches a network."""
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "BAAI/bge-small-en-v1.5")  # a hub model, not the bundled one
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(models, "hub_offline", lambda: False)
    monkeypatch.setattr(models, "reachable", lambda host: True)


def test_first_download_prints_one_notice_line_then_fails_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    _download_fails_fast(monkeypatch)
    notices: list[str] = []
    with pytest.raises(ModelUnavailable, match="Could not download BAAI/bge-small-en-v1.5"):
        load(choose_model(config.load()), allow_download=True, notice=notices.append)
    assert len(notices) == 1
    assert notices[0].startswith("Downloading embedding model BAAI/bge-small-en-v1.5 (")
    assert "one-time" in notices[0] and notices[0].endswith(str(Path(config.paths.home()) / "models"))


def test_no_download_notice_when_no_download_can_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "BAAI/bge-small-en-v1.5")  # a hub model, not the bundled one
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    notices: list[str] = []
    with pytest.raises(ModelUnavailable, match="HF_HUB_OFFLINE forbids downloading it"):
        load(choose_model(config.load()), notice=notices.append)
    monkeypatch.setattr(models, "hub_offline", lambda: False)
    monkeypatch.setattr(models, "reachable", lambda host: False)
    with pytest.raises(ModelUnavailable, match="huggingface.co cannot be reached"):
        load(choose_model(config.load()), notice=notices.append)
    assert notices == []


def test_a_failed_download_is_not_retried_by_background_runs_for_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    _download_fails_fast(monkeypatch)
    choice = choose_model(config.load())
    with pytest.raises(ModelUnavailable, match="Could not download"):
        load(choice, notice=lambda line: None)
    notices: list[str] = []
    with pytest.raises(ModelUnavailable, match="agentctx models download` tries again"):
        load(choice, notice=notices.append)
    assert notices == []  # no second attempt, no second notice
    with pytest.raises(ModelUnavailable, match="Could not download"):
        load(choice, notice=notices.append, force_download=True)  # what `agentctx models download` does
    assert len(notices) == 1


class BatchRecordingModel:
    """Stands in for a fastembed model: records each inference's texts, embeds a text as its length."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str], batch_size: int = 0) -> list[np.ndarray]:
        assert batch_size == len(texts)  # one inference per call
        self.calls.append(list(texts))
        return [np.array([len(text), 1.0], dtype=np.float32) for text in texts]


def test_every_passage_is_its_own_inference_and_vectors_keep_their_order() -> None:
    model = BatchRecordingModel()
    texts = ["x" * 3000, "short one", "y" * 1500, "tiny", *("z" * 100 for _ in range(40))]
    vectors = Embedder(model, "any", 2).passages(texts)
    assert model.calls == [[text] for text in texts]
    expected = np.array([[len(text), 1.0] for text in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected)


def test_a_passage_embeds_the_same_alone_and_among_others_with_the_bundled_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The int8 model quantises each layer's activations over the whole batch tensor: batched,
    a passage's vector moved with its neighbours (cosine ~0.99 to itself alone). Issue 31."""
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL", raising=False)
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    embedder = load(choose_model(config.load()), allow_download=False)
    texts = [
        "[decision] Use PostgreSQL for the main database\nAll services keep their data in PostgreSQL 16.",
        "[convention] Run ruff before every commit",
        "[decision] Billing ledger as events\nLedger changes are appended events; projections build balances.",
        "[preference] Prefer small pull requests",
    ]
    alone = np.vstack([embedder.passages([text]) for text in texts])
    together = embedder.passages(texts)
    reordered = embedder.passages(texts[::-1])[::-1]
    assert np.array_equal(alone, together)
    assert np.array_equal(alone, reordered)
