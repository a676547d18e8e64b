"""Which embedding model, where it lives, and loading it through fastembed
(docs/adr/0006-local-embeddings.md).

* default: `sentence-transformers/all-MiniLM-L6-v2`, quantised to int8, from the
  `agentctx-model-minilm` distribution that `agentctx-embed` depends on: loaded from the
  installed package's folder with no network and no model cache, the model every figure in
  docs/retrieval.md was measured with (`MEASURED_MODELS`);
* `AGENTCTX_EMBED_MODEL` / config `embed_model`: another fastembed model name (e.g.
  `BAAI/bge-small-en-v1.5`), downloaded once into `$AGENTCTX_HOME/models` with a one-line
  notice and fastembed's progress bars, loaded offline afterwards;
* `AGENTCTX_EMBED_MODEL_DIR` / config `embed_model_dir`: a local model folder, loaded with no
  network. A name fastembed does not know is registered from the folder's sentence-transformers
  metadata (`1_Pooling/config.json`, `modules.json`, `config.json`), which is how the tiny test
  model of `agentctx_embed.tiny` loads: through the very same code as a real model.

bge models want a prefix on queries (not on passages); `Embedder.query` adds it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from agentctx_store import paths
from agentctx_store.errors import AgentctxError
from agentctx_store.records import utc_now

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Models whose retrieval quality bench/ measured (docs/retrieval.md): `doctor` says whether the
# active one is among them. Any other model works with the same self-calibrated floor, unmeasured.
MEASURED_MODELS = frozenset({DEFAULT_MODEL})
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
# A failed download (no network) costs fastembed tens of seconds of retries; background runs do
# not try again for this long. `agentctx models download` always tries.
RETRY_DOWNLOAD_AFTER_S = 6 * 3600
FAILED_MARKER = ".download-failed.json"
DOWNLOAD_HOST = "huggingface.co"  # where fastembed's models come from


class ModelUnavailable(AgentctxError):
    """The embedding model is neither cached nor allowed/able to download."""


@dataclass(frozen=True, kw_only=True)
class ModelChoice:
    name: str
    model_dir: Path | None
    cache_dir: Path
    bundled: bool = False  # the folder is the one `agentctx-model-minilm` installs

    @property
    def measured(self) -> bool:
        """Whether bench/ measured this model (`MEASURED_MODELS`)."""
        return self.name.lower() in {name.lower() for name in MEASURED_MODELS}


def bundled_folder() -> Path | None:
    """The default model's folder from the `agentctx-model-minilm` distribution, if installed."""
    try:
        import agentctx_model_minilm
    except ImportError:
        return None
    folder = agentctx_model_minilm.folder()
    return folder if (folder / "model.onnx").is_file() else None


def choose_model(settings: dict[str, Any]) -> ModelChoice:
    """The model from the environment, else config, else the default (the bundled folder when
    the default is asked for without a folder of its own)."""
    name = os.environ.get("AGENTCTX_EMBED_MODEL") or str(settings.get("embed_model") or "") or DEFAULT_MODEL
    folder = os.environ.get("AGENTCTX_EMBED_MODEL_DIR") or str(settings.get("embed_model_dir") or "")
    name = name.strip()
    model_dir = Path(folder).expanduser() if folder.strip() else None
    bundled = False
    if model_dir is None and name.lower() == DEFAULT_MODEL.lower():
        model_dir = bundled_folder()
        bundled = model_dir is not None
    return ModelChoice(name=name, model_dir=model_dir, cache_dir=Path(paths.home()) / "models", bundled=bundled)


class Embedder:
    """One loaded model: unit-length float32 vectors for passages and queries.

    Every text is its own inference, so its vector depends on the text and the model alone. In a
    batch it would not: quantised models (the shipped all-MiniLM-L6-v2 int8, made by onnxruntime's
    `quantize_dynamic`) quantise each layer's activations with one scale for the whole batch
    tensor, so a passage's vector moved with whatever it was embedded beside (cosine 0.99 to
    itself alone, enough to move a prompt's `z` by 0.3), and a project's vectors, calibration and
    answers with the other projects' records consolidation or the service embedded alongside
    (issue 31; docs/retrieval.md, "Neighbours"). One at a time is also the lowest peak memory,
    and on one thread the fastest (bench/README.md#embedding-batches).
    """

    def __init__(self, model: Any, name: str, dims: int) -> None:
        self.model = model
        self.name = name
        self.dims = dims

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        vectors = np.empty((len(texts), self.dims), dtype=np.float32)
        for index, text in enumerate(texts):  # one inference per text: see the class
            vectors[index] = np.asarray(list(self.model.embed([text], batch_size=1))[0], dtype=np.float32)
        return _unit(vectors)

    def query(self, text: str) -> np.ndarray:
        prefix = BGE_QUERY_PREFIX if "bge-" in self.name.lower() and "-en" in self.name.lower() else ""
        return self.passages([prefix + text])[0]

    def pieces(self, text: str) -> int:
        """How many word pieces the model reads of `text` (its window at most; 0 for a model
        without a tokenizer fastembed exposes): what an inference of it costs, roughly in
        proportion (`service.tokens_within`)."""
        tokenizer = getattr(getattr(self.model, "model", None), "tokenizer", None)
        return 0 if tokenizer is None else len(tokenizer.encode(text).ids)

    def tokens(self, text: str) -> TokenStates | None:
        """The model's state for each word piece of `text` (unit length, special tokens left out)
        and the word each piece belongs to, lowercased: what `hybrid.coverage` compares token by
        token. One inference, as for a vector; None for a model fastembed gives no token states
        for (its graph ends in a pooled vector)."""
        inner = getattr(self.model, "model", None)
        tokenizer = getattr(inner, "tokenizer", None)
        if inner is None or tokenizer is None or not hasattr(inner, "onnx_embed"):
            return None
        return TokenStates.of(text, tokenizer.encode(text), np.asarray(inner.onnx_embed([text]).model_output))


