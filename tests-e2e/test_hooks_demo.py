"""`agentctx demo` on a fresh checkout: no network, no account, a throwaway store, and the
scripted session really goes through the hook entry point."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from agentctx_store.budget import PROMPT, SESSION_START, estimate_tokens
from agentctx_store.fence import DIGEST_OPEN

AGENTCTX = Path(sys.executable).with_name("agentctx")


def _blocks(output: str) -> list[tuple[int, str]]:
    """(printed token count, text) of every injection the demo shows."""
    blocks: list[tuple[int, str]] = []
    lines = output.splitlines()
    for index, line in enumerate(lines):
        header = re.match(r"\s*┌─ injected: (\d+) tokens, (\d+) chars", line)
        if not header:
            continue
        body = []
        for following in lines[index + 1 :]:
            if following.strip() == "└─":
                break
            body.append(following.removeprefix("  │ ").removeprefix("  │"))
        text = "\n".join(body)
        assert len(text) == int(header.group(2))
        blocks.append((int(header.group(1)), text))
    return blocks


def test_demo_runs_offline_on_a_throwaway_store(tmp_path: Path) -> None:
    env = {**os.environ, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}  # any network call would fail
    env.pop("ANTHROPIC_API_KEY", None)
    done = subprocess.run(
        [str(AGENTCTX), "demo"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout

    superseded = re.search(r"(\w{26}) The inventory sync client talks REST\s+→\s+superseded by (\w{26})", out)
    assert superseded is not None, out
    old_id, new_id = superseded.groups()
    blocks = _blocks(out)
    assert len(blocks) >= 3
    for tokens, text in blocks:
        assert tokens == estimate_tokens(text)  # the counts shown are the real estimates
        assert old_id not in text and "talks REST" not in text and "REST/JSON" not in text
    digest = blocks[0][1]
    assert (
        digest.startswith(f"{DIGEST_OPEN}\n## Project: shop-api") and new_id in digest and SESSION_START.allows(digest)
    )
    prompt_blocks = [text for _, text in blocks if "<agentctx-record " in text]
    assert prompt_blocks and all(PROMPT.allows(text) for text in prompt_blocks)
    assert 'confidence="inferred"' in prompt_blocks[0] and "unconfirmed" in prompt_blocks[0]
    assert "nothing injected: nothing in the store is relevant" in out  # the haiku prompt
    assert "already injected in this session (dedup)" in out
    assert "bugfix stub" in out and "test run: failed" in out
    assert "## Before compaction" in blocks[-1][1]
    assert "never injected" in out

    assert not Path(os.environ["AGENTCTX_HOME"]).exists()  # the developer's store is untouched
    assert not [name for name in os.listdir(os.environ["TMPDIR"]) if name.startswith("agentctx-demo-")]
