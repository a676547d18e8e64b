"""MCP server figures: spawn → `initialize` reply, `ctx_search` at 10K records, `tools/list` size.

Targets (issue 4): the first `initialize` reply ≤ 1.0 s after spawning `agentctx mcp`;
`ctx_search` ≤ 20 ms at 10K records measured in-process. Also printed: what `import mcp` costs
and whether its bytecode is precompiled (PYTHONDONTWRITEBYTECODE=1 is set in this environment,
so without `uv sync --compile-bytecode` / `uv tool install --compile-bytecode` every start would
recompile the SDK).

The spawn figure goes through the installed entry point exactly as Claude Code starts it.
`ctx_search` is timed twice: the index on an open store (the search itself) and the whole tool
function as the server runs it per call (project resolution, opening and closing the store).

usage: .venv/bin/python bench/bench_mcp.py [--records 10000] [--queries 200] [--spawns 5] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import median, percentile  # bench/ is on sys.path
from agentctx_store import Store, resolve_project
from agentctx_store.budget import estimate_tokens
from agentctx_store.search import query_terms
from bench_search import Corpus

VENV_BIN = Path(sys.executable).parent
AGENTCTX = VENV_BIN / "agentctx"
INIT_TARGET_S = 1.0
SEARCH_TARGET_MS = 20.0

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}


def spawn_once(cwd: Path, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    """Seconds from spawn to the `initialize` reply, and the `tools/list` result."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(AGENTCTX), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE) + "\n")
    process.stdin.flush()
    reply = json.loads(process.stdout.readline())
    elapsed = time.perf_counter() - started
    assert reply.get("id") == 1 and "result" in reply, reply
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + "\n")
    process.stdin.flush()
    listing = json.loads(process.stdout.readline())
    process.stdin.close()
    process.wait(timeout=30)
    return elapsed, {"tools": listing["result"]["tools"], "instructions": reply["result"].get("instructions", "")}


def import_cost(env: dict[str, str]) -> dict[str, Any]:
    """Wall time of `import mcp.server.mcpserver` in a fresh interpreter, minus a bare start."""

    def timed(code: str) -> float:
        runs = []
        for _ in range(3):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            runs.append(time.perf_counter() - started)
        return min(runs)

    bare = timed("pass")
    with_sdk = timed("import mcp.server.mcpserver")
    package = Path(importlib.util.find_spec("mcp").origin).parent  # type: ignore[union-attr, arg-type]
    sources = list(package.rglob("*.py"))
    compiled = [path for path in sources if Path(importlib.util.cache_from_source(str(path))).exists()]
    return {
        "python_start_s": round(bare, 3),
        "import_mcp_s": round(with_sdk - bare, 3),
        "mcp_py_files": len(sources),
        "mcp_pyc_present": len(compiled),
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
    }


