"""What `agentctx learn` gets out of real project documents, measured against the hand splits.

Reads the fixture documents copied into the repo (packages/agentctx-store/tests/learn/fixtures/
project-docs) and, for the quality figures, the hand-made eval records of `../shared/eval`
(skipped when absent):

1. `test_learn_adrs`: ADRs (alphagov/forms, JabRef): how many ADRs became decisions, and the
   supersession links learned vs the hand-checked ones of the fixture README (asserted exact).
2. `test_learn_quality`: instruction files (prefect, mcp-py, trigger) vs `conv-dev/records.jsonl`:
   coverage (a hand record is covered when one learned body holds ≥ 60 % of its words) and noise
   (a learned record that covers no hand record and whose own words are not ≥ 50 % inside one);
   how often the learned type agrees with the hand type on covered records. Then through the
   prompt hook (`agentctx_hooks.prompt.handle`, in process): the conv-dev and adr-dev queries of
   those five projects, on a store built only by `learn` from the fixtures and on one built from
   the hand records; recall@3 judged by text overlap with the relevant hand records (the same
   judge for both stores).

3. `test_learn_corpus`: the corpus of real repositories (packages/agentctx-store/tests/learn/
   fixtures/corpus, hand labels in its `labels.json`): per repository, ADRs found, current ADRs
   learned as current, supersession and amendment links found against the labelled ones, and
   stale ADRs left current; for instruction files, files read, records, duplicate rules and
   what `sync` right after `learn` still calls missing. Held-out repositories (never used to
   tune the parser) are totalled apart from the others.
4. `test_learn_10000_adrs`: a folder of 10,000 ADRs (one in ten superseded by the next), learned
   from scratch, against the same folder's plain read (`read_text` of every file) in the same
   run: the ratio says what learn costs over reading, whatever the machine's load.

`uv run pytest bench/test_bench_learn.py -s` prints the figures; they are also the tests'
`extra_info`. `.venv/bin/python bench/test_bench_learn.py` prints them without pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import _eval
import pytest
from _eval import load_jsonl
from _harness import REPO_ROOT, shared_root
from agentctx_store import Store, resolve_project
from agentctx_store.anchors import anchored_records
from agentctx_store.calibration import refresh_prompt_floor
from agentctx_store.learn import learn

FIXTURES = REPO_ROOT / "packages" / "agentctx-store" / "tests" / "learn" / "fixtures" / "project-docs"
FOLDERS = {
    "forms": "alphagov-forms",
    "jabref": "jabref",
    "prefect": "prefect",
    "mcp-py": "mcp-python-sdk",
    "trigger": "trigger.dev",
}
HAND_LINKS = {"forms": {(2, 19), (3, 15), (4, 45), (7, 44), (13, 25), (43, 46)}, "jabref": {(45, 57)}}
ADR_COUNTS = {"forms": 50, "jabref": 70}
CONV = ("prefect", "mcp-py", "trigger")
# `../shared/eval` beside the checkout ($AGENTCTX_BENCH_SHARED), or beside a worktree's folder
EVAL = next(
    (path for path in (shared_root() / "eval", REPO_ROOT.parent.parent / "shared" / "eval") if path.is_dir()),
    shared_root() / "eval",
)


def words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z0-9_]+", text) if len(word) > 1}


def contains(big: str, small: str, share: float) -> bool:
    need = words(small)
    return bool(need) and len(need & words(big)) >= share * len(need)


def copy_project(name: str, parent: Path) -> Path:
    root = parent / name
    shutil.copytree(FIXTURES / FOLDERS[name], root)
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for file in files:
            os.chmod(Path(folder) / file, 0o644)
    (root / ".git").mkdir()
    return root


def learned_store(home: Path, parent: Path) -> dict[str, Any]:
    """Every fixture project learned into one store; per-project figures."""
    os.environ["AGENTCTX_HOME"] = str(home)
    out: dict[str, Any] = {}
    with Store.open() as store:
        for name in FOLDERS:
            root = copy_project(name, parent)
            project = resolve_project(root)
            started = time.perf_counter()
            plan = learn(store, project, root)
            seconds = time.perf_counter() - started
            again = learn(store, project, root)
            records = store.list_records(project, include_superseded=True, limit=None)
            anchors = {
                record.record_id: anchors[0].path
                for record, anchors in anchored_records(store, project, include_superseded=True)
            }
            out[name] = {
                "root": root,
                "project": project,
                "records": records,
                "anchors": anchors,
                "seconds": seconds,
                "files": len(plan.sources),
                "rerun_changes": sum(again.count(action) for action in ("add", "supersede", "retire", "move", "link")),
            }
        store.dirty.clear()
    return out


def adr_figures(learned: dict[str, Any]) -> dict[str, Any]:
    figures = {}
    for name in ("forms", "jabref"):
        data = learned[name]
        adr_records = [
            r
            for r in data["records"]
            if "decision" in r.type
            and "/" in data["anchors"].get(r.record_id, "")
            and re.search(r"\d{2,4}-", data["anchors"][r.record_id])
        ]
        number = {
            r.record_id: int(re.search(r"(\d{2,4})-", data["anchors"][r.record_id].rsplit("/", 1)[-1]).group(1))
            for r in adr_records
        }  # type: ignore[union-attr]
        links = {(number[r.record_id], number[r.superseded_by]) for r in adr_records if r.superseded_by in number}
        current = [r for r in adr_records if r.superseded_at is None]
        figures[name] = {
            "adrs": ADR_COUNTS[name],
            "decisions": len(adr_records),
            "current": len(current),
            "share": len(adr_records) / ADR_COUNTS[name],
            "links_found": sorted(links),
            "links_correct": len(links & HAND_LINKS[name]),
            "links_hand": len(HAND_LINKS[name]),
            "links_wrong": len(links - HAND_LINKS[name]),
        }
    return figures


def conv_figures(learned: dict[str, Any], hand: list[dict[str, Any]]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    totals = {"hand": 0, "covered": 0, "learned": 0, "noise": 0, "typed": 0, "same_type": 0}
    for name in CONV:
        records = [r for r in learned[name]["records"] if r.superseded_at is None]
        hands = [h for h in hand if h["project"] == name and h["status"] == "current"]
        covering: set[str] = set()
        covered = 0
        same_type = typed = 0
        for item in hands:
            matches = [r for r in records if contains(r.body, item["body"], 0.6)]
            if matches:
                covered += 1
                covering.update(r.record_id for r in matches)
                typed += 1
                same_type += any(r.type == item["type"] for r in matches)
        noise = [
            r
            for r in records
            if r.record_id not in covering and not any(contains(h["body"], r.body, 0.5) for h in hands)
        ]
        figures[name] = {"hand": len(hands), "covered": covered, "learned": len(records), "noise": len(noise),
                         "noise_examples": [r.title for r in noise[:5]]}  # fmt: skip
        for key, value in (("hand", len(hands)), ("covered", covered), ("learned", len(records)), ("noise", len(noise)),
                           ("typed", typed), ("same_type", same_type)):  # fmt: skip
            totals[key] += value
    figures["total"] = totals | {
        "coverage": totals["covered"] / totals["hand"],
        "noise_share": totals["noise"] / totals["learned"],
        "type_agreement": totals["same_type"] / max(1, totals["typed"]),
    }
    return figures


def hand_store(home: Path, parent: Path, records: list[dict[str, Any]]) -> dict[str, Path]:
    """The hand records of the five projects in a store whose projects are real folders."""
    os.environ["AGENTCTX_HOME"] = str(home)
    roots: dict[str, Path] = {}
    for name in FOLDERS:
        root = parent / name
        (root / ".git").mkdir(parents=True)
        roots[name] = root
    loaded = _eval.load_into_store(records, home / "agentctx.db", lambda name: resolve_project(roots[name]))
    for project in loaded.projects.values():  # each project's own keyword floor, as `learn` measures it
        refresh_prompt_floor(loaded.store, project)
    loaded.store.close()
    return roots


def through_hook(home: Path, roots: dict[str, Path], queries: list[dict[str, Any]]) -> list[list[str]]:
    """The records the prompt hook injects for each query, best first, as their full text
    (title and body: the hook may show a runner-up by its title or an excerpt only)."""
    from agentctx_hooks import prompt
    from agentctx_hooks.payload import HookInput

    os.environ["AGENTCTX_HOME"] = str(home)
    injected_ids = []
    for index, query in enumerate(queries):
        data = {
            "prompt": query["query"],
            "cwd": str(roots[query["project"]]),
            "session_id": f"bench-{home.name}-{index}",
        }
        text = prompt.handle(HookInput(event="UserPromptSubmit", data=data))
        injected_ids.append(re.findall(r'<agentctx-record [^>]*?id="([0-9A-Z]{26})"', text))
    with Store.open(home / "agentctx.db") as store:
        rows = store.conn.execute("SELECT id, title, body FROM records").fetchall()
        store.dirty.clear()
    full = {row[0]: f"{row[1]}\n{row[2]}" for row in rows}
    return [[full[record_id] for record_id in ids if record_id in full] for ids in injected_ids]


def judged_recall(queries: list[dict[str, Any]], injected: list[list[str]], by_id: dict[str, dict[str, Any]]) -> float:
    """recall@3 over queries with relevant records: a relevant hand record counts as found when
    one of the first three injected records holds ≥ 60 % of its body's words, or ≥ 80 % of its
    title's words (an ADR trimmed differently)."""
    scores = []
    for query, texts in zip(queries, injected, strict=True):
        relevant = [by_id[rid] for rid in query["relevant"] if rid in by_id]
        if not relevant:
            continue
        top = texts[:3]
        found = sum(
            1
            for item in relevant
            if any(
                contains(text, item["body"], 0.6) or contains(text.split("\n", 1)[0], item["title"], 0.8)
                for text in top
            )
        )
        scores.append(found / len(relevant))
    return sum(scores) / len(scores) if scores else 0.0


