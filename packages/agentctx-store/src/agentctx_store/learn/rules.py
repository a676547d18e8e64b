"""Instruction files (CLAUDE.md, AGENTS.md, Copilot and Cursor rules, GEMINI.md) → one rule each.

The file is read as Markdown blocks: paragraphs, list items (with their nested items and
continuation lines), fenced code, tables, headings. Then blocks become rules:

* a list item is a rule; a short lead-in paragraph ending in `:` is kept with its items — as one
  rule when the items are short (a list that finishes a sentence), else prefixed to each item;
* a paragraph is a rule; a code block belongs to the paragraph or item that introduces it
  (ending in `:`), else it is a rule of its own under its heading (long blocks split at blank
  lines: one group of commands each);
* a table is one rule (its rows), under its heading;
* navigation is skipped: link-only lists, `@file` imports, HTML comments, "this file provides
  guidance" boilerplate, the project's one-line description above the first section.

Typing and titles are deterministic (`rule_type`, `rule_title`): the same file always gives
the same records.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentctx_store._frozen import frozen
from agentctx_store.records import MAX_BODY_CHARS

MAX_TITLE = 80
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+(.*)$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}")
_LINK_ONLY = re.compile(r"^\s*(\[[^\]]*\]\([^)]*\)|<https?://[^>]+>|https?://\S+)\s*([-—:–]\s*.{0,60})?$")
_BOILERPLATE = re.compile(
    r"^(this file provides guidance|this file (contains|gives) (instructions|guidance)|"
    r"this (file|guide|document|page) (provides|gives|contains|is) (an? )?(comprehensive |brief |short )?"
    r"(overview|guidance|guide|instructions|introduction)|welcome to (the|this)\b|"
    r"subdirectory (claude|agents)\.md files)",
    re.IGNORECASE,
)

_POINTS_BELOW = re.compile(r"\b(below|the following|as follows)\b", re.IGNORECASE)  # "the diagram below …"
_DESCRIPTION = re.compile(
    r"^[A-Z][\w.-]*( [A-Z][\w.-]*)? is an? [^.]*\b(platform|library|framework|tool|app|application|sdk|service)\b"
)


@frozen
class Rule:
    """One rule read from a file: its text, where it sits (1-based inclusive lines), the heading
    path above it, and the raw source lines (hashed for the anchor)."""

    body: str
    line_start: int
    line_end: int
    headings: tuple[str, ...]
    raw: str


@frozen
class _Block:
    kind: str  # para | item | code | table | heading
    start: int  # 0-based
    end: int  # 0-based inclusive
    text: str
    headings: tuple[str, ...]


# -- blocks ----------------------------------------------------------------------------


def _blocks(lines: Sequence[str]) -> list[_Block]:
    blocks: list[_Block] = []
    headings: list[tuple[int, str]] = []
    index = _skip_front_matter(lines)
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped:
            index += 1
            continue
        if stripped.startswith("<!--"):
            while index < len(lines) and "-->" not in lines[index]:
                index += 1
            index += 1
            continue
        if heading := _HEADING.match(line):
            level, text = len(heading.group(1)), clean_inline(heading.group(2))
            headings = [(lvl, txt) for lvl, txt in headings if lvl < level] + [(level, text)]
            blocks.append(_Block(kind="heading", start=index, end=index, text=text, headings=_names(headings)))
            index += 1
            continue
        if _FENCE.match(line):
            end = _fence_end(lines, index)
            blocks.append(
                _Block(
                    kind="code",
                    start=index,
                    end=end,
                    text=_code_text(lines[index : end + 1]),
                    headings=_names(headings),
                )
            )
            index = end + 1
            continue
        if stripped.startswith("|"):
            end = index
            while end + 1 < len(lines) and lines[end + 1].strip().startswith("|"):
                end += 1
            blocks.append(
                _Block(
                    kind="table",
                    start=index,
                    end=end,
                    text=_table_text(lines[index : end + 1]),
                    headings=_names(headings),
                )
            )
            index = end + 1
            continue
        if item := _ITEM.match(line):
            end = _item_end(lines, index, len(item.group(1)))
            text = _item_text(lines[index : end + 1])
            blocks.append(_Block(kind="item", start=index, end=end, text=text, headings=_names(headings)))
            index = end + 1
            continue
        end = index
        while end + 1 < len(lines):
            nxt = lines[end + 1]
            if (
                not nxt.strip()
                or _HEADING.match(nxt)
                or _FENCE.match(nxt)
                or _ITEM.match(nxt)
                or nxt.strip().startswith("|")
            ):
                break
            end += 1
        text = " ".join(clean_inline(part) for part in lines[index : end + 1])
        blocks.append(_Block(kind="para", start=index, end=end, text=text, headings=_names(headings)))
        index = end + 1
    return blocks


def _names(headings: list[tuple[int, str]]) -> tuple[str, ...]:
    return tuple(text for _, text in headings)


def _skip_front_matter(lines: Sequence[str]) -> int:
    if lines and lines[0].strip() == "---":
        for index in range(1, min(len(lines), 60)):
            if lines[index].strip() == "---":
                return index + 1
    return 0


def _fence_end(lines: Sequence[str], start: int) -> int:
    fence = _FENCE.match(lines[start])
    marker = fence.group(1) if fence else "```"
    for index in range(start + 1, len(lines)):
        if lines[index].strip().startswith(marker):
            return index
    return len(lines) - 1


def _item_end(lines: Sequence[str], start: int, indent: int) -> int:
    """The last line of the list item starting at `start`: its continuation lines, nested
    items and indented code, up to a blank line followed by something not indented deeper."""
    end = start
    index = start + 1
    in_fence = False
    while index < len(lines):
        line = lines[index]
        if in_fence:
            end = index
            if _FENCE.match(line):
                in_fence = False
            index += 1
            continue
        if not line.strip():
            nxt = next((candidate for candidate in lines[index + 1 :] if candidate.strip()), None)
            if nxt is None or _indent(nxt) <= indent:
                break
            index += 1
            continue
        lead = _indent(line)
        if lead <= indent and (_ITEM.match(line) or _HEADING.match(line) or line.strip().startswith("|")):
            break
        if lead <= indent and not lines[index - 1].strip():
            break
        if _FENCE.match(line):
            if lead <= indent:
                break
            in_fence = True
        end = index
        index += 1
    return end


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _item_text(lines: Sequence[str]) -> str:
    out: list[str] = []
    in_fence = False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            if line.strip():
                out.append(line.strip())
            continue
        if item := _ITEM.match(line):
            out.append(clean_inline(item.group(3)))
        elif line.strip() and out:
            out[-1] += " " + clean_inline(line)
        elif line.strip():
            out.append(clean_inline(line))
    return "\n".join(out)


def _code_text(lines: Sequence[str]) -> str:
    inner = list(lines[1:-1]) if len(lines) > 1 and _FENCE.match(lines[-1]) else list(lines[1:])
    return "\n".join(line.rstrip() for line in inner).strip("\n")


def _table_text(lines: Sequence[str]) -> str:
    rows: list[str] = []
    for line in lines:
        if _TABLE_SEP.match(line):
            continue
        cells = [clean_inline(cell) for cell in line.strip().strip("|").split("|")]
        rows.append(" — ".join(cell for cell in cells if cell))
    return "\n".join(rows)


_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")


def clean_inline(text: str) -> str:
    """Markdown inline syntax off: links keep their text, no emphasis or backticks."""
    text = _LINK.sub(r"\1", text.strip())
    text = _EMPHASIS.sub(r"\2", text)
    text = text.replace("`", "")
    text = re.sub(r"(?<![\w*])\*(?!\s)([^*]+?)\*(?![\w*])", r"\1", text)
    return " ".join(text.split())


# -- rules ------------------------------------------------------------------------------

_SHORT_ITEM = 110
_GROUP_ITEM = 90
_GROUP_MAX = 700
_CODE_SPLIT = 600
_SECTION_MAX = 450


def split_rules(text: str) -> list[Rule]:
    """The rules of one instruction file, in file order (see module docstring)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks = _blocks(lines)
    rules: list[Rule] = []
    index = 0
    first_section = next((i for i, block in enumerate(blocks) if block.kind == "heading" and i > 0), len(blocks))
    while index < len(blocks):
        block = blocks[index]
        if block.kind == "heading":
            index += 1
            continue
        if _skippable(block, index, first_section, lines):
            index += 1
            continue
        section = _small_section(blocks, index, lines, first_section)
        if section:
            rules.append(_rule(lines, section, "\n".join(part.text for part in section)))
            index += len(section)
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        introduces = block.text.endswith(":") or bool(_POINTS_BELOW.search(block.text))
        if block.kind in ("para", "item") and introduces and following is not None:
            if following.kind == "code" and _adjacent(block, following):
                rules.append(_rule(lines, [block, following], block.text + "\n" + following.text))
                index += 2
                continue
            if (
                block.kind == "para"
                and block.text.endswith(":")
                and following.kind == "item"
                and _adjacent(block, following, gap=2)
            ):
                items = _list_run(blocks, index + 1)
                _lead_in(lines, block, items, rules)
                index += 1 + len(items)
                continue
        if block.kind == "item" and len(run := _list_run(blocks, index)) > 1 and _short_list(run):
            lead = block.headings[-1] if block.headings else ""
            rules.append(_rule(lines, run, f"{lead}:\n" * bool(lead) + "\n".join(item.text for item in run)))
            index += len(run)
            continue
        if block.kind == "code":
            rules += _code_rules(lines, block)
        elif block.kind == "table":
            lead = block.headings[-1] if block.headings else ""
            rules.append(_rule(lines, [block], f"{lead}\n{block.text}".strip()))
        else:
            rules.append(_rule(lines, [block], block.text))
        index += 1
    return [rule for rule in rules if rule.body.strip()]


