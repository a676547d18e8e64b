"""Architecture decision records (Nygard and MADR) → one `decision` each, with their links.

Read from a numbered file (`0045-title.md`, `ADR019-title.md`): the title is the first heading
without its number; the date comes from a `Date:` line or the MADR front matter `date:`; the
status from a `## Status` section, a `Status:` line or front matter `status:`. The body keeps the
context and the decision (the decision gets the room when both do not fit the record limit).

"Superseded by ADR019" / `status: superseded by ADR-NNNN` name the successor by number; the
number is resolved among the folder's ADRs (when two files share a number, the one whose title
shares most words with the link text). Rejected and deprecated ADRs are not learned as
current: deprecated ones are retired at once, rejected ones are skipped. Templates and index
files are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentctx_store._frozen import frozen
from agentctx_store.learn.rules import clean_inline, front_matter, trim
from agentctx_store.records import MAX_BODY_CHARS

ADR_FOLDERS = (
    "docs/adr",
    "docs/adrs",
    "docs/decisions",
    "docs/architecture/decisions",
    "docs/architecture-decisions",
    "architecture-decision-records",
    "architecture-decision-record",
    "adr",
    "adrs",
    "ADR",
    "decisions",
)
_NUMBERED = re.compile(r"^(?:adr[-_ ]?)?(\d{1,5})[-_ .]", re.IGNORECASE)
_LINK_NUMBER = re.compile(r"\bADR?[-_ ]?0*(\d{1,5})\b|\b0*(\d{2,5})-[a-z]", re.IGNORECASE)
_TITLE_NUMBER = re.compile(r"^(?:ADR|AD|Decision|RFC)?[-_ ]?\d{1,5}\s*[:.\-–—]?\s*", re.IGNORECASE)


@frozen
class Adr:
    path: Path
    number: int
    title: str
    body: str
    status: str
    valid_from: str | None
    superseded_by_text: str | None  # the status text naming the successor
    raw: str
    line_end: int

    @property
    def state(self) -> str:
        """`current`, `superseded`, `rejected` or `deprecated`."""
        status = self.status.lower()
        if self.superseded_by_text is not None:
            return "superseded"
        if "rejected" in status and "accepted or rejected" not in status:
            return "rejected"
        if "deprecated" in status:
            return "deprecated"
        return "current"


def is_adr_file(path: Path) -> bool:
    """A numbered Markdown file that is not a template or an index."""
    name = path.name.lower()
    if path.suffix.lower() not in (".md", ".markdown") or re.match(r"^(adr-?)?(x+|n+)[-_.]|.*\btemplate\.md$", name):
        return False
    if name in ("readme.md", "index.md", "toc.md", "summary.md"):
        return False
    return _NUMBERED.match(path.name) is not None


def parse_adr(path: Path, text: str) -> Adr | None:
    """One ADR file, or None when it has no heading (not an ADR)."""
    lines = text.replace("\r\n", "\n").split("\n")
    front, start = front_matter(lines, within=40)
    title = ""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in lines[start:]:
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        if heading and not title and len(heading.group(1)) == 1:
            title = clean_inline(heading.group(2))
            continue
        if heading and len(heading.group(1)) == 2:
            sections.append((clean_inline(heading.group(2)).lower(), []))
            continue
        sections[-1][1].append(line)
    if not title:
        return None
    match = _NUMBERED.match(path.name)
    number = int(match.group(1)) if match else 0
    title = _TITLE_NUMBER.sub("", title).strip() or title
    if "record title" in title.lower() or title.startswith("["):  # the template's heading left in
        title = _NUMBERED.sub("", path.stem).replace("-", " ").replace("_", " ").strip().capitalize() or title
    status = front.get("status", "")
    preamble = "\n".join(sections[0][1])
    for name, body in sections:
        if name.startswith("status") and not status:
            # the first line only: a template's comment below it lists every status word
            status = next((clean_inline(line.strip().lstrip("> ")) for line in body if line.strip().strip(">")), "")
    if not status:
        found = re.search(r"^\s*\*{0,2}Status\*{0,2}:\s*(.+)$", preamble, re.MULTILINE | re.IGNORECASE)
        status = clean_inline(found.group(1)) if found else ""
    date = front.get("date") or _date_line(preamble) or _date_line("\n".join(lines[start : start + 30]))
    superseded = re.search(r"superseded by\s*(.*)", status, re.IGNORECASE)
    return Adr(
        path=path,
        number=number,
        title=title[:120],
        body=_body(sections),
        status=status.strip(),
        valid_from=date,
        superseded_by_text=superseded.group(1).strip() if superseded else None,
        raw=text,
        line_end=len(lines),
    )


def _date_line(text: str) -> str | None:
    found = re.search(r"^\s*\*{0,2}Date\*{0,2}:?\*{0,2}\s*(\d{4}-\d{2}-\d{2})", text, re.MULTILINE | re.IGNORECASE)
    return found.group(1) if found else None


_CONTEXT = ("context", "problem", "background")
_DECISION = ("decision", "outcome")
_SKIP = ("status", "date", "deciders", "more information", "links", "references", "related")


def _body(sections: list[tuple[str, list[str]]]) -> str:
    """Context and decision text (then consequences), trimmed to the record limit with the
    decision kept whole when it fits."""
    parts: dict[str, list[str]] = {"context": [], "decision": [], "other": []}
    for name, lines in sections:
        if any(name.startswith(skip) for skip in _SKIP):
            continue
        text = _prose(lines)
        if not text:
            continue
        if any(word in name for word in _DECISION):
            parts["decision"].append(text)
        elif any(word in name for word in _CONTEXT) or not name:
            parts["context"].append(text)
        elif "consequence" in name or "option" in name or "driver" in name:
            parts["other"].append(text)
    context = " ".join(parts["context"])
    decision = " ".join(parts["decision"])
    other = " ".join(parts["other"])
    if not decision and not context:
        return trim(other, MAX_BODY_CHARS) if other else ""
    decision_text = f"Decision: {decision}" if decision else ""
    room = MAX_BODY_CHARS - len(decision_text) - 2
    if decision_text and room < 300:
        return trim(decision_text, MAX_BODY_CHARS)
    context_text = trim(f"Context: {context}", room) if context else ""
    body = "\n\n".join(part for part in (context_text, decision_text) if part)
    if other and len(body) + 200 < MAX_BODY_CHARS:
        body += "\n\n" + trim(f"Consequences: {other}", MAX_BODY_CHARS - len(body) - 2)
    return body.strip()


def _prose(lines: list[str]) -> str:
    """Section text as one paragraph: markdown off, code blocks and images dropped, note
    callouts and status-like lines skipped."""
    out: list[str] = []
    in_fence = False
    for line in lines:
        if line.strip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not line.strip() or line.strip().startswith(("![", "<!--", "> [!")) or _date_line(line):
            continue
        stripped = re.sub(r"^\s*([-*+]|\d+[.)])\s+", "", line.strip()).lstrip("> ").lstrip("#").strip()
        stripped = re.sub(r"https?://\S+", "", clean_inline(stripped)).strip()
        if stripped:
            out.append(stripped if stripped.endswith((".", ":", "?", "!")) else stripped + ".")
    return " ".join(out)


def resolve_links(adrs: list[Adr]) -> dict[Path, Path]:
    """Old ADR path → the path of the ADR that supersedes it, for each link the texts state
    that can be resolved in this folder."""
    by_number: dict[int, list[Adr]] = {}
    for adr in adrs:
        by_number.setdefault(adr.number, []).append(adr)
    links: dict[Path, Path] = {}
    for adr in adrs:
        if adr.superseded_by_text is None:
            continue
        found = _LINK_NUMBER.search(adr.superseded_by_text)
        if found is None:
            continue
        number = int(found.group(1) or found.group(2))
        candidates = [c for c in by_number.get(number, []) if c.path != adr.path]
        if not candidates:
            continue
        words = set(re.findall(r"[a-z]{3,}", adr.superseded_by_text.lower()))
        best = max(
            candidates, key=lambda c: (len(words & set(re.findall(r"[a-z]{3,}", c.title.lower()))), -len(str(c.path)))
        )
        if len(candidates) > 1 and not words & set(re.findall(r"[a-z]{3,}", best.title.lower())):
            best = max(candidates, key=lambda c: _mentions(c, adr))
        links[adr.path] = best.path
    return links


def _mentions(candidate: Adr, old: Adr) -> int:
    """How strongly a candidate successor's text refers to the old ADR (its number, its title words)."""
    text = candidate.raw.lower()
    score = 2 * len(re.findall(rf"\badr-?0*{old.number}\b", text))
    score += sum(1 for word in set(re.findall(r"[a-z]{5,}", old.title.lower())) if word in text)
    return score