def tools_list_size(listing: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(listing["tools"], ensure_ascii=False, separators=(",", ":"))
    per_tool = {
        tool["name"]: estimate_tokens(json.dumps(tool, ensure_ascii=False, separators=(",", ":")))
        for tool in listing["tools"]
    }
    return {
        "tools": len(listing["tools"]),
        "chars": len(text),
        "estimated_tokens": estimate_tokens(text),  # conservative: never below the true count
        "chars_over_4": round(len(text) / 4),  # the usual rule of thumb, for comparison
        "instructions_estimated_tokens": estimate_tokens(listing["instructions"]),
        "per_tool_estimated_tokens": per_tool,
    }


def build_store(root: Path, size: int, corpus: Corpus) -> list[str]:
    """`size` records for the project at `root` (plus a tenth as much for two other projects)."""
    project = resolve_project(root)
    own = sorted(set(corpus.general[500:2000:7]))[:150]
    titles: list[str] = []
    with Store.open() as store:
        with store.transaction():
            for _ in range(size):
                titles.append(store.add(project, corpus.record(own)).title)
        for index in range(2):
            other = resolve_project(root.parent / f"other-{index}")
            with store.transaction():
                for _ in range(size // 10):
                    store.add(other, corpus.record(own))
        store.dirty.clear()  # no digests for a throwaway store
    return titles


def measure_search(root: Path, titles: list[str], queries: int, corpus: Corpus) -> dict[str, Any]:
    from agentctx_mcp import server, tools

    texts: list[str] = []
    while len(texts) < queries:
        if corpus.rng.random() < 0.8:
            words = corpus.rng.choice(titles).split()
            texts.append(" ".join(corpus.rng.sample(words, k=min(len(words), corpus.rng.randint(2, 4)))))
        else:
            texts.append(" ".join(corpus.rng.choices(corpus.general[:3000], k=3)))
        if not query_terms(texts[-1]):  # a query of stop words only is a structured error, not a search
            texts.pop()
    project = resolve_project(root)
    os.chdir(root)
    index_ms, tool_ms, lines = [], [], []
    with Store.open() as store:
        for text in texts[:20]:  # warm the page cache, as a session's second call would find it
            tools.search_index(store, project, text)
        for text in texts:
            started = time.perf_counter()
            index = tools.search_index(store, project, text)
            index_ms.append((time.perf_counter() - started) * 1000)
            lines.extend(index.splitlines()[1:])
    for text in texts:
        started = time.perf_counter()
        result = server.ctx_search(query=text)
        tool_ms.append((time.perf_counter() - started) * 1000)
        assert not result.is_error, result
    record_ms, get_ms = [], []
    for number in range(20):  # writes refresh the project's digest on close, like every writer
        started = time.perf_counter()
        made = server.ctx_record(type="decision", title=f"Bench decision {number}", body="Recorded by the bench.")
        record_ms.append((time.perf_counter() - started) * 1000)
        assert not made.is_error, made
        record_id = json.loads(made.content[0].text)["id"]  # type: ignore[union-attr]
        started = time.perf_counter()
        fetched = server.ctx_get(ids=[record_id])
        get_ms.append((time.perf_counter() - started) * 1000)
        assert not fetched.is_error, fetched
    (root / "CLAUDE.md").write_text(
        "# Project\n\n" + "".join(f"- Rule {n}: the {corpus.general[n]} service caches requests.\n" for n in range(60)),
        encoding="utf-8",
    )
    other_ms: dict[str, float] = {}
    for name, call in (
        ("ctx_sync_claudemd", lambda: server.ctx_sync_claudemd()),
        ("ctx_project", lambda: server.ctx_project()),
        ("ctx_related", lambda: server.ctx_related(file="src/unlinked.py")),
    ):
        runs = []
        for _ in range(3):
            started = time.perf_counter()
            result = call()
            runs.append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result
        other_ms[name] = round(median(runs), 1)
    return {
        "other_tools_median_ms": other_ms,
        "ctx_record_p50_ms": round(median(record_ms), 2),
        "ctx_get_p50_ms": round(median(get_ms), 2),
        "queries": queries,
        "index_p50_ms": round(median(index_ms), 2),
        "index_p95_ms": round(percentile(index_ms, 0.95), 2),
        "tool_p50_ms": round(median(tool_ms), 2),
        "tool_p95_ms": round(percentile(tool_ms, 0.95), 2),
        "tool_max_ms": round(max(tool_ms), 2),
        "result_line_tokens_max": max((estimate_tokens(line) for line in lines), default=0),
        "result_line_tokens_mean": round(sum(estimate_tokens(line) for line in lines) / max(1, len(lines)), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--spawns", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="agentctx-bench-mcp-") as scratch:
        home = Path(scratch) / "home"
        root = Path(scratch) / "repo"
        (root / ".git").mkdir(parents=True)
        os.environ["AGENTCTX_HOME"] = str(home)
        env = {**os.environ, "AGENTCTX_HOME": str(home)}
        env.pop("CLAUDE_PROJECT_DIR", None)
        os.environ.pop("CLAUDE_PROJECT_DIR", None)

        corpus = Corpus(seed=4)
        started = time.perf_counter()
        titles = build_store(root, args.records, corpus)
        build_s = time.perf_counter() - started

        spawn_s, listing = [], {}
        for _ in range(args.spawns):
            elapsed, listing = spawn_once(root, env)
            spawn_s.append(elapsed)
        report: dict[str, Any] = {
            "initialize_reply_s": {
                "spawns": args.spawns,
                "median": round(median(spawn_s), 3),
                "max": round(max(spawn_s), 3),
                "target": INIT_TARGET_S,
                "median_over_target": round(median(spawn_s) / INIT_TARGET_S, 2),
            },
            "ctx_search": {
                "records": args.records,
                **measure_search(root, titles, args.queries, corpus),
                "target_ms": SEARCH_TARGET_MS,
                "build_s": round(build_s, 1),
            },
            "tools_list": tools_list_size(listing),
            "import": import_cost(env),
        }
        report["ctx_search"]["tool_p95_over_target"] = round(report["ctx_search"]["tool_p95_ms"] / SEARCH_TARGET_MS, 2)

    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    init, search, size, imports = (
        report["initialize_reply_s"],
        report["ctx_search"],
        report["tools_list"],
        report["import"],
    )
    print(
        f"spawn → initialize reply: median {init['median']} s, max {init['max']} s over {init['spawns']} spawns "
        f"(target ≤ {INIT_TARGET_S} s; median/target {init['median_over_target']})"
    )
    print(
        f"ctx_search at {search['records']} records, {search['queries']} queries: index p50 {search['index_p50_ms']} ms "
        f"p95 {search['index_p95_ms']} ms; whole tool call p50 {search['tool_p50_ms']} ms p95 {search['tool_p95_ms']} ms "
        f"max {search['tool_max_ms']} ms (target ≤ {SEARCH_TARGET_MS} ms; p95/target {search['tool_p95_over_target']})"
    )
    print("  other tools, median ms: " + ", ".join(f"{k} {v}" for k, v in search["other_tools_median_ms"].items()))
    print(
        f"  ctx_record (with digest refresh) p50 {search['ctx_record_p50_ms']} ms; ctx_get p50 {search['ctx_get_p50_ms']} ms"
    )
    print(
        f"  result lines: max {search['result_line_tokens_max']} estimated tokens "
        f"(cap 50), mean {search['result_line_tokens_mean']}"
    )
    print(
        f"tools/list: {size['tools']} tools, {size['chars']} chars, {size['estimated_tokens']} estimated tokens "
        f"(conservative; chars/4 = {size['chars_over_4']}); server instructions {size['instructions_estimated_tokens']}"
    )
    print("  per tool: " + ", ".join(f"{name} {tokens}" for name, tokens in size["per_tool_estimated_tokens"].items()))
    print(
        f"import mcp.server.mcpserver: {imports['import_mcp_s']} s over a {imports['python_start_s']} s bare start; "
        f".pyc present for {imports['mcp_pyc_present']}/{imports['mcp_py_files']} SDK files "
        f"(PYTHONDONTWRITEBYTECODE={imports['PYTHONDONTWRITEBYTECODE'] or 'unset'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