def _small_section(blocks: Sequence[_Block], start: int, lines: Sequence[str], first_section: int) -> list[_Block]:
    """The blocks from `start` to the next heading when they are several and short together:
    a small section says one thing (a tool and how to run it), so it is one rule."""
    if start > 0 and blocks[start - 1].kind != "heading":
        return []
    run: list[_Block] = []
    for index in range(start, len(blocks)):
        block = blocks[index]
        if block.kind == "heading":
            break
        if block.kind == "table" or _skippable(block, index, first_section, lines):
            return []
        run.append(block)
    if len(run) < 2 or sum(len(block.text) for block in run) > _SECTION_MAX:
        return []
    return run


def _skippable(block: _Block, index: int, first_section: int, lines: Sequence[str]) -> bool:
    text = block.text.strip()
    if block.kind == "code" or block.kind == "table":
        return False
    if text.startswith("@") and " " not in text:  # a CLAUDE.md import line
        return True
    if block.kind == "item" and re.match(r"^\[[ xX]\]\s", text):  # a checkbox of a template (a PR checklist)
        return True
    if block.kind == "para" and _LINK_ONLY.match(text):  # a link on its own: navigation
        return True
    if _BOILERPLATE.match(text):
        return True
    if block.kind == "item" and all(_LINK_ONLY.match(_unbullet(line)) for line in lines[block.start : block.end + 1]):
        return True
    return bool(block.kind == "para" and index < first_section and (len(text.split()) < 6 or _DESCRIPTION.match(text)))