def measure(*, quality: bool = True) -> dict[str, Any]:
    """Every figure of this file (the quality ones only when the eval sets are there)."""
    saved = {name: os.environ.get(name) for name in ("AGENTCTX_HOME", "AGENTCTX_HOOKS_NO_SPAWN")}
    os.environ["AGENTCTX_HOOKS_NO_SPAWN"] = "1"  # no background work from a benchmark: both stores' floors are measured
    try:
        return _measure(quality=quality)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _measure(*, quality: bool) -> dict[str, Any]:
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp)
        learned = learned_store(base / "learned-home", base / "learned")
        report["adr"] = adr_figures(learned)
        report["learn_seconds"] = {name: round(data["seconds"], 3) for name, data in learned.items()}
        report["rerun_changes"] = {name: data["rerun_changes"] for name, data in learned.items()}
        if quality and EVAL.is_dir():
            conv = load_jsonl(EVAL / "conv-dev" / "records.jsonl")
            adr = load_jsonl(EVAL / "adr-dev" / "records.jsonl")
            report["conv"] = conv_figures(learned, conv)
            hand = [r for r in conv + adr if r["project"] in FOLDERS]
            by_id = {r["id"]: r for r in hand}
            queries = [
                q
                for name in ("conv-dev", "adr-dev")
                for q in load_jsonl(EVAL / name / "queries.jsonl")
                if q["project"] in FOLDERS
            ]
            hand_roots = hand_store(base / "hand-home", base / "hand", hand)
            learned_roots = {name: data["root"] for name, data in learned.items()}
            recall: dict[str, Any] = {}
            for label, subset in (("conv-dev", [q for q in queries if q["qid"].startswith("cdev")]),
                                  ("adr-dev", [q for q in queries if not q["qid"].startswith("cdev")])):  # fmt: skip
                on_hand = judged_recall(subset, through_hook(base / "hand-home", hand_roots, subset), by_id)
                on_learned = judged_recall(subset, through_hook(base / "learned-home", learned_roots, subset), by_id)
                recall[label] = {"queries": len(subset), "hand": round(on_hand, 3), "learned": round(on_learned, 3)}
            report["recall@3"] = recall
    return report


