"""The embedding model agentctx ships and measures: all-MiniLM-L6-v2, quantised ONNX (int8).

Data only: `folder()` is a sentence-transformers export (`model.onnx`, `tokenizer.json`,
`1_Pooling/`, …) that fastembed loads under `MODEL_NAME` from the folder itself
(`agentctx_embed.models`). NOTICE says where the files came from and how they were made.
"""

from __future__ import annotations

from pathlib import Path

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384


def folder() -> Path:
    """The model's folder inside this installed package."""
    return Path(__file__).resolve().parent / "model"