def _unbullet(line: str) -> str:
    item = _ITEM.match(line)
    return item.group(3) if item else line


def _short_list(items: Sequence[_Block]) -> bool:
    """A list of short items under a heading, read as one rule (a stack, a checklist)."""
    return all(len(item.text) <= _GROUP_ITEM for item in items) and sum(len(i.text) for i in items) <= _GROUP_MAX


def _adjacent(first: _Block, second: _Block, gap: int = 3) -> bool:
    return second.start - first.end <= gap


def _list_run(blocks: Sequence[_Block], start: int) -> list[_Block]:
    run = [blocks[start]]
    for block in blocks[start + 1 :]:
        if block.kind != "item" or block.start - run[-1].end > 1:
            break
        run.append(block)
    return run


def _lead_in(lines: Sequence[str], lead: _Block, items: list[_Block], rules: list[Rule]) -> None:
    """A lead-in paragraph and its list: one rule when the items are short, else one per item
    with the lead-in in front."""
    whole = lead.text + "\n" + "\n".join(item.text for item in items)
    if len(whole) <= _GROUP_MAX:
        rules.append(_rule(lines, [lead, *items], whole))
    else:
        short_lead = len(lead.text) <= 120
        if not short_lead:
            rules.append(_rule(lines, [lead], lead.text))
        for item in items:
            rules.append(_rule(lines, [item], f"{lead.text}\n{item.text}" if short_lead else item.text))