def print_report(report: dict[str, Any]) -> None:
    for name, figures in report["adr"].items():
        print(
            f"ADR {name}: {figures['decisions']}/{figures['adrs']} ADRs as decisions ({figures['share']:.0%}), "
            f"{figures['current']} current; links {figures['links_correct']}/{figures['links_hand']} hand-checked, "
            f"{figures['links_wrong']} wrong"
        )
    print(f"learn time (s): {report['learn_seconds']}; changes on a second run: {report['rerun_changes']}")
    if "conv" in report:
        for name in CONV:
            item = report["conv"][name]
            print(
                f"conv {name}: {item['covered']}/{item['hand']} hand rules covered, {item['noise']}/{item['learned']} learned are noise"
            )
        total = report["conv"]["total"]
        print(
            f"conv total: coverage {total['coverage']:.1%}, noise {total['noise_share']:.1%}, "
            f"type agreement on covered {total['type_agreement']:.1%}"
        )
        for label, item in report["recall@3"].items():
            print(
                f"recall@3 through the hook, {label} ({item['queries']} queries): hand {item['hand']:.3f}, learned {item['learned']:.3f}"
            )


def test_learn_adrs(benchmark: Any) -> None:
    benchmark.group = "learn"
    report = benchmark.pedantic(measure, kwargs={"quality": False}, rounds=1, iterations=1)
    print_report(report)
    figures = {"adr": report["adr"], "seconds": report["learn_seconds"]}
    benchmark.extra_info.update(json.loads(json.dumps(figures, default=str)))
    for name, item in report["adr"].items():
        assert item["share"] >= 0.9, name
        assert set(map(tuple, item["links_found"])) == HAND_LINKS[name], name
    assert set(report["rerun_changes"].values()) == {0}


