"""Learning the corpus of real repositories (fixtures/corpus, see its README for sources and
licences) and comparing with its hand labels: shared by tests/learn/test_corpus.py and
bench/test_bench_learn.py (which imports this file by path)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from agentctx_store import Store, drift, resolve_project
from agentctx_store.anchors import anchored_records
from agentctx_store.learn import learn
from agentctx_store.learn.discover import instruction_why

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
LABELS: dict[str, Any] = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))


def copy_repo(name: str, parent: Path) -> Path:
    """The repository's files in a folder of its own (links kept), as a checkout without git."""
    root = parent / name
    shutil.copytree(CORPUS / name, root, symlinks=True)
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for file in files:
            if not (Path(folder) / file).is_symlink():
                os.chmod(Path(folder) / file, 0o644)
    (root / ".git").mkdir()
    return root


def _words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z0-9_]+", text) if len(word) > 1}


def _contains(big: str, small: str, share: float) -> bool:
    need = _words(small)
    return bool(need) and len(need & _words(big)) >= share * len(need)


def split_figures(bodies: list[str], hand: list[str]) -> dict[str, int]:
    """Hand-split rules covered by a learned body (>= 60 % of their words in it), and learned
    records that are noise (cover no hand rule, and at most half their words are in one). All
    zero for a repository without a hand-split sample."""
    if not hand:
        return {"hand_rules": 0, "covered": 0, "learned": 0, "noise": 0}
    covered = sum(1 for rule in hand if any(_contains(body, rule, 0.6) for body in bodies))
    noise = sum(
        1
        for body in bodies
        if not any(_contains(body, rule, 0.6) for rule in hand) and not any(_contains(rule, body, 0.5) for rule in hand)
    )
    return {"hand_rules": len(hand), "covered": covered, "learned": len(bodies), "noise": noise}


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def adr_figures(store: Store, name: str, parent: Path) -> dict[str, Any]:
    """One ADR repository: what `learn` made of it against the labels."""
    label = LABELS["adr"][name]
    root = copy_repo(name, parent)
    project = resolve_project(root)
    plan = learn(store, project, root)
    folder = label["folder"]
    adr_paths = {s.rel for s in plan.sources if s.kind == "adr"}
    files = sorted(
        p.name[:-3]
        for p in (root / folder).iterdir()
        if p.suffix == ".md"
        and p.name.lower() not in ("readme.md", "index.md")
        and "template" not in p.name.lower()
        and p.name[:-3] not in label.get("not_adr", [])
    )
    path_of = {
        record.record_id: anchors[0].path
        for record, anchors in anchored_records(store, project, include_superseded=True)
    }
    records = [
        r
        for r in store.list_records(project, include_superseded=True, limit=None)
        if path_of.get(r.record_id) in adr_paths
    ]
    stem_of = {r.record_id: _stem(path_of[r.record_id]) for r in records}
    links = {(stem_of[r.record_id], stem_of[r.superseded_by]) for r in records if r.superseded_by in stem_of}
    edges = store.conn.execute("SELECT from_id, to_id FROM edges WHERE rel_type = 'amends'").fetchall()
    amended = {(stem_of[old], stem_of[new]) for new, old in edges if new in stem_of and old in stem_of}
    current = {stem_of[r.record_id] for r in records if r.superseded_at is None}
    expected_current = set(files) - set(label["not_current"])
    hand_links = {tuple(pair) for pair in label["links"]}
    hand_amended = {tuple(pair) for pair in label["amended"]}
    return {
        "heldout": label["heldout"],
        "adr_files": len(files),
        "found": len({_stem(p) for p in adr_paths} & set(files)),
        "current_expected": len(expected_current),
        "current_learned": len(current & expected_current),
        "stale_current": sorted(current & set(label["not_current"])),
        "links_hand": len(hand_links),
        "links_found": len(links & hand_links),
        "links_wrong": sorted(links - hand_links),
        "amended_hand": len(hand_amended),
        "amended_found": len(amended & hand_amended),
        "amended_wrong": sorted(amended - hand_amended),
    }


def rules_figures(store: Store, name: str, parent: Path) -> dict[str, Any]:
    """One repository's instruction files: files found, records, duplicates, and what `sync`
    right after `learn` says is missing among the records learned from them."""
    root = copy_repo(name, parent)
    project = resolve_project(root)
    plan = learn(store, project, root)
    rules = [s for s in plan.sources if s.kind == "rules"]
    path_of = {record.record_id: anchors[0].path for record, anchors in anchored_records(store, project)}
    records = [r for r in store.list_records(project, limit=None) if r.record_id in path_of]
    learned_rules = {r.record_id for r in records if path_of[r.record_id] in {s.rel for s in rules}}
    bodies = [" ".join(r.body.lower().split()) for r in records if r.record_id in learned_rules]
    report = drift.analyse(store, project)
    long_titles = [r.title for r in records if r.record_id in learned_rules and len(r.title) > 90]
    splits = split_figures(
        [r.body for r in records if r.record_id in learned_rules], LABELS["rule_splits"].get(name, [])
    )
    return splits | {
        "heldout": LABELS["rules"][name]["heldout"],
        "instruction_files": sum(
            1
            for p in root.rglob("*")
            if p.is_file() and not p.is_symlink() and instruction_why(p.relative_to(root).parts) is not None
        ),
        "files_read": len(rules),
        "records": len(learned_rules),
        "duplicate_bodies": len(bodies) - len(set(bodies)),
        "sync_missing_learned": sum(1 for entry in report.missing if entry.record_id in learned_rules),
        "titles_over_90": len(long_titles),
    }