def _code_rules(lines: Sequence[str], block: _Block) -> list[Rule]:
    lead = block.headings[-1] if block.headings else ""
    if len(block.text) <= _CODE_SPLIT:
        return [_rule(lines, [block], f"{lead}\n{block.text}".strip())]
    groups: list[tuple[int, int]] = []
    start = None
    for offset in range(block.start + 1, block.end):
        if lines[offset].strip():
            start = offset if start is None else start
        elif start is not None:
            groups.append((start, offset - 1))
            start = None
    if start is not None:
        groups.append((start, block.end - 1 if _FENCE.match(lines[block.end]) else block.end))
    rules: list[Rule] = []
    for first, last in groups:
        text = "\n".join(line.rstrip() for line in lines[first : last + 1])
        part = _Block(kind="code", start=first, end=last, text=text, headings=block.headings)
        body = text if text.lstrip().startswith("#") else f"{lead}\n{text}".strip()
        rules += _chunks(lines, part, body)
    return rules


def _chunks(lines: Sequence[str], block: _Block, body: str) -> list[Rule]:
    if len(body) <= MAX_BODY_CHARS:
        return [_rule(lines, [block], body)]
    out: list[Rule] = []
    size, first = 0, block.start
    for offset in range(block.start, block.end + 1):
        size += len(lines[offset]) + 1
        if size > MAX_BODY_CHARS - 200 or offset == block.end:
            text = "\n".join(line.rstrip() for line in lines[first : offset + 1])
            out.append(Rule(body=text, line_start=first + 1, line_end=offset + 1, headings=block.headings, raw=text))
            first, size = offset + 1, 0
    return out


def _rule(lines: Sequence[str], blocks: Sequence[_Block], body: str) -> Rule:
    start, end = blocks[0].start, blocks[-1].end
    body = body.strip()
    if len(body) > MAX_BODY_CHARS:
        body = trim(body, MAX_BODY_CHARS)
    return Rule(
        body=body,
        line_start=start + 1,
        line_end=end + 1,
        headings=blocks[0].headings,
        raw="\n".join(lines[start : end + 1]),
    )


