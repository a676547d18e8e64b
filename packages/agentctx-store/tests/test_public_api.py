"""The store's public surface is `__all__`, pinned here: every other part imports from it, so
adding to it is a decision (update this list), and removing from it breaks them."""

from __future__ import annotations

import importlib

import pytest

import agentctx_store

EXPECTED = {
    "agentctx_store": {
        "AgentctxError", "CONFIDENCES", "GLOBAL_PROJECT_ID", "NewRecord", "NotHeadError", "Project",
        "RECORD_TYPES", "Record", "RecordNotFound", "SCOPES", "SOURCES", "SearchHit", "SearchResult", "Store",
        "StoreError", "StoreLockedError", "ValidationError", "global_project", "normalize_remote",
        "resolve_project", "search",
    },
    "agentctx_store.anchors": {
        "Anchor", "add_anchors", "anchored_records", "anchors_of", "content_hash", "normalize_anchor_path",
        "replace_anchors",
    },
    "agentctx_store.sharing.transfer": {
        "EXPORT_HEADER", "ImportItem", "ImportReport", "import_items", "looks_like_jsonl", "parse_file_text",
        "parse_jsonl", "parse_markdown", "render_markdown",
    },
}  # fmt: skip


@pytest.mark.parametrize("module_name", sorted(EXPECTED))
def test_all_is_pinned_and_every_name_exists(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert set(module.__all__) >= EXPECTED[module_name], "a public name was removed"
    assert set(module.__all__) <= EXPECTED[module_name], "a public name was added: pin it here"
    assert len(module.__all__) == len(set(module.__all__))
    for name in module.__all__:
        assert hasattr(module, name), name


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from agentctx_store import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(agentctx_store.__all__)
