"""Dashboard figures with 10K records: search API latency and first page ready in Chromium.

The store is built through `Store.add` (bench_search's synthetic corpus: Zipf vocabulary,
per-project identifiers) with every record in the dashboard's own project, the worst case for
the Records view. Queries are what a person types into the search box: 1–3 words taken from
the title of a record of the store.

Measured:
- search API, in-process (ASGI through the guard, a fresh store connection per request, JSON);
- search API over real HTTP to uvicorn on 127.0.0.1 (what the page's fetch sees);
- first page ready: a new Chromium tab loads `/`, the script fetches meta, projects and the
  newest 100 records and draws them; "ready" is the moment the Records table is on screen
  (`body[data-ready]`, `aria-busy=false`). Cold = first load; the median is over later loads.

Targets (issue 7): search API p50 ≤ 50 ms; first page ready ≤ 1 s.

usage: .venv/bin/python bench/bench_ui.py [--records 10000] [--queries 300] [--loads 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import median, percentile  # bench/ is on sys.path
from bench_search import Corpus, _vocabulary

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SEARCH_TARGET_MS = 50.0
PAGE_TARGET_MS = 1000.0


def build(records: int, corpus: Corpus) -> tuple[Any, list[str]]:
    from agentctx_store import Project, Store

    project = Project(project_id="bench-ui", root=Path("/bench/ui"), name="bench-ui")
    own = _vocabulary(corpus.rng, 150)
    with Store.open() as store:
        with store.transaction():
            for _ in range(records):
                store.add(project, corpus.record(own))
        titles = [record.title for record in store.list_records(project, limit=500)]
        store.dirty.clear()  # no digest for a throwaway store
    queries = []
    for _ in range(len(titles)):
        words = corpus.rng.choice(titles).split()
        queries.append(" ".join(corpus.rng.sample(words, k=min(len(words), corpus.rng.randint(1, 3)))))
    return project, queries


def time_calls(call: Any, queries: list[str]) -> list[float]:
    for query in queries[:10]:  # warm-up: page cache, first-import costs
        call(query)
    timings = []
    for query in queries:
        begin = time.perf_counter()
        response = call(query)
        timings.append((time.perf_counter() - begin) * 1000)
        assert response.status_code == 200, response.text
    return timings


def summary(timings: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(median(timings), 2),
        "p95_ms": round(percentile(timings, 0.95), 2),
        "max_ms": round(max(timings), 2),
    }


def measure_browser(url: str, loads: int) -> dict[str, Any] | None:
    if not CHROMIUM.exists():
        return None
    from playwright.sync_api import expect, sync_playwright

    walls, in_page = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            for _ in range(loads):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                begin = time.perf_counter()
                page.goto(url)
                page.wait_for_selector('body[data-ready="records"] main[aria-busy="false"]', timeout=30_000)
                walls.append((time.perf_counter() - begin) * 1000)
                in_page.append(float(page.evaluate("performance.now()")))
                rows = page.locator("#results tbody tr").count()
                context.close()
            graph_walls, full_walls, nodes = [], [], 0
            for _ in range(3):  # the Graph view: fetch up to 400 records, lay them out, draw the SVG
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.goto(url)
                page.wait_for_selector('body[data-ready="records"] main[aria-busy="false"]', timeout=30_000)
                begin = time.perf_counter()
                page.evaluate("location.hash = '#/graph'")
                page.wait_for_selector('body[data-ready="graph"] main[aria-busy="false"]', timeout=60_000)
                graph_walls.append((time.perf_counter() - begin) * 1000)
                begin = time.perf_counter()  # worst case: every record of the graph drawn and laid out
                page.locator("#unlinked-note button").click()
                expect(page.locator("svg.graph g.node")).to_have_count(400, timeout=60_000)
                full_walls.append((time.perf_counter() - begin) * 1000)
                nodes = page.locator("svg.graph g.node").count()
                context.close()
        finally:
            browser.close()
    return {
        "cold_ms": round(walls[0], 1),
        "median_ms": round(median(walls[1:] or walls), 1),
        "max_ms": round(max(walls), 1),
        "in_page_median_ms": round(median(in_page[1:] or in_page), 1),
        "rows_drawn": rows,
        "loads": loads,
        "graph_median_ms": round(median(graph_walls), 1),
        "graph_all_nodes_median_ms": round(median(full_walls), 1),
        "graph_nodes": nodes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--loads", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="agentctx-bench-ui-") as scratch:
        os.environ["AGENTCTX_HOME"] = str(Path(scratch) / "home")
        import httpx
        from agentctx_ui.app import create_app
        from agentctx_ui.server import bind, make_server
        from fastapi.testclient import TestClient

        corpus = Corpus(seed=7)
        started = time.perf_counter()
        project, queries = build(args.records, corpus)
        build_s = time.perf_counter() - started
        queries = (queries * (args.queries // max(1, len(queries)) + 1))[: args.queries]

        app = create_app(project=project, port=7327, token="bench")
        with TestClient(app, base_url="http://127.0.0.1:7327") as client:
            asgi = time_calls(lambda q: client.get("/api/records", params={"q": q, "limit": 100}), queries)
            listing = time_calls(lambda q: client.get("/api/records", params={"limit": 100}), queries[:50])

        sock = bind(0)
        server = make_server(project, sock)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 15
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        port = sock.getsockname()[1]
        url = f"http://127.0.0.1:{port}/"
        try:
            with httpx.Client(base_url=url) as http:
                over_http = time_calls(lambda q: http.get("/api/records", params={"q": q, "limit": 100}), queries)
            browser = measure_browser(url, args.loads)
        finally:
            server.should_exit = True
            thread.join(timeout=15)
            sock.close()

    result = {
        "records": args.records,
        "queries": len(queries),
        "build_s": round(build_s, 1),
        "search_api_in_process": summary(asgi),
        "search_api_http": summary(over_http),
        "list_newest_100_in_process": summary(listing),
        "first_page": browser,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"agentctx dashboard bench: {args.records} records in one project (built in {build_s:.1f} s)")
    print(f"queries: {len(queries)} of 1-3 words from record titles, limit 100")
    for label, key in (("search API, in-process", "search_api_in_process"), ("search API, HTTP", "search_api_http")):
        figures = result[key]
        print(
            f"  {label:<24} p50 {figures['p50_ms']:7.2f} ms  p95 {figures['p95_ms']:7.2f} ms  max {figures['max_ms']:7.2f} ms"
            f"  (p50 / target {figures['p50_ms'] / SEARCH_TARGET_MS:.2f})"
        )
    figures = result["list_newest_100_in_process"]
    print(f"  {'list newest 100':<24} p50 {figures['p50_ms']:7.2f} ms  p95 {figures['p95_ms']:7.2f} ms")
    if browser is None:
        print("first page ready: skipped (no /usr/bin/chromium)")
    else:
        print(
            f"first page ready in Chromium: cold {browser['cold_ms']:.0f} ms, median {browser['median_ms']:.0f} ms "
            f"(in-page {browser['in_page_median_ms']:.0f} ms), max {browser['max_ms']:.0f} ms over {browser['loads']} loads, "
            f"{browser['rows_drawn']} rows drawn  (median / target {browser['median_ms'] / PAGE_TARGET_MS:.2f})"
        )
        print(
            f"graph view ready: median {browser['graph_median_ms']:.0f} ms (linked records only); "
            f"{browser['graph_all_nodes_median_ms']:.0f} ms to draw all {browser['graph_nodes']} nodes"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