def test_learn_quality(benchmark: Any) -> None:
    if not EVAL.is_dir():
        pytest.skip(f"{EVAL} not found (the shared folder beside the clone, or AGENTCTX_BENCH_SHARED)")
    benchmark.group = "learn"
    report = benchmark.pedantic(measure, rounds=1, iterations=1)
    print_report(report)
    benchmark.extra_info.update({"conv": report["conv"]["total"], "recall@3": report["recall@3"]})


def corpus_figures() -> dict[str, Any]:
    """Per-repository figures on the corpus (tests/learn/corpus.py does the comparing)."""
    sys.path.insert(0, str(REPO_ROOT / "packages" / "agentctx-store" / "tests" / "learn"))
    import corpus

    saved_home = os.environ.get("AGENTCTX_HOME")
    out: dict[str, Any] = {"adr": {}, "rules": {}}
    try:
        with tempfile.TemporaryDirectory() as temp:
            os.environ["AGENTCTX_HOME"] = str(Path(temp) / "home")
            with Store.open() as store:
                for name in corpus.LABELS["adr"]:
                    out["adr"][name] = corpus.adr_figures(store, name, Path(temp) / "adr")
                for name in corpus.LABELS["rules"]:
                    out["rules"][name] = corpus.rules_figures(store, name, Path(temp) / "rules")
                store.dirty.clear()
    finally:
        if saved_home is None:
            os.environ.pop("AGENTCTX_HOME", None)
        else:
            os.environ["AGENTCTX_HOME"] = saved_home
    for kind, keys in (("adr", ("adr_files", "found", "current_expected", "current_learned", "links_hand",
                                "links_found", "amended_hand", "amended_found")),
                       ("rules", ("instruction_files", "files_read", "records", "duplicate_bodies",
                                  "sync_missing_learned", "hand_rules", "covered", "learned", "noise"))):  # fmt: skip
        for group in ("in-sample", "held-out"):
            rows = [f for f in out[kind].values() if f["heldout"] == (group == "held-out")]
            total = {key: sum(f[key] for f in rows) for key in keys}
            if kind == "adr":
                total["links_wrong"] = sum(len(f["links_wrong"]) for f in rows)
                total["stale_current"] = sum(len(f["stale_current"]) for f in rows)
                known = [n for n, f in out[kind].items() if f in rows and corpus.LABELS["adr"][n].get("known_miss")]
                total["links_wrong_known_miss"] = sum(len(out[kind][n]["links_wrong"]) for n in known)
            out[f"{kind}_{group}"] = total
    return out


