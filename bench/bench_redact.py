"""Redaction on crafted 64 KB inputs, per gitleaks rule, and its cost on the capture hook.

Issue 13: the first redactor took 5.4 s on 64 KB of `mysql ` (its `mysql … -p` rule rescanned
the line from every occurrence), and two of gitleaks' rules, translated to Python as they are,
took 31 s and 65 s on 64 KB of `curl ` (RE2 never backtracks, Python does). This prints, for
each crafted input, the time `redact()` takes on it now, the slowest gitleaks rules on 64 KB of
their own keywords, the throughput on ordinary text, and what a PostToolUseFailure hook that
redacts a captured command costs as a whole process next to `python -c pass`.

    .venv/bin/python bench/bench_redact.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packages" / "agentctx-store" / "tests"))

from agentctx_store.redact import redact  # noqa: E402

SIZE = 64 * 1024
CRAFTED = {
    "a.a.a.": "a.",
    "mysql words": "mysql ",
    "key headers": "-----BEGIN RSA PRIVATE KEY-----\n",
    "curl words": "curl ",
    "schemes": "x://",
    "one long name": "a",
    "token words": "token ",
    "api_key:": "api_key:",
    "url passwords": "u://a:b@",
}


def best_of(function: Any, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def crafted() -> dict[str, float]:
    out = {}
    for name, unit in CRAFTED.items():
        text = (unit * (SIZE // len(unit) + 1))[:SIZE]
        redact(text)
        out[name] = round(best_of(lambda text=text: redact(text)) * 1000, 1)
    return out


def slowest_rules(count: int = 5) -> list[tuple[str, float]]:
    from agentctx_store._secret_rules import RULES

    timings = []
    for rule in RULES:
        pattern = re.compile(rule[1])
        unit = " ".join(rule[2] or (rule[0],)) + " = x9 "
        text = (unit * (SIZE // len(unit) + 1))[:SIZE]
        timings.append((rule[0], round(best_of(lambda pattern=pattern, text=text: pattern.sub("", text), 1) * 1000, 1)))
    return sorted(timings, key=lambda item: -item[1])[:count]


def throughput() -> dict[str, float]:
    from secrets_corpus import NEAR_MISSES, SECRETS

    text = "\n".join([text for _l, text, _s in SECRETS] + [text for _l, text in NEAR_MISSES]) + "\n"
    prose = "We decided to keep the job queue in Postgres; the worker pool has eight workers.\n"
    corpus = text * (1_000_000 // len(text))
    plain = prose * (1_000_000 // len(prose))
    return {
        "corpus_mb_per_s": round(len(corpus) / 1e6 / best_of(lambda: redact(corpus), 1), 2),
        "prose_mb_per_s": round(len(plain) / 1e6 / best_of(lambda: redact(plain), 1), 2),
    }


def hook_process() -> dict[str, float]:
    """Whole-process wall time of a PostToolUseFailure hook that captures (and redacts) a failing command."""
    agentctx = Path(sys.executable).with_name("agentctx")
    with tempfile.TemporaryDirectory() as temp:
        env = {**os.environ, "AGENTCTX_HOME": temp, "AGENTCTX_HOOKS_NO_SPAWN": "1"}
        payload = json.dumps(
            {
                "session_id": "bench",
                "cwd": temp,
                "hook_event_name": "PostToolUseFailure",
                "tool_name": "Bash",
                "tool_input": {"command": "GITHUB_TOKEN=ghp_HTQi5TMpUFn3NcLSLcwLUKvlsmkYRJh5okeB pytest tests/"},
                "error": "E   KeyError: 'job'\n1 failed",
            }
        ).encode()

        def hook() -> None:
            subprocess.run([str(agentctx), "hook", "PostToolUseFailure"], input=payload, env=env, check=True)

        def bare() -> None:
            subprocess.run([sys.executable, "-c", "pass"], check=True)

        hook_s, bare_s = best_of(hook, 10), best_of(bare, 10)
    return {
        "hook_ms": round(hook_s * 1000, 1),
        "bare_python_ms": round(bare_s * 1000, 1),
        "ratio": round(hook_s / bare_s, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = {"crafted_64kb_ms": crafted(), "slowest_rules_64kb_ms": slowest_rules(), **throughput(), **hook_process()}
    if not args.json:
        for name, ms in result["crafted_64kb_ms"].items():
            print(f"redact() on 64 KB of {name!r}: {ms} ms")
        for name, ms in result["slowest_rules_64kb_ms"]:
            print(f"slowest gitleaks rule on 64 KB of its keywords: {name} {ms} ms")
        print(f"throughput: corpus {result['corpus_mb_per_s']} MB/s, plain prose {result['prose_mb_per_s']} MB/s")
        print(
            f"PostToolUseFailure hook with a secret: {result['hook_ms']} ms, bare python {result['bare_python_ms']} ms"
            f" ({result['ratio']}x)"
        )
    print(json.dumps({"redaction": result}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