@dataclass(frozen=True)
class TokenStates:
    """A text's word pieces as the model sees them in context (`Embedder.tokens`)."""

    vectors: np.ndarray  # pieces × dims, unit length
    words: tuple[str, ...]  # the lowercased word each piece belongs to

    @classmethod
    def of(cls, text: str, encoding: Any, states: np.ndarray) -> TokenStates | None:
        """From a `tokenizers` encoding of `text` and the model's output for it (1 × pieces × dims);
        None when that output is not one state per piece."""
        if states.ndim != 3 or states.shape[1] != len(encoding.ids):
            return None
        pieces: list[int] = []
        words: list[str] = []
        for index, (special, word) in enumerate(zip(encoding.special_tokens_mask, encoding.word_ids, strict=True)):
            if special or word is None:
                continue
            start, end = encoding.word_to_chars(word)
            pieces.append(index)
            words.append(text[start:end].lower())
        return cls(vectors=_unit(states[0, pieces].astype(np.float32)), words=tuple(words))


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


def _known(name: str) -> dict[str, Any] | None:
    from fastembed import TextEmbedding

    for description in TextEmbedding.list_supported_models():
        if str(description["model"]).lower() == name.lower():
            return description
    return None


def _register_local(choice: ModelChoice) -> None:
    """Teach fastembed a model it does not know, from the folder's own metadata."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    folder = choice.model_dir
    assert folder is not None
    pooling_file = folder / "1_Pooling" / "config.json"
    config_file = folder / "config.json"
    try:
        pooling_cfg: dict[str, Any] = (
            json.loads(pooling_file.read_text(encoding="utf-8")) if pooling_file.exists() else {}
        )
        config: dict[str, Any] = json.loads(config_file.read_text(encoding="utf-8")) if config_file.exists() else {}
        modules = folder / "modules.json"
        normalize = "Normalize" in modules.read_text(encoding="utf-8") if modules.exists() else True
    except (OSError, ValueError) as exc:
        raise ModelUnavailable(
            f"Cannot read the model metadata in {str(folder)!r} ({exc}); check the folder."
        ) from None
    dims = int(pooling_cfg.get("word_embedding_dimension") or config.get("hidden_size") or 0)
    if dims <= 0:
        raise ModelUnavailable(
            f"The model folder {str(folder)!r} does not say its dimensions (config.json hidden_size); "
            "use a sentence-transformers export."
        )
    pooling = PoolingType.CLS if pooling_cfg.get("pooling_mode_cls_token") else PoolingType.MEAN
    model_file = "model.onnx" if (folder / "model.onnx").exists() else "onnx/model.onnx"
    TextEmbedding.add_custom_model(
        choice.name,
        pooling=pooling,
        normalization=normalize,
        sources=ModelSource(hf=choice.name),
        dim=dims,
        model_file=model_file,
    )


def load(
    choice: ModelChoice,
    *,
    allow_download: bool = True,
    notice: Callable[[str], None] | None = None,
    force_download: bool = False,
    threads: int | None = None,
    lean: bool = False,
) -> Embedder:
    """Load the chosen model; download it first when needed and allowed.

    `threads`: onnxruntime's intra-op threads (default: the cores, at most 4). `lean` (the warm
    search service): no onnxruntime memory arena, so what a batch of long passages needed is
    given back after it, at some cost per batch (bench/README.md#embedding-batches).

    Raises:
        ModelUnavailable: a local folder is missing, or the model is not cached and cannot
            (or may not) be downloaded.
    """
    from fastembed import TextEmbedding

    quiet_library_logs()
    say: Callable[[str], None] = notice or (lambda line: print(line, file=sys.stderr))
    threads = threads or max(1, min(4, os.cpu_count() or 1))
    extra: dict[str, Any] = {"enable_cpu_mem_arena": False} if lean else {}
    if choice.model_dir is not None:
        if not (choice.model_dir / "tokenizer.json").exists():
            raise ModelUnavailable(
                f"No model in {str(choice.model_dir)!r} (no tokenizer.json); fix AGENTCTX_EMBED_MODEL_DIR or embed_model_dir."
            )
        description = _known(choice.name)
        if description is None:
            _register_local(choice)
            description = _known(choice.name)
        model = TextEmbedding(
            choice.name,
            cache_dir=str(choice.cache_dir),
            threads=threads,
            specific_model_path=str(choice.model_dir),
            **extra,
        )
        return Embedder(model, choice.name, int(description["dim"]) if description else model.embedding_size)
    description = _known(choice.name)
    if description is None:
        raise ModelUnavailable(
            f"fastembed has no model named {choice.name!r}; set AGENTCTX_EMBED_MODEL to one of "
            "`TextEmbedding.list_supported_models()`, or point AGENTCTX_EMBED_MODEL_DIR at a local folder."
        )
    choice.cache_dir.mkdir(parents=True, exist_ok=True)
    try:  # offline first: a cached model never touches the network
        model = TextEmbedding(
            choice.name, cache_dir=str(choice.cache_dir), threads=threads, local_files_only=True, **extra
        )
    except Exception:  # fastembed raises several kinds when the cache is empty
        if not allow_download:
            raise ModelUnavailable(
                f"The embedding model {choice.name} is not downloaded yet; run `agentctx models download`."
            ) from None
        if hub_offline():
            raise ModelUnavailable(
                f"The embedding model {choice.name} is not downloaded, and HF_HUB_OFFLINE forbids downloading it; "
                "run `agentctx models download` where the network is allowed, or set AGENTCTX_EMBED_MODEL_DIR."
            ) from None
        failed_at = _recent_failure(choice)
        if failed_at and not force_download:
            raise ModelUnavailable(
                f"Downloading {choice.name} failed at {failed_at}; `agentctx models download` tries again."
            ) from None
        if not reachable(DOWNLOAD_HOST):
            _remember_failure(choice)
            raise ModelUnavailable(
                f"The embedding model {choice.name} is not downloaded, and {DOWNLOAD_HOST} cannot be reached; "
                "`agentctx models download` tries again, or set AGENTCTX_EMBED_MODEL_DIR to a local model folder."
            ) from None
        size_mb = round(float(description.get("size_in_GB", 0)) * 1024)
        say(f"Downloading embedding model {choice.name} ({size_mb} MB, one-time) → {choice.cache_dir}")
        try:
            model = TextEmbedding(choice.name, cache_dir=str(choice.cache_dir), threads=threads, **extra)
        except Exception as exc:  # network, disk: one line, not a traceback
            _remember_failure(choice)
            raise ModelUnavailable(
                f"Could not download {choice.name} ({type(exc).__name__}); check the network, or set "
                "AGENTCTX_EMBED_MODEL_DIR to a local model folder."
            ) from None
    (choice.cache_dir / FAILED_MARKER).unlink(missing_ok=True)
    return Embedder(model, choice.name, int(description["dim"]))


def quiet_library_logs() -> None:
    """fastembed logs through loguru straight to stderr (an ERROR line per cache miss, before
    it falls back); what matters reaches the user as one `ModelUnavailable` line instead."""
    try:
        from loguru import logger
    except ImportError:  # a fastembed that logs another way
        return
    logger.disable("fastembed")


def hub_offline() -> bool:
    """The Hugging Face hub's own switch (`HF_HUB_OFFLINE`), read as the hub reads it."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def reachable(host: str, *, port: int = 443, timeout: float = 3.0) -> bool:
    """Whether a download could start: a TCP connection to `host` opens, or a proxy is set (the
    proxy decides; the download itself will tell)."""
    import socket

    if any(os.environ.get(name) for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _remember_failure(choice: ModelChoice) -> None:
    marker = {"model": choice.name, "at": time.time(), "when": utc_now()}
    with contextlib.suppress(OSError):
        (choice.cache_dir / FAILED_MARKER).write_text(json.dumps(marker), encoding="utf-8")


def _recent_failure(choice: ModelChoice) -> str | None:
    """When the last download of this model failed, if that was recent."""
    try:
        marker = json.loads((choice.cache_dir / FAILED_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    recent = time.time() - float(marker.get("at", 0)) < RETRY_DOWNLOAD_AFTER_S
    return str(marker.get("when")) if recent and marker.get("model") == choice.name else None