def print_corpus(report: dict[str, Any]) -> None:
    for name, f in report["adr"].items():
        print(
            f"corpus ADR {name}{' (held out)' if f['heldout'] else ''}: found {f['found']}/{f['adr_files']}, "
            f"current {f['current_learned']}/{f['current_expected']}, links {f['links_found']}/{f['links_hand']} "
            f"(wrong {len(f['links_wrong'])}), amended {f['amended_found']}/{f['amended_hand']}, "
            f"stale current {len(f['stale_current'])}"
        )
    for name, f in report["rules"].items():
        print(
            f"corpus rules {name}{' (held out)' if f['heldout'] else ''}: {f['files_read']}/{f['instruction_files']} "
            f"files, {f['records']} records, {f['duplicate_bodies']} duplicates, "
            f"{f['sync_missing_learned']} learned records sync calls missing"
            + (
                f"; hand split: {f['covered']}/{f['hand_rules']} covered, {f['noise']}/{f['learned']} noise"
                if f["hand_rules"]
                else ""
            )
        )
    for key in ("adr_in-sample", "adr_held-out", "rules_in-sample", "rules_held-out"):
        print(f"corpus {key}: {report[key]}")


def test_learn_corpus(benchmark: Any) -> None:
    benchmark.group = "learn"
    report = benchmark.pedantic(corpus_figures, rounds=1, iterations=1)
    print_corpus(report)
    benchmark.extra_info.update(json.loads(json.dumps(report, default=str)))
    for group in ("adr_in-sample", "adr_held-out"):
        total = report[group]
        assert total["current_learned"] >= 0.95 * total["current_expected"], group
        assert total["links_found"] == total["links_hand"], group
        assert total["links_wrong"] == total["links_wrong_known_miss"], group  # labels.json, known_miss
        assert total["stale_current"] == 0, group


def ten_thousand_adrs(folder: Path) -> dict[str, Any]:
    saved_home = os.environ.get("AGENTCTX_HOME")
    root = folder / "repo"
    adrs = root / "docs" / "adr"
    adrs.mkdir(parents=True)
    (root / ".git").mkdir()
    for n in range(1, 10_001):
        status = f"Superseded by [ADR-{n + 1:05d}]({n + 1:05d}-decision-{n + 1}.md)" if n % 10 == 0 else "Accepted"
        (adrs / f"{n:05d}-decision-{n}.md").write_text(
            f"# {n}. Decision number {n}\n\nDate: 2024-01-01\n\n## Status\n\n{status}\n\n## Context\n\n"
            f"We needed thing {n} for reason {n}.\n\n## Decision\n\nWe will do thing {n}.\n",
            encoding="utf-8",
        )
    try:
        os.environ["AGENTCTX_HOME"] = str(folder / "home")
        started = time.perf_counter()
        for path in sorted(adrs.iterdir()):
            path.read_text(encoding="utf-8")
        read_seconds = time.perf_counter() - started
        with Store.open() as store:
            project = resolve_project(root)
            started = time.perf_counter()
            plan = learn(store, project, root)
            seconds = time.perf_counter() - started
            superseded = sum(
                1 for r in store.list_records(project, include_superseded=True, limit=None) if r.superseded_at
            )
            store.dirty.clear()
    finally:
        if saved_home is None:
            os.environ.pop("AGENTCTX_HOME", None)
        else:
            os.environ["AGENTCTX_HOME"] = saved_home
    return {"files": len(plan.sources), "learn_seconds": round(seconds, 2), "read_seconds": round(read_seconds, 3),
            "ratio_to_plain_read": round(seconds / max(read_seconds, 1e-6), 1), "superseded": superseded}  # fmt: skip


def test_learn_10000_adrs(benchmark: Any, tmp_path: Path) -> None:
    benchmark.group = "learn"
    figures = benchmark.pedantic(ten_thousand_adrs, args=(tmp_path,), rounds=1, iterations=1)
    print(f"10,000 ADRs: {figures}")
    benchmark.extra_info.update(figures)
    assert figures["files"] == 10_000 and figures["superseded"] == 1_000


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    result = measure()
    if parser.parse_args().json:
        print(json.dumps(result | {"corpus": corpus_figures()}, indent=2, default=str))
    else:
        print_report(result)
        print_corpus(corpus_figures())
