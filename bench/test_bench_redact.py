"""Redaction on crafted inputs, per gitleaks rule, its throughput, and its cost on the capture
hook (issue 13; formerly the plain script `bench_redact.py`).

    uv run --frozen pytest bench/test_bench_redact.py --benchmark-only

- `test_redact_crafted[...]` (group `redaction 64 KB`): `redact()` on 64 KB of one crafted
  unit each, the inputs that were quadratic (the first redactor took 5.4 s on 64 KB of
  `mysql `; two of gitleaks' rules translated as they were took 31 s / 65 s on 64 KB of `curl `).
  Kept at 64 KB under `--benchmark-disable` too: that is the regression CI should notice.
- `test_gitleaks_rules_on_their_keywords` (group `redaction rules`): every rule of
  `agentctx_store._secret_rules` alone on 64 KB of its own keywords; `extra_info` holds the
  five slowest (`slowest_<n>_rule`, `slowest_<n>_ms`).
- `test_redact_throughput[...]` (group `redaction throughput`): `redact()` on ~1 MB of the
  secrets corpus (`packages/agentctx-store/tests/secrets_corpus.py`) and of plain prose;
  `mb_per_s` in `extra_info`.
- `test_capture_hook_with_a_secret` (group `redaction hook`): a PostToolUseFailure hook that
  captures (and redacts) a failing command carrying a token, whole process, with `python -c pass`
  timed between its rounds (`floor_median_ms`, `ratio_to_floor`).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest
from _harness import REPO_ROOT, Floor, process_env, run_process
from agentctx_store.redact import redact

AGENTCTX = Path(sys.executable).with_name("agentctx")
STORE_TESTS = REPO_ROOT / "packages" / "agentctx-store" / "tests"
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
SECRET = "ghp_HTQi5TMpUFn3NcLSLcwLUKvlsmkYRJh5okeB"


def repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("name", list(CRAFTED))
def test_redact_crafted(benchmark, bench_mode, name: str) -> None:
    text = repeat(CRAFTED[name], SIZE)
    benchmark.group = "redaction 64 KB"
    benchmark.pedantic(redact, args=(text,), rounds=bench_mode.scale(3, 1), warmup_rounds=bench_mode.scale(1, 0))
    benchmark.extra_info.update(kb=SIZE // 1024)


def time_rules() -> list[tuple[str, float]]:
    """(rule id, ms) for every gitleaks rule alone on 64 KB of its own keywords, slowest first."""
    from agentctx_store._secret_rules import RULES

    timings = []
    for rule in RULES:
        pattern = re.compile(rule[1])
        text = repeat(" ".join(rule[2] or (rule[0],)) + " = x9 ", SIZE)
        started = time.perf_counter()
        pattern.sub("", text)
        timings.append((rule[0], (time.perf_counter() - started) * 1000))
    return sorted(timings, key=lambda item: -item[1])


def test_gitleaks_rules_on_their_keywords(benchmark, bench_mode) -> None:
    benchmark.group = "redaction rules"
    timings = benchmark.pedantic(time_rules, rounds=bench_mode.scale(2, 1))
    benchmark.extra_info["rules"] = len(timings)
    for rank, (rule, ms) in enumerate(timings[:5], 1):
        benchmark.extra_info[f"slowest_{rank}_rule"] = rule
        benchmark.extra_info[f"slowest_{rank}_ms"] = round(ms, 1)


def throughput_text(kind: str, size: int) -> str:
    if kind == "prose":
        unit = "We decided to keep the job queue in Postgres; the worker pool has eight workers.\n"
    else:
        if str(STORE_TESTS) not in sys.path:
            sys.path.insert(0, str(STORE_TESTS))
        from secrets_corpus import NEAR_MISSES, SECRETS

        unit = "\n".join([text for _l, text, _s in SECRETS] + [text for _l, text in NEAR_MISSES]) + "\n"
    return unit * max(1, size // len(unit))


@pytest.mark.parametrize("kind", ["secrets corpus", "prose"])
def test_redact_throughput(benchmark, bench_mode, kind: str) -> None:
    text = throughput_text(kind, bench_mode.scale(1_000_000, 50_000))
    benchmark.group = "redaction throughput"
    result = benchmark.pedantic(redact, args=(text,), rounds=bench_mode.scale(3, 1))
    if kind == "prose":
        assert result.count == 0, "plain prose holds no secret"
    else:
        assert result.count > 0
    benchmark.extra_info.update(mb=round(len(text) / 1e6, 2), redactions=result.count)
    if benchmark.enabled:
        benchmark.extra_info["mb_per_s"] = round(len(text) / 1e6 / benchmark.stats.stats.median, 2)


def test_capture_hook_with_a_secret(benchmark, bench_mode, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = process_env(home, TMPDIR=str(tmp_path))
    payload = json.dumps(
        {
            "session_id": "bench",
            "cwd": str(tmp_path),
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": f"GITHUB_TOKEN={SECRET} pytest tests/"},
            "error": "E   KeyError: 'job'\n1 failed",
        }
    ).encode()
    floor = Floor(env)

    def hook(stdin: bytes) -> bytes:
        return run_process([str(AGENTCTX), "hook", "PostToolUseFailure"], stdin, env)

    benchmark.group = "redaction hook"
    output = benchmark.pedantic(
        hook,
        setup=floor.setup(lambda: (payload,)),
        rounds=bench_mode.scale(15, 1),
        warmup_rounds=bench_mode.scale(2, 0),
    )
    if output.strip():
        json.loads(output)
    for path in home.rglob("*"):  # the token never reaches the data dir
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    benchmark.extra_info.update(floor_median_ms=round(floor.median_s * 1000, 2))
    if benchmark.enabled:
        benchmark.extra_info["ratio_to_floor"] = round(benchmark.stats.stats.median / floor.median_s, 2)
