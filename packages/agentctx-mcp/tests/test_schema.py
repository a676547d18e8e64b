"""What `tools/list` costs: seven tools, compact schemas, short descriptions."""

from __future__ import annotations

import json

from agentctx_store.budget import estimate_tokens

from agentctx_mcp.schema import compact_schema
from agentctx_mcp.server import TOOL_NAMES, build_tools

# The measured size is ~1,350 estimated (conservative) tokens (docs/mcp.md); this ceiling catches sprawl.
TOOLS_LIST_CEILING = 1450


def test_exactly_the_seven_tools_of_the_spec() -> None:
    assert TOOL_NAMES == (
        "ctx_search",
        "ctx_get",
        "ctx_record",
        "ctx_supersede",
        "ctx_project",
        "ctx_related",
        "ctx_sync_claudemd",
    )
    assert [tool.name for tool in build_tools()] == list(TOOL_NAMES)


def test_no_tool_takes_a_project_argument() -> None:
    for tool in build_tools():
        assert not {"project", "project_id", "path", "cwd"} & set(tool.parameters["properties"]), tool.name


def test_no_tool_publishes_an_output_schema() -> None:
    assert all(tool.output_schema is None for tool in build_tools())


def test_compact_schema_drops_titles_and_null_unions() -> None:
    schema = {
        "title": "fArguments",
        "type": "object",
        "properties": {
            "query": {"title": "Query", "type": "string"},
            "kind": {
                "anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}],
                "default": None,
                "title": "Kind",
            },
            "ids": {"items": {"type": "string", "title": "Id"}, "type": "array", "title": "Ids"},
        },
        "required": ["query"],
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "kind": {"enum": ["a", "b"], "type": "string"},
            "ids": {"items": {"type": "string"}, "type": "array"},
        },
        "required": ["query"],
    }


def test_tools_list_stays_small() -> None:
    listing = [
        {"name": tool.name, "description": tool.description, "inputSchema": tool.parameters} for tool in build_tools()
    ]
    tokens = estimate_tokens(json.dumps(listing))
    assert tokens <= TOOLS_LIST_CEILING, tokens
    assert all(len(tool.description) <= 320 for tool in build_tools())