def trim(text: str, limit: int) -> str:
    """`text` cut to `limit` characters at a sentence (else word) boundary, with `…`."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    stop = max(cut.rfind(". "), cut.rfind(".\n"))
    if stop > limit * 0.6:
        return cut[: stop + 1]
    return cut.rsplit(" ", 1)[0].rstrip(",;:") + "…"


# -- typing and titles -------------------------------------------------------------------

_GENERIC = re.compile(
    r"^(overview|notes?|general|guidelines|rules|important|misc|other|tips|introduction|summary|"
    r"development guidelines|code style|code quality|code conventions|project practices|anti-patterns)$",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(pull requests?|PRs?|commits?|committing|amend|changesets?|reviewers?|reviews?|ask (first|a maintainer|clarifying)|"
    r"unless (explicitly )?asked|gh (issue|pr)|before (writing|making) code|--no-verify|issue number|in the background)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(we use|we decided|we chose|is pinned|pinned to|exclusively|source of truth|instead of|"
    r"is the (current|stable)|end-of-life|removed|by design|is deprecated|replaced by|we moved)\b",
    re.IGNORECASE,
)
_DISCOVERY = re.compile(
    r"\b(is broken|bug|can occur|interferes?|causes?|gotcha|note:|lives? in|lives? at|is configured|"
    r"located at|runs? against|are tested|emits?|is (always )?symlinked|requires? \d|takes? ~|exceeds?|"
    r"can be very large|defaults? to)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(never|always|do not|don't|do|use|prefer|avoid|only|run|add|keep|make|write|put|pass|wrap|create|"
    r"read|check|ensure|include|name|start|follow|call|import|edit|mock|test|format|lint|install|"
    r"must|should|forbidden|important|no |all )",
    re.IGNORECASE,
)


def rule_type(body: str, headings: Sequence[str] = ()) -> str:
    """`convention`, `decision`, `preference` or `discovery`, from the rule's words alone."""
    first = body.split("\n", 1)[0]
    context = " ".join(headings[-2:]).lower()
    if _PREFERENCE.search(body) or "pr body" in context or "working on issues" in context:
        return "preference"
    if _DECISION.search(first):
        return "decision"
    if _DISCOVERY.search(first) and not _IMPERATIVE.match(first):
        return "discovery"
    if _IMPERATIVE.match(first) or re.search(r"\b(must|never|always|should|do not|don't)\b", first, re.IGNORECASE):
        return "convention"
    if any(word in context for word in ("architecture", "structure", "overview", "stack", "packages", "apps")):
        return "discovery"
    return "convention"


def rule_title(body: str, headings: Sequence[str] = ()) -> str:
    """A short title that states the rule: its first sentence (a lead-in's topic with its first
    item when it is only a lead-in), Markdown and checkboxes off, at most `MAX_TITLE` characters
    cut at a clause (else a word) boundary. The section heading is context, not the title: it
    is put in front only when the sentence alone is too short to say anything."""
    first = body.split("\n", 1)[0].strip()
    topic = clean_inline(headings[-1]) if headings else ""
    if (first.endswith(":") or first.lower() == topic.lower()) and "\n" in body:
        second = body.split("\n", 2)[1].strip()
        lead = first.rstrip(":")
        first = f"{lead}: {second}" if len(lead) < 50 else lead
    sentence = _first_sentence(first).rstrip(".:;, ")
    sentence = re.sub(r"^\[[ xX]\]\s*", "", sentence.lstrip("#-*> ").strip())
    sentence = clean_inline(sentence).strip("_* ")
    if topic and len(sentence) < 20 and topic.lower() != sentence.lower() and topic.lower() not in sentence.lower():
        sentence = f"{topic}: {sentence}" if sentence else topic
    if len(sentence) > MAX_TITLE:
        cut = sentence[: MAX_TITLE - 1]
        clause = max(cut.rfind(sep) for sep in (", ", "; ", " — ", " - ", " (", ": "))
        cut = cut[:clause] if clause >= 40 else cut.rsplit(" ", 1)[0]
        sentence = cut.rstrip(",;:—-–( ") + "…"
    return sentence or topic or "Rule"


def _first_sentence(text: str) -> str:
    """Up to the first sentence end that is not an abbreviation's full stop (e.g., i.e., etc.)."""
    for match in re.finditer(r"(?<=[.!?])\s+", text):
        if not re.search(r"\b(e\.g|i\.e|etc|vs|cf|approx|incl|resp)\.$", text[: match.start()], re.IGNORECASE):
            return text[: match.start()]
    return text


def front_matter(lines: list[str], *, within: int = 40) -> tuple[dict[str, str], int]:
    """A `---` front-matter block at the top of a Markdown file (MADR ADRs, Claude Code memory
    files): its `key: value` lines (keys lower-cased, values unquoted) and the index of the first
    line after it; `({}, 0)` when the file has none within `within` lines."""
    front: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        for index in range(1, min(len(lines), within)):
            if lines[index].strip() == "---":
                for entry in lines[1:index]:
                    key, _, value = entry.partition(":")
                    front[key.strip().lower()] = value.strip().strip("\"'")
                return front, index + 1
    return front, 0
