"""A tiny embedding model built on the spot: a folder that loads through exactly the same
fastembed path as a real local model (`AGENTCTX_EMBED_MODEL_DIR`), for tests and demos on a
machine that cannot reach the Hugging Face hub.

The ONNX graph is a single `Gather` (token id → a fixed pseudo-random vector per word); the
tokenizer is a `WordLevel` one over the words given. Mean pooling and L2 normalisation come
from fastembed, as for sentence-transformers models, so texts sharing most of their words get
a high cosine and unrelated texts a low one. The ONNX protobuf is written by hand (no `onnx`
package needed): ~5 KB for a few dozen words.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np

TINY_MODEL_NAME = "agentctx/tiny-word-model"
SPECIALS = ("[PAD]", "[UNK]")
_WORD = re.compile(r"[a-z0-9]+")


def words_of(texts: Iterable[str]) -> list[str]:
    """The lowercase word vocabulary of some texts, in first-seen order."""
    seen: dict[str, None] = {}
    for text in texts:
        for word in _WORD.findall(text.lower()):
            seen.setdefault(word, None)
    return list(seen)


def word_vector(word: str, dims: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(word.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32)


def build_tiny_model(
    folder: Path, words: Iterable[str], *, dims: int = 32, synonyms: dict[str, str] | None = None
) -> Path:
    """Write the model folder (model.onnx, tokenizer files, sentence-transformers metadata).

    `synonyms` maps a word to another whose vector it shares: texts that say the same thing in
    other words then embed alike while sharing no keyword, as a real model's paraphrases do.
    """
    synonyms = {key.lower(): value.lower() for key, value in (synonyms or {}).items()}
    words = [*words, *synonyms]
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {token: index for index, token in enumerate([*SPECIALS, *dict.fromkeys(words)])}
    table = np.zeros((len(vocab), dims), dtype=np.float32)  # [PAD] and [UNK] stay zero
    for word, index in vocab.items():
        if word not in SPECIALS:
            table[index] = word_vector(synonyms.get(word, word), dims)
    (folder / "model.onnx").write_bytes(_gather_model(table))

    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    _write_json(folder / "tokenizer_config.json", {"model_max_length": 256, "pad_token": "[PAD]", "unk_token": "[UNK]"})
    _write_json(folder / "special_tokens_map.json", {"pad_token": "[PAD]", "unk_token": "[UNK]"})
    _write_json(folder / "config.json", {"hidden_size": dims, "pad_token_id": 0, "model_type": "tiny-gather"})
    _write_json(
        folder / "1_Pooling" / "config.json", {"word_embedding_dimension": dims, "pooling_mode_mean_tokens": True}
    )
    _write_json(
        folder / "modules.json",
        [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
    )
    return folder


def _write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")


# -- a minimal ONNX protobuf writer ------------------------------------------------------

_FLOAT, _INT64 = 1, 7


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:  # length-delimited (wire type 2)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int(number: int, value: int) -> bytes:  # varint (wire type 0)
    return _varint(number << 3) + _varint(value)


def _text(number: int, value: str) -> bytes:
    return _field(number, value.encode("utf-8"))


def _value_info(name: str, elem_type: int, dims: list[str | int]) -> bytes:
    shape = b"".join(
        _field(1, _text(2, dim) if isinstance(dim, str) else _int(1, dim)) for dim in dims
    )  # TensorShapeProto.dim: dim_param (2) or dim_value (1)
    tensor_type = _int(1, elem_type) + _field(2, shape)
    return _text(1, name) + _field(2, _field(1, tensor_type))  # ValueInfoProto{name, TypeProto{tensor_type}}


def _gather_model(table: np.ndarray) -> bytes:
    rows, dims = table.shape
    initializer = (
        _int(1, rows)
        + _int(1, dims)
        + _int(2, _FLOAT)
        + _text(8, "embeddings")
        + _field(9, table.astype("<f4").tobytes())
    )
    node = _text(1, "embeddings") + _text(1, "input_ids") + _text(2, "last_hidden_state") + _text(3, "gather")
    node += _text(4, "Gather")
    graph = (
        _field(1, node)
        + _text(2, "tiny")
        + _field(5, initializer)
        + _field(11, _value_info("input_ids", _INT64, ["batch", "sequence"]))
        + _field(12, _value_info("last_hidden_state", _FLOAT, ["batch", "sequence", dims]))
    )
    opset = _text(1, "") + _int(2, 17)
    return _int(1, 8) + _text(2, "agentctx-tiny") + _field(7, graph) + _field(8, opset)


__all__ = ["TINY_MODEL_NAME", "build_tiny_model", "word_vector", "words_of"]
