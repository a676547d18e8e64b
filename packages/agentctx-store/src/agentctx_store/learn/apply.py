"""`agentctx learn`: read what the project already wrote, plan the records, write the plan.

Every learned record has `source: learn` and one anchor: the file (project-relative), the lines
it came from and the hash of those lines. A re-run compares anchors with what the files say
now, per file:

* same hash → unchanged (when only its lines moved, the anchor follows);
* a changed rule (its old and new text share most words) → the old record is superseded;
* a new rule → a new record, unless a record not made by `learn` already says the same
  (exact text, or nearly all the same words) — then nothing is written;
* a rule whose text is gone (or whose file is gone) → its record is retired.

Records not made by `learn` are never changed. ADRs become decisions; "superseded by" links
become supersession links between the learned records.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from agentctx_store._frozen import field, frozen, replace
from agentctx_store.anchors import Anchor, add_anchors, anchored_records, content_hash, replace_anchors
from agentctx_store.bounded import Refused, read_repo_text
from agentctx_store.calibration import refresh_prompt_floor
from agentctx_store.drift.text import terms_of
from agentctx_store.learn.adr import Adr, parse_adr, resolve_links
from agentctx_store.learn.discover import MEMORY_PREFIX, Source, find
from agentctx_store.learn.rules import clean_inline, front_matter, rule_title, rule_type, split_rules, trim
from agentctx_store.projects import Project
from agentctx_store.records import MAX_BODY_CHARS, NewRecord, Record
from agentctx_store.redact import redact_text
from agentctx_store.retire import retire
from agentctx_store.store import Store

SOURCE = "learn"
_CHANGED_OVERLAP = 0.5  # a rule whose old and new text share this much is the same rule, changed
_DUPLICATE_OVERLAP = 0.85  # a learned rule this close to a hand-made or extracted record is a duplicate


@frozen
class Item:
    """One record `learn` would write, with its anchor. `state` is `current`, or `superseded`
    / `deprecated` for an ADR that no longer holds (`successor` is its successor's anchor path)."""

    type: str
    title: str
    body: str
    anchor: Anchor
    kind: str
    valid_from: str | None = None
    state: str = "current"
    successor: str | None = None
    amends: tuple[str, ...] = ()  # anchor paths of the older ADRs this one amends (both stay current)
    also: tuple[Anchor, ...] = ()  # the same rule in other files: one record, anchored to all of them

    @property
    def anchors(self) -> list[Anchor]:
        return [self.anchor, *self.also]


@frozen
class Action:
    """`add`, `keep`, `move` (same text, new lines), `supersede`, `retire`, `link` or `duplicate`."""

    action: str
    item: Item | None = None
    record: Record | None = None
    duplicate_of: Record | None = None


@frozen
class LearnPlan:
    sources: list[Source] = field(default_factory=list[Source])
    actions: list[Action] = field(default_factory=list[Action])
    skipped: list[str] = field(default_factory=list[str])  # one line each: links out, unreadable files, rejected ADRs
    reasons: list[str] = field(default_factory=list[str])  # one line per file looked at: why taken or not

    def count(self, action: str) -> int:
        return sum(1 for planned in self.actions if planned.action == action)

    def summary(self) -> dict[str, int]:
        names = ("add", "supersede", "retire", "keep", "move", "duplicate", "link")
        return {name: self.count(name) for name in names} | {"files": len(self.sources)}


# -- reading sources ----------------------------------------------------------------------


def read_items(sources: Sequence[Source]) -> tuple[list[Item], list[str], list[Source]]:
    """The records the sources state (titles and bodies redacted as the store would redact
    them, so nothing printed or sent holds a secret), what was skipped (one line each), and the
    sources that were read. Each file is read with `bounded.read_repo_text` within its tree:
    a FIFO, device, socket, a file over `bounded.MAX_REPO_FILE` bytes or one that is not UTF-8
    is skipped with the line that says so."""
    items: list[Item] = []
    skipped: list[str] = []
    read: list[Source] = []
    adrs: list[tuple[Source, Adr]] = []
    for source in sources:
        try:
            text = read_repo_text(source.base, source.path)
        except Refused as exc:
            skipped.append(MEMORY_PREFIX + str(exc) if source.kind == "memory" else str(exc))
            continue
        read.append(source)
        if source.kind == "adr":
            adr = parse_adr(source.path, text)
            if adr is None or not adr.body:
                skipped.append(f"{source.rel}: skipped, no heading or no text")
            elif adr.state == "rejected":
                skipped.append(f"{source.rel}: skipped, a rejected ADR")
            else:
                adrs.append((source, adr))
        elif source.kind == "memory":
            items += _memory_items(source, text)
        else:
            items += _rule_items(source, text)
    items += _adr_items(adrs)
    return _one_per_rule(items), skipped, read


def _one_per_rule(items: list[Item]) -> list[Item]:
    """The same rule written in several instruction files (the same words, whatever the
    Markdown) is one item, anchored at its first file and at every other one."""
    first: dict[str, int] = {}
    out: list[Item] = []
    for item in items:
        key = _normal(item.body) if item.kind == "rules" else ""
        if key and key in first:
            index = first[key]
            out[index] = replace(out[index], also=(*out[index].also, item.anchor))
            continue
        if key:
            first[key] = len(out)
        out.append(item)
    return out


def _adr_items(adrs: list[tuple[Source, Adr]]) -> list[Item]:
    """One decision per ADR, with the links the ADRs state between them: an ADR another one
    supersedes is superseded too, an amended one stays current (linked), and a reference to an
    ADR not in the set stays in the body as a note."""
    rel_of = {adr.path: source.rel for source, adr in adrs}
    title_of = {adr.path: adr.title for _, adr in adrs}
    links = resolve_links([adr for _, adr in adrs])
    replaced = set(links.successor)
    items: list[Item] = []
    for source, adr in adrs:
        notes = list(links.notes.get(adr.path, []))
        notes += [f"Amended by {title_of[new]} ({rel_of[new]})" for old, new in links.amended if old == adr.path]
        notes += [f"Amends {title_of[old]} ({rel_of[old]})" for old, new in links.amended if new == adr.path]
        body = adr.body
        if notes:
            note = "\n".join(notes)
            body = trim(body, MAX_BODY_CHARS - len(note) - 2) + "\n\n" + note if body else note
        state = "superseded" if adr.path in replaced and adr.state == "current" else adr.state
        items.append(
            Item(
                type="decision",
                title=redact_text(adr.title),
                body=redact_text(trim(body, MAX_BODY_CHARS)),
                anchor=Anchor(path=source.rel, content_hash=content_hash(adr.raw), line_start=1, line_end=adr.line_end),
                kind="adr",
                valid_from=adr.valid_from,
                state=state,
                successor=rel_of[links.successor[adr.path]] if adr.path in links.successor else None,
                amends=tuple(rel_of[old] for old, new in links.amended if new == adr.path),
            )
        )
    return items


def _rule_items(source: Source, text: str) -> list[Item]:
    items: list[Item] = []
    for rule in split_rules(text):
        body = redact_text(rule.body)
        section = _section(rule.headings, body)
        items.append(
            Item(
                type=rule_type(body, rule.headings),
                title=redact_text(rule_title(body, rule.headings)),
                body=trim(body, MAX_BODY_CHARS - len(section) - 2) + "\n\n" + section if section else body,
                anchor=Anchor(
                    path=source.rel,
                    content_hash=content_hash(rule.raw),
                    line_start=rule.line_start,
                    line_end=rule.line_end,
                ),
                kind="rules",
            )
        )
    return items


def _section(headings: Sequence[str], body: str) -> str:
    """The headings above a rule, as context for its body (`Section: Testing › Unit tests`),
    when the body does not already name them (the file's title heading is left out)."""
    names = [clean_inline(name) for name in headings[1:] if name.strip()][-2:]
    lower = body.lower()
    if not names or all(name.lower() in lower for name in names):
        return ""
    return redact_text("Section: " + " › ".join(names))


_MEMORY_TYPES = {"feedback": "preference", "user": "preference", "project": "discovery", "reference": "discovery"}


def _memory_items(source: Source, text: str) -> list[Item]:
    """A Claude Code memory file: front matter (`name`, `description`, `type`) and its text."""
    lines = text.replace("\r\n", "\n").split("\n")
    front, start = front_matter(lines, within=30)
    body = redact_text("\n".join(clean_inline(line) for line in lines[start:] if line.strip()))
    if not body.strip():
        return []
    title = front.get("description") or front.get("name") or rule_title(body)
    return [
        Item(
            type=_MEMORY_TYPES.get(front.get("type", "").lower(), rule_type(body)),
            title=redact_text(trim(title, 120).replace("\n", " ")),
            body=trim(body, MAX_BODY_CHARS),
            anchor=Anchor(path=source.rel, content_hash=content_hash(text), line_start=1, line_end=len(lines)),
            kind="memory",
        )
    ]


# -- planning -------------------------------------------------------------------------------


def _words(text: str) -> set[str]:
    return terms_of(text)


def _overlap(first: str, second: str) -> float:
    a, b = _words(first), _words(second)
    return len(a & b) / max(1, len(a | b))


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def plan_learn(
    store: Store, project: Project, root: Path, paths: Sequence[Path] = (), *, home: Path | None = None
) -> LearnPlan:
    """What `learn` would do (nothing is written).

    Raises:
        FileNotFoundError: a given path does not exist.
    """
    found = find(root, paths, home=home)
    items, skipped, sources = read_items(found.sources)
    skipped = found.skipped + skipped
    every = [
        (record, anchors)
        for record, anchors in anchored_records(store, project, include_superseded=True)
        if record.source == SOURCE and anchors
    ]
    learned = [(record, anchors[0]) for record, anchors in every]
    anchors_of_record = {record.record_id: anchors for record, anchors in every}
    by_path: dict[str, list[tuple[Record, Anchor]]] = {}
    for record, anchor in learned:
        by_path.setdefault(anchor.path, []).append((record, anchor))
    items_by_path: dict[str, list[Item]] = {}
    for item in items:
        items_by_path.setdefault(item.anchor.path, []).append(item)
    others = [
        r for r in store.list_records(project, limit=None) if r.source != SOURCE and r.project_id == project.project_id
    ]
    actions: list[Action] = []
    scanned = {source.rel for source in sources}  # a file skipped this time keeps its records
    for path in sorted(set(items_by_path) | (scanned & set(by_path))):  # a file read but now empty of rules too
        actions += _plan_file(items_by_path.get(path, []), by_path.get(path, []), others)
    for path, records in by_path.items():
        if path in scanned or not _gone(root, path, paths, home):
            continue
        actions += [Action(action="retire", record=record) for record, _ in records if record.superseded_at is None]
    actions = [_moved(action, anchors_of_record) for action in actions]
    return LearnPlan(sources=sources, actions=actions, skipped=skipped, reasons=found.reasons)


def _moved(action: Action, anchors_of_record: dict[str, list[Anchor]]) -> Action:
    """A kept record whose other files changed (the same rule now in more or fewer files) moves."""
    if action.action != "keep" or action.item is None or action.record is None:
        return action
    stored = anchors_of_record.get(action.record.record_id, [])
    if sorted(map(_anchor_key, stored)) != sorted(map(_anchor_key, action.item.anchors)):
        return replace(action, action="move")
    return action


def _anchor_key(anchor: Anchor) -> tuple[str, str, int, int]:
    return (anchor.path, anchor.content_hash, anchor.line_start or 0, anchor.line_end or 0)


def _gone(root: Path, path: str, paths: Sequence[Path], home: Path | None) -> bool:
    """Whether a file learned before is gone (a run on some paths only never retires others)."""
    if paths:
        return False
    if path.startswith(MEMORY_PREFIX):
        return True  # not among this run's memory files: deleted from the memory folder
    return not (root / path).exists()


def _plan_file(items: list[Item], records: list[tuple[Record, Anchor]], others: list[Record]) -> list[Action]:
    actions: list[Action] = []
    current = [(record, anchor) for record, anchor in records if record.superseded_at is None]
    history = [(record, anchor) for record, anchor in records if record.superseded_at is not None]
    unmatched: list[Item] = []
    for item in items:
        same = next((pair for pair in current if pair[1] == item.anchor), None) or next(
            (pair for pair in current if pair[1].content_hash == item.anchor.content_hash), None
        )
        if same is None and item.state != "current":  # an ADR learned before as superseded
            same = next((pair for pair in history if pair[1].content_hash == item.anchor.content_hash), None)
            if same is not None:
                history.remove(same)
                actions.append(Action(action="keep", item=item, record=same[0]))
                continue
        if same is None:
            unmatched.append(item)
            continue
        current.remove(same)
        moved = (same[1].line_start, same[1].line_end) != (item.anchor.line_start, item.anchor.line_end)
        actions.append(Action(action="move" if moved else "keep", item=item, record=same[0]))
        if item.state != "current" and same[0].superseded_at is None:
            actions.append(Action(action="link", item=item, record=same[0]))
    for item in unmatched:
        best = max(current, key=lambda pair: _overlap(pair[0].body, item.body), default=None)
        if best is not None and (_overlap(best[0].body, item.body) >= _CHANGED_OVERLAP or item.kind != "rules"):
            current.remove(best)
            actions.append(Action(action="supersede", item=item, record=best[0]))
            if item.state != "current":
                actions.append(Action(action="link", item=item))
            continue
        duplicate = _duplicate(item, others)
        if duplicate is not None:
            actions.append(Action(action="duplicate", item=item, duplicate_of=duplicate))
            continue
        actions.append(Action(action="add", item=item))
        if item.state != "current":
            actions.append(Action(action="link", item=item))
    actions += [Action(action="retire", record=record) for record, _ in current]
    return actions


def _duplicate(item: Item, others: list[Record]) -> Record | None:
    """A record not made by `learn` that already states this rule."""
    normal = _normal(item.body)
    for record in others:
        if _normal(record.body) == normal or _overlap(record.body, item.body) >= _DUPLICATE_OVERLAP:
            return record
    return None


# -- writing --------------------------------------------------------------------------------


def apply_plan(store: Store, project: Project, plan: LearnPlan) -> dict[str, int]:
    """Write the plan in one transaction; returns the counts of `LearnPlan.summary`."""
    written: dict[str, str] = {}  # anchor path of an ADR → its current record id
    links: list[Item] = []
    with store.transaction():
        for action in plan.actions:
            item, record = action.item, action.record
            if action.action == "add" and item is not None:
                created = store.add(project, _new(item))
                add_anchors(store, project, created.record_id, item.anchors)
                written[item.anchor.path] = created.record_id
            elif action.action == "supersede" and item is not None and record is not None:
                if record.superseded_at is None:
                    created = store.add(project, _new(item), supersedes=record.record_id)
                else:
                    created = store.add(project, _new(item))
                add_anchors(store, project, created.record_id, item.anchors)
                written[item.anchor.path] = created.record_id
            elif action.action in ("keep", "move") and item is not None and record is not None:
                if action.action == "move":
                    replace_anchors(store, project, record.record_id, item.anchors)
                written[item.anchor.path] = record.record_id
            elif action.action == "retire" and record is not None:
                retire(store, project, record.record_id)
            elif action.action == "link" and item is not None:
                links.append(item)
        for item in links:
            record_id = written.get(item.anchor.path)
            if record_id is None or store.get(project, record_id).superseded_at is not None:
                continue
            successor = written.get(item.successor) if item.successor else None
            if successor is not None and store.get(project, successor).superseded_at is not None:
                successor = None
            when = _successor_date(store, project, successor)
            retire(store, project, record_id, successor_id=successor, when=when)
        for action in plan.actions:  # amendments: both stay current, linked
            item = action.item
            if item is None or not item.amends or action.action not in ("add", "supersede", "keep", "move"):
                continue
            for older in item.amends:
                if (newer_id := written.get(item.anchor.path)) and (older_id := written.get(older)):
                    store.add_edge(newer_id, older_id, "amends")
    # the project's own keyword floor, measured now if missing or stale: in force from its first prompt
    refresh_prompt_floor(store, project)
    return plan.summary()


def _successor_date(store: Store, project: Project, successor: str | None) -> str | None:
    if successor is None:
        return None
    return store.get(project, successor).valid_from


def _new(item: Item) -> NewRecord:
    return NewRecord(
        type=item.type,
        title=item.title,
        body=item.body,
        confidence="explicit",
        source=SOURCE,
        valid_from=item.valid_from,
    )


def learn(
    store: Store,
    project: Project,
    root: Path,
    paths: Sequence[Path] = (),
    *,
    dry_run: bool = False,
    home: Path | None = None,
) -> LearnPlan:
    """Plan, and unless `dry_run`, write. Returns the plan (its `summary()` says what changed)."""
    plan = plan_learn(store, project, root, paths, home=home)
    if not dry_run:
        apply_plan(store, project, plan)
    return plan
