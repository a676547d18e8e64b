"""Offline embeddings and consolidation helpers for agentctx (fastembed, sqlite-vec).

Heavy by design (onnxruntime, numpy, apsw): imported only by consolidation and benches,
never on a hook's path. `agentctx_store.consolidate` declares the seam (`VectorPhase`);
`EmbedPhase` fills it.
"""

# first, for its effect alone: telemetry off before onnxruntime loads
import agentctx_embed._offline  # noqa: F401  # pyright: ignore[reportUnusedImport]
from agentctx_embed.judge import make_judge
from agentctx_embed.models import DEFAULT_MODEL, Embedder, ModelChoice, ModelUnavailable, choose_model, load
from agentctx_embed.phase import EmbedPhase, embedding_text, find_duplicates
from agentctx_embed.vectors import VectorStore

__all__ = [
    "DEFAULT_MODEL",
    "EmbedPhase",
    "Embedder",
    "ModelChoice",
    "ModelUnavailable",
    "VectorStore",
    "choose_model",
    "embedding_text",
    "find_duplicates",
    "load",
    "make_judge",
]
