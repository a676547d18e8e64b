"""Architecture decision records (Nygard, adr-tools, MADR, log4brains…) → one `decision` each,
with their links.

The title is the first heading without its number (or front matter `title:`); the date comes
from a `Date:` line or front matter `date:`; the status from front matter `status:`, a Status
section (any heading level), a `Status:` line or a `| Status | … |` row. The body keeps the
context and the decision (the decision gets the room when both do not fit the record limit).

Links between ADRs are read in both directions and anywhere in the text (front matter, the
status, a note in the body): the old one "superseded by" / "replaced by" / "deprecated in favour
of" the new one, the new one "supersedes" / "replaces" / "updates" the old. The other ADR is
named by relative link, URL, file name, number (with or without prefix and zero padding) or
title (`resolve_links`). "Amended by", "amends" and partial supersession ("partly superseded
by", "in part supersedes", "supersedes some aspects of") leave both current, linked. A
reference that names no ADR of the set is kept as a note in the record, never guessed.
Rejected ADRs are skipped and deprecated ones retired: neither is ever current. Templates and
index files are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentctx_store._frozen import frozen
from agentctx_store.learn.rules import clean_inline, front_matter, trim
from agentctx_store.records import MAX_BODY_CHARS

# `0045-title.md`, `ADR019-title.md`, `adr-001-title.md`, `ADR-7.md`, and with a project or
# area named around the ADR word (`ACME-ADR-0003-title.md`, `ACME-ADR-Core-12-title.md`); a
# dated name (`20200924-title.md`, `2021-04-23-title.md`) is a record without a number
_NUMBERED = re.compile(
    r"^(?:(?:[a-z]{2,12}[-_ ]){0,2}adr[-_ ]?(?:[a-z]{2,12}[-_ ])?)?(\d{1,5})(?:[-_ .]|$)", re.IGNORECASE
)
_DATED = re.compile(r"^(?:adr[-_ ]?)?(\d{4}-?\d{2}-?\d{2})[-_ .]", re.IGNORECASE)
_TITLE_NUMBER = re.compile(r"^(?:ADR|AD|Decision|RFC)?[-_ #]?\d{1,5}\s*[:.\-–—]?\s*", re.IGNORECASE)
_TEMPLATE_NAME = re.compile(r"^(adr-?)?(x+|n+)[-_.]|(^|[-_.])template\.(md|markdown)$|^template|^_", re.IGNORECASE)
_INDEX_NAMES = ("readme.md", "index.md", "toc.md", "summary.md", "_sidebar.md", "changelog.md")

# How one ADR names another. The old side: "superseded by X", "replaced by X", "deprecated in
# favour of X", "⌛️ Superseded [X](…)"; the new side: "supersedes X", "replaces X", "updates X";
# amendments ("amended by X", "amends X") and partial supersession ("partly superseded by X",
# "in part supersedes X", "supersedes some aspects of X") leave both current, linked.
_RELATION = re.compile(
    r"(?P<old>\b(?:superseded|superseeded|replaced|obsoleted)(?:\s+by\b|\s*:|(?=\s*(?:\[|#?\d|ADR\b)))"
    r"|\bdeprecated?\s+in\s+favou?r\s+of\b)"
    r"|(?P<new>\b(?:supersedes|supersede|superseeds|replaces|obsoletes|undo(?:es)?|reverts|reverses)\b:?)"
    r"|(?P<amended>\b(?:amended|updated|extended)\s+by\b|\bamendment\s+by\b)"
    r"|(?P<amends>\b(?:amends|updates|extends)\b:?|\bamendment\s+(?:of|to)\b)",
    re.IGNORECASE,
)
_PARTIAL = re.compile(
    r"\b(?:part(?:ly|ially)|in\s+part|parts\s+of|some\s+(?:aspects|parts)\s+of|portions?\s+of)\b", re.IGNORECASE
)
# A scope after the other ADR ("superseded by ADR-23 concerning the ACRs", "supersedes ADR 4
# with respect to caching"): only that part is replaced, so it is an amendment
_SCOPED = re.compile(
    r"\b(?:concerning|regarding|with\s+(?:respect|regards?)\s+to|in\s+respect\s+of|as\s+(?:to|regards)|"
    r"insofar\s+as|in\s+so\s+far\s+as|only\s+(?:for|in|as\s+to))\b",
    re.IGNORECASE,
)
_LINK = re.compile(r"!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_NUMBER = re.compile(r"\b(?:ADR|AD|RFC|decision(?:\s+record)?|record)[\s#:_-]*0*(\d{1,5})\b", re.IGNORECASE)
_REF_FILE = re.compile(r"(?:[\w./-]*/)?([\w.-]+\.(?:md|markdown))\b", re.IGNORECASE)
_LEAD_NUMBER = re.compile(r"^\W*#?0*(\d{1,5})\b")
_STATUS_WORDS = ("proposed", "accepted", "rejected", "deprecated", "superseded", "draft", "approved")


@frozen
class Relation:
    """One statement of an ADR about another: `kind` is `superseded_by` (this one is replaced),
    `supersedes`, `amended_by` or `amends`; `text` is what names the other ADR."""

    kind: str
    text: str
    stated: str = "status"  # `status` (front matter or status) or `body` (a note in the text)


@frozen
class Adr:
    path: Path
    number: int | None
    title: str
    body: str
    status: str
    valid_from: str | None
    relations: tuple[Relation, ...]
    raw: str
    line_end: int

    @property
    def state(self) -> str:
        """What the ADR says of itself: `current`, `superseded`, `rejected` or `deprecated`
        (another ADR's "supersedes" can make a current one superseded: `resolve_links`)."""
        status = self.status.lower()
        if any(relation.kind == "superseded_by" and relation.stated == "status" for relation in self.relations):
            return "superseded"
        if re.search(r"\b(rejected|declined|withdrawn|abandoned)\b", status):
            return "rejected"
        if re.search(r"\bsupersee?ded\b", status) and not _PARTIAL.search(status):
            return "superseded"
        if re.search(r"\b(deprecated|obsolete|retired|reverted|no-?longer-?relevant|replaced)\b", status):
            return "deprecated"
        return "current"


@frozen
class Links:
    """What the ADRs of a run say of each other, resolved to files: `successor` (old path →
    the path of the ADR that replaces it), `amended` (older, newer pairs: both stay current),
    and `notes` (path → the references that name no ADR of the set, kept as text)."""

    successor: dict[Path, Path]
    amended: list[tuple[Path, Path]]
    notes: dict[Path, list[str]]


def is_adr_name(path: Path) -> bool:
    """A numbered or dated Markdown file name that is not a template or an index."""
    name = path.name.lower()
    if path.suffix.lower() not in (".md", ".markdown") or _TEMPLATE_NAME.search(name) or name in _INDEX_NAMES:
        return False
    return _NUMBERED.match(path.name) is not None or _DATED.match(path.name) is not None


_SECTION_WORDS = re.compile(
    r"^#{1,6}\s*(?:\d+[.)]?\s*)?(status|context|decision|consequences|considered options|decision outcome|"
    r"decision drivers|context and problem statement|problem statement|pros and cons|rationale|"
    r"alternatives(?: considered)?|options considered|implications)\b",
    re.IGNORECASE | re.MULTILINE,
)
_STATUS_LINE = re.compile(r"^\s*(?:[-*]\s*)?(?:\|\s*)?\**status\**\s*(?::|\|)", re.IGNORECASE | re.MULTILINE)


_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NOT_SETEXT_TEXT = re.compile(r"^\s*(?:#|>|\||[-*+]\s|\d+[.)]\s|```|~~~|<)")


def atx_headings(lines: list[str], start: int = 0) -> list[str]:
    """The lines with every setext heading (a text line underlined with `===` or `---`) written
    as an ATX one (`# text`, `## text`), from `start` (after any front matter) and outside
    fenced code; a `---` after a blank line, a list item or a table row stays what it is."""
    out = list(lines)
    in_fence = False
    for index in range(start, len(out)):
        line = out[index]
        if line.strip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        underline = None if in_fence or index <= start else _SETEXT_UNDERLINE.match(line)
        text = out[index - 1] if underline else ""
        if underline and text.strip() and not _NOT_SETEXT_TEXT.match(text) and not _SETEXT_UNDERLINE.match(text):
            out[index - 1] = ("# " if underline.group(1).startswith("=") else "## ") + text.strip()
            out[index] = ""
    return out


def reads_as_adr(path: Path, head: str, *, decisions_folder: bool = False) -> str | None:
    """Why the start of a Markdown file reads as a decision record, or None: decision-record
    sections (Status, Context, Decision, Consequences; MADR's Considered Options and Decision
    Outcome), a status line or front matter, a numbered or dated name (enough alone, with a
    heading, in a folder named for decisions: `adr`, `decisions`…)."""
    name = path.name.lower()
    if path.suffix.lower() not in (".md", ".markdown") or name in _INDEX_NAMES or _TEMPLATE_NAME.search(name):
        return None
    head_lines = head.replace("\r\n", "\n").split("\n")
    head = "\n".join(atx_headings(head_lines, front_matter(head_lines, within=40)[1]))
    if re.search(r"^#+\s*[\[{]\s*(?:short )?title", head, re.IGNORECASE | re.MULTILINE):  # a template's heading
        return None
    sections = {match.group(1).lower() for match in _SECTION_WORDS.finditer(head)}
    status = _STATUS_LINE.search(head) is not None or re.search(r"^status:", head, re.IGNORECASE | re.MULTILINE)
    named = _NUMBERED.match(path.name) is not None or _DATED.match(path.name) is not None
    if len(sections) >= 2 and (named or status or "decision" in " ".join(sections)):
        return "decision-record sections (" + ", ".join(sorted(sections)) + ")"
    if named and (sections or status):
        return "a numbered or dated name with " + ("a status" if status else "a " + next(iter(sections)) + " section")
    if named and decisions_folder and re.search(r"^#\s+\S", head, re.MULTILINE):
        return "a numbered or dated file in a folder of decisions"
    return None


def parse_adr(path: Path, text: str) -> Adr | None:
    """One ADR file, or None when it has no heading (not an ADR)."""
    lines = text.replace("\r\n", "\n").split("\n")
    front, start = front_matter(lines, within=40)
    lines = atx_headings(lines, start)
    title = front.get("title", "")
    sections: list[tuple[str, list[str]]] = [("", [])]
    in_fence = False
    for line in lines[start:]:
        if line.strip().startswith(("```", "~~~")):
            in_fence = not in_fence
        heading = None if in_fence else re.match(r"^(#{1,6})\s+(.*)$", line)
        if heading and not title and len(heading.group(1)) == 1:
            title = clean_inline(heading.group(2))
            continue
        if heading and not sections[1:] and not title:
            title = clean_inline(heading.group(2))
            continue
        if heading and (len(heading.group(1)) <= 2 or _SECTION_WORDS.match(line)):
            sections.append((re.sub(r"^\d+[.)]?\s*", "", clean_inline(heading.group(2))).lower(), []))
            continue
        sections[-1][1].append(line)
    if not title:
        return None
    numbered = _NUMBERED.match(path.name)
    number = int(numbered.group(1)) if numbered else None
    title = _TITLE_NUMBER.sub("", title).strip() or title
    if "record title" in title.lower() or title.startswith("["):  # the template's heading left in
        stem = _DATED.sub("", _NUMBERED.sub("", path.stem))
        title = stem.replace("-", " ").replace("_", " ").strip().capitalize() or title
    status_text = _status_text(front, sections)
    preamble = "\n".join(sections[0][1])
    date = front.get("date") or _date_line(preamble) or _date_line("\n".join(lines[start : start + 30]))
    return Adr(
        path=path,
        number=number,
        title=title[:120],
        body=_body(sections),
        status=_status_word(status_text),
        valid_from=date,
        relations=_relations(front, status_text, [("status", [title]), *sections]),
        raw=text,
        line_end=len(lines),
    )


def _uncomment(text: str) -> str:
    return re.sub(r"<!--.*?(-->|$)", "", text, flags=re.DOTALL)


def _template_line(line: str) -> bool:
    """A line that lists the template's choices (`{proposed | accepted | …}`, `[a | b]`)."""
    lower = line.lower()
    words = sum(1 for word in _STATUS_WORDS if word in lower)
    return words >= 3 or words >= 2 and bool(re.search(r"[|{]|\bor\b", lower))


def _status_text(front: dict[str, str], sections: list[tuple[str, list[str]]]) -> str:
    """The ADR's status as written: front matter `status:`, a Status section (its first lines),
    a `Status:` line or a `| Status | … |` table row near the top."""
    if front.get("status"):
        return front["status"]
    for line in _uncomment("\n".join(sections[0][1][:40])).split("\n"):
        if found := _status_in_line(line):
            return found
    for name, body in sections:
        if name.startswith("status"):
            kept: list[str] = []
            for line in _uncomment("\n".join(body)).split("\n"):
                stripped = clean_inline(line.strip().lstrip(">").strip())
                if not stripped or _template_line(stripped) or _date_line(line):
                    continue
                if len(stripped) > 300 and kept:  # prose under the status: the status was above
                    break
                kept.append(stripped)
                if len(kept) >= 4:
                    break
            if kept:
                return "\n".join(kept)
    for _name, body in sections[1:3]:
        for line in _uncomment("\n".join(body[:30])).split("\n"):
            if found := _status_in_line(line):
                return found
    return ""


def _status_in_line(line: str) -> str | None:
    """The status of a `Status: …` line or a `| Status | … |` table row."""
    found = re.match(r"^\s*(?:[-*]\s*)?\**status\**\s*:\**\s*(.+)$", line, re.IGNORECASE)
    table = re.match(r"^\s*\|\s*\**status\**\s*\|\s*(.+?)\s*\|", line, re.IGNORECASE)
    chosen = table or found
    if chosen and not _template_line(chosen.group(1)):
        return clean_inline(chosen.group(1))
    return None


def _status_word(status: str) -> str:
    first = status.split("\n", 1)[0].strip()
    return "accepted" if _template_line(first) else first


def _relations(front: dict[str, str], status: str, sections: list[tuple[str, list[str]]]) -> tuple[Relation, ...]:
    """Every statement about another ADR: front matter keys, the status, and any line of the
    text (code blocks and comments left out). A partial supersession is an amendment."""
    found: list[Relation] = []
    keys = {
        "superseded_by": "superseded_by", "superseded-by": "superseded_by", "supersededby": "superseded_by",
        "supersedes": "supersedes", "replaces": "supersedes", "replaced_by": "superseded_by",
        "replaced-by": "superseded_by", "amends": "amends", "amended_by": "amended_by", "amended-by": "amended_by",
    }  # fmt: skip
    for key, kind in keys.items():
        if front.get(key):
            found.append(Relation(kind=kind, text=front[key]))
    partial_status = bool(_PARTIAL.search(status))
    status_lines = [line for line in status.split("\n") if line.strip()]
    lines = [(line, "status") for line in status_lines]
    in_fence = False
    for name, body in sections:
        text = "\n".join(body)
        if not _RELATION.search(text):
            continue
        for line in _uncomment(text).split("\n"):
            if line.lstrip().startswith(("```", "~~~")):
                in_fence = not in_fence
                continue
            if in_fence or not _RELATION.search(line):
                continue
            if clean_inline(line.strip().lstrip(">").strip()) not in status_lines:
                lines.append((line, "status" if name.startswith("status") or not name else "body"))
    for line, stated in lines:
        if _template_line(line) or not _RELATION.search(line):
            continue
        line = re.sub(r"`([^`]*)`", _code_span, line)
        matches = list(_RELATION.finditer(line))
        for index, match in enumerate(matches):
            end = matches[index + 1].start() if index + 1 < len(matches) else len(line)
            sentence_end = re.search(r"(?<![A-Z0-9])[.;](?:\s|$)(?![^\[]*\])(?![^(]*\))", line[match.end() : end])
            target = line[match.end() : match.end() + sentence_end.start()] if sentence_end else line[match.end() : end]
            if not target.strip() or not _names_an_adr(target, explicit=stated == "body"):
                continue
            kind = next(group for group, value in match.groupdict().items() if value)
            if stated == "body" and re.match(r"(?i)updat|extend|undo|revert|reverse", match.group(0)):
                continue  # in prose these are too often about something else ("2. Fully undo ADR 109")
            before = line[max(0, match.start() - 60) : match.start()]
            partial = (
                _PARTIAL.search(before) is not None
                or _PARTIAL.match(target.strip()) is not None
                or _SCOPED.search(target) is not None
                or (partial_status and kind in ("old", "new"))
            )
            relation = {"old": "superseded_by", "new": "supersedes", "amended": "amended_by", "amends": "amends"}[kind]
            if partial:
                relation = {"superseded_by": "amended_by", "supersedes": "amends"}.get(relation, relation)
            entry = Relation(kind=relation, text=target.strip(), stated=stated)
            if entry not in found:
                found.append(entry)
    return tuple(found)


def _code_span(span: re.Match[str]) -> str:
    """An inline code span in a relation line: dropped (`replaces` a config key), unless it is
    only a reference to a record (`ADR-0019`, `0004-use-x.md`), which is kept as text."""
    inner = span.group(1).strip()
    return inner if _REF_NUMBER.fullmatch(inner) or _REF_FILE.fullmatch(inner) else ""


def _names_an_adr(text: str, *, explicit: bool = False) -> bool:
    """Whether the words after "superseded by" name a record: a link, an ADR number, a file
    name, a leading number, or (in a status, not in the body's prose) a short title."""
    if _REF_NUMBER.search(text) or _REF_FILE.search(text):
        return True
    if any(_record_link(label, target) for label, target in _LINK.findall(text)):
        return True
    if explicit:
        return False
    if _LEAD_NUMBER.match(text):
        return True
    words = re.findall(r"[A-Za-z]{2,}", text)
    return 1 <= len(words) <= 12 and bool(re.match(r"^\W*[\"'“]?[A-Z]", text.strip()))


def _date_line(text: str) -> str | None:
    found = re.search(r"^\s*\*{0,2}Date\*{0,2}:?\*{0,2}\s*(\d{4}-\d{2}-\d{2})", text, re.MULTILINE | re.IGNORECASE)
    return found.group(1) if found else None


_CONTEXT = ("context", "problem", "background")
_DECISION = ("decision", "outcome")
_SKIP = ("status", "date", "deciders", "more information", "links", "references", "related")


def _body(sections: list[tuple[str, list[str]]]) -> str:
    """Context and decision text (then consequences), trimmed to the record limit with the
    decision kept whole when it fits."""
    parts: dict[str, list[str]] = {"context": [], "decision": [], "other": [], "rest": []}
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
        else:  # "Proposal", "Discussion", "What's proposed"…: the text when nothing else is
            parts["rest"].append(text)
    if not parts["context"] and not parts["decision"]:
        parts["context"] = parts["rest"]
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


def _record_link(label: str, target: str) -> bool:
    """A Markdown link that can name a decision record: to a Markdown or HTML page, or with an
    ADR number or a leading number as its text."""
    page = target.split("#", 1)[0].split("?", 1)[0].rstrip("/").lower()
    if page.endswith((".md", ".markdown", ".html")) or _REF_NUMBER.search(label) is not None:
        return True
    local = re.match(r"^[a-z]+:", page) is None
    return local and (_NUMBERED.match(page.rsplit("/", 1)[-1] + "-") is not None or bool(_LEAD_NUMBER.match(label)))


def _refs(text: str) -> list[tuple[str, str]]:
    """The references in a relation's text, in order: (`path`, link target), (`file`, name),
    (`number`, digits), (`title`, words)."""
    refs: list[tuple[str, str]] = []
    rest = text
    for match in _LINK.finditer(text):
        label, target = match.group(1), match.group(2).split("#", 1)[0].split("?", 1)[0]
        if target.lower().endswith((".md", ".markdown", ".html", "/")) or "/" in target:
            refs.append(("path", target.rstrip("/")))
        number = _REF_NUMBER.search(label) or _LEAD_NUMBER.match(label)
        if number:
            refs.append(("number", number.group(1)))
        elif label.strip():
            refs.append(("title", label))
        rest = rest.replace(match.group(0), " ")
    for match in _REF_FILE.finditer(rest):
        refs.append(("file", match.group(1)))
    rest = _REF_FILE.sub(" ", rest)
    for match in _REF_NUMBER.finditer(rest):
        refs.append(("number", match.group(1)))
    lead = _LEAD_NUMBER.match(rest)
    if lead and not refs:
        refs.append(("number", lead.group(1)))
    if not refs:
        words = re.sub(r"https?://\S+", " ", rest).strip(" \t\"'“”*_:.,()")
        if words:
            refs.append(("title", words))
    return refs


def _normal_title(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", _TITLE_NUMBER.sub("", text.strip()).lower()))


def _stem(name: str) -> str:
    name = name.rsplit("/", 1)[-1]
    for suffix in (".md", ".markdown", ".html"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def resolve_links(adrs: list[Adr]) -> Links:
    """The supersession and amendment links the ADRs state, each resolved to an ADR of the set
    by what names it: a relative link (resolved from the ADR's folder), a URL or file name (its
    name), a number (with or without prefix and zero padding; the ADR's own folder first; when
    two files share a number, the one whose title shares words with the text), or a title.
    A reference that names no ADR of the set is kept as a note, never guessed onto another."""
    by_real = {adr.path.resolve(): adr for adr in adrs}
    by_stem: dict[str, list[Adr]] = {}
    by_number: dict[int, list[Adr]] = {}
    by_title: dict[str, list[Adr]] = {}
    for adr in adrs:
        by_stem.setdefault(_stem(adr.path.name).lower(), []).append(adr)
        if adr.number is not None:
            by_number.setdefault(adr.number, []).append(adr)
        by_title.setdefault(_normal_title(adr.title), []).append(adr)

    def nearest(adr: Adr, candidates: list[Adr], text: str) -> Adr | None:
        candidates = [c for c in candidates if c.path != adr.path]
        if not candidates:
            return None
        same = [c for c in candidates if c.path.parent == adr.path.parent] or candidates
        if len(same) == 1:
            return same[0]
        words = set(re.findall(r"[a-z]{3,}", text.lower()))
        scored = sorted(
            same, key=lambda c: (len(words & set(re.findall(r"[a-z]{3,}", c.title.lower()))), -len(str(c.path)))
        )
        best = scored[-1]
        if not words & set(re.findall(r"[a-z]{3,}", best.title.lower())):
            best = max(same, key=lambda c: _mentions(c, adr))
        return best

    def targets(adr: Adr, text: str) -> list[Adr]:
        """Every ADR the text names (one per reference: a link's path and label name one)."""
        out: list[Adr] = []
        refs = _refs(text)
        for index, (kind, value) in enumerate(refs):
            if kind in ("number", "title") and index and refs[index - 1][0] == "path" and out:
                continue  # the label of a link already resolved by its path
            found: Adr | None = None
            if kind == "path" and not re.match(r"^[a-z]+://", value):
                found = by_real.get((adr.path.parent / value).resolve())
                if found is None:
                    found = nearest(adr, by_stem.get(_stem(value).lower(), []), text)
            elif kind in ("path", "file"):
                found = nearest(adr, by_stem.get(_stem(value).lower(), []), text)
                if found is None and (number := _NUMBERED.match(_stem(value) + "-")):
                    found = nearest(adr, by_number.get(int(number.group(1)), []), text)
            elif kind == "number":
                found = nearest(adr, by_number.get(int(value), []), text)
            else:
                title = _normal_title(value)
                found = nearest(adr, by_title.get(title, []), text) if title else None
                if found is None and len(title.split()) >= 2:
                    found = nearest(
                        adr,
                        [c for key, group in by_title.items() if key and title.startswith(key) for c in group],
                        text,
                    )
            if found is not None and found.path != adr.path and found not in out:
                out.append(found)
        return out

    successor: dict[Path, Path] = {}
    amended: list[tuple[Path, Path]] = []
    notes: dict[Path, list[str]] = {}
    for adr in adrs:
        for relation in adr.relations:
            others = targets(adr, relation.text)
            if not others and relation.stated == "body":
                continue  # prose about something else ("CUID was deprecated in favour of CUID2")
            if not others:
                verb = relation.kind.replace("_", " ")
                note = f"{verb.capitalize()} {clean_inline(relation.text)} (not among the learned ADRs)"
                if note not in notes.setdefault(adr.path, []):
                    notes[adr.path].append(note)
                continue
            for other in others:
                if relation.kind == "superseded_by":
                    successor.setdefault(adr.path, other.path)
                elif relation.kind == "supersedes":
                    successor.setdefault(other.path, adr.path)
                else:
                    pair = (adr.path, other.path) if relation.kind == "amended_by" else (other.path, adr.path)
                    if pair not in amended:
                        amended.append(pair)
    # a cycle (each says it replaces the other) is no supersession: keep the newer statement
    for old, new in list(successor.items()):
        if successor.get(new) == old:
            successor.pop(old if str(old) > str(new) else new, None)
    return Links(successor=successor, amended=amended, notes=notes)


def _mentions(candidate: Adr, old: Adr) -> int:
    """How strongly a candidate successor's text refers to the old ADR (its number, its title words)."""
    text = candidate.raw.lower()
    score = 2 * len(re.findall(rf"\badr-?0*{old.number}\b", text)) if old.number is not None else 0
    score += sum(1 for word in set(re.findall(r"[a-z]{5,}", old.title.lower())) if word in text)
    return score
