"""The part of a long record that answers a prompt: whole sentences, list items and code blocks.

A record body is cut into pieces that are never split: a fenced code block, a heading, a list
item, or one sentence of prose (a wrapped line does not end a sentence). `excerpt` keeps, in
their order in the body, the decision section of an ADR-shaped record (a piece starting with
"Decision" or "Chosen option", up to the next section label) and the pieces that share the most
prompt words with the prompt, weighted by how rare each word is within the record; `…` stands
where text was left out. The why and the figures are in docs/retrieval.md.

Standard library only, no `re`: this runs on the prompt hook's path (tests/test_passages.py).
"""

from __future__ import annotations

import math

from agentctx_store.retrieval import query_terms, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

GAP = "…"
# Of an excerpt's characters, at most this share goes to the decision section before the
# pieces matching the prompt are considered (its first piece is kept whenever it fits at all).
DECISION_SHARE = 0.6
# A piece joins the excerpt only when its match with the prompt is at least this share of the
# best piece's: a sentence sharing one common word with the prompt is not a passage that answers.
PIECE_RATIO = 0.5
_SENTENCE_ENDS = ".!?"
_CLOSERS = "\"')]*_`»”’"
_LIST_MARKERS = ("- ", "* ", "+ ", "• ")
# Section names of the common ADR templates (Nygard, MADR, Y-statements): where a decision
# section ends. A heading ends it too.
_SECTION_LABELS = (
    "context",
    "problem",
    "status",
    "consequence",
    "considered option",
    "options",
    "option ",
    "decision driver",
    "pros and cons",
    "alternatives",
    "more information",
    "links",
    "references",
    "validation",
    "confirmation",
    "implications",
    "drawbacks",
    "assumptions",
    "notes",
)
_DECISION_LABELS = ("decision", "chosen option")
# Without a labelled section, the first sentence that states the choice.
_DECISION_OPENINGS = ("we will", "we decided", "we have decided", "we chose", "we'll")

# Plural "-es" is its own ending only after a hissing sound ("classes", "indexes", "matches");
# elsewhere the "e" is the word's ("releases", "files"), and a final "e" is dropped anyway.
_SIBILANTS = ("ss", "x", "z", "ch", "sh")
# Endings that make a word of another kind, and what is left of them ("migration" → "migrat",
# as "migrate" becomes once its "e" is dropped).
_DERIVED = (("ation", "at"), ("ment", ""), ("er", ""), ("ly", ""))


def stem(word: str) -> str:
    """A light stem, so the forms of a word meet: "deploys", "deployed", "deploying" and "deploy";
    "policies" and "policy"; "indexes" and "index"; "ingresses" and "ingress"; "releases",
    "released" and "release". FTS5's porter stemmer does this for search; this only has to agree
    on the common endings. Each step leaves at least three letters (so "uses" meets "use" but
    "used" does not), and a word ending in "ss" or "us" is not a plural. Anything but letters
    ("utf-8", "py311") is left as it is."""
    if not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("es") and word[:-2].endswith(_SIBILANTS) and len(word) > 4:
        word = word[:-2]
    elif word.endswith("s") and len(word) > 3 and not word.endswith(("ss", "us")):
        word = word[:-1]
    if word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ed") and len(word) > 4 and not word.endswith("eed"):
        word = word[:-2]
    elif word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    for suffix, rest in _DERIVED:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)] + rest
            break
    if word.endswith("e") and len(word) > 3 and not word.endswith("ee"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousz":
        word = word[:-1]  # "stopped" → "stopp" → "stop"
    return word


def pieces(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of `text` that are never split, in order (whitespace between them is
    in none): fenced code blocks, headings, list items, table rows and sentences."""
    return [(start, end) for start, end, _ in _parse(text)]


def _parse(text: str) -> list[tuple[int, int, int]]:
    """`pieces`, each with the number of the paragraph it is in (a blank line, a code block, a
    list item, a heading or a line opening with a label such as "Decision:" starts a new one)."""
    spans: list[tuple[int, int, int]] = []
    prose = -1  # start of the prose run being read, or -1
    fence = ""  # the fence of the open code block, or ""
    code = 0
    offset = 0
    paragraph = 0
    previous_ends = True  # the last prose line ended a sentence (or there was none)
    in_item = False  # the prose run being read is a list item, heading, quote or table row

    def flush(end: int) -> None:
        spans.extend((first, last, paragraph) for first, last in _sentences(text, prose, end))

    for line in text.split("\n"):
        start, end = offset, offset + len(line)
        offset = end + 1
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                paragraph += 1
                spans.append((code, end, paragraph))
                paragraph += 1
                fence = ""
            continue
        if stripped.startswith(("```", "~~~")):
            if prose >= 0:
                flush(start)
                prose = -1
            fence, code = stripped[:3], start
            continue
        if not stripped:
            if prose >= 0:
                flush(start)
                prose = -1
                paragraph += 1
            previous_ends = True
            continue
        item = stripped.startswith(("#", "|", ">", *_LIST_MARKERS)) or _numbered(stripped)
        label = _is_label(stripped)
        # a list item, heading or table row runs on only over indented lines
        ended = previous_ends or (in_item and not line[:1].isspace())
        if prose >= 0 and (item or ended or label):
            flush(start)
            prose = -1
            if item or label or in_item:
                paragraph += 1
        if prose < 0:
            prose, in_item = start, item
        previous_ends = stripped[-1] in _SENTENCE_ENDS + ":" or stripped.startswith(("#", "|"))
    if fence:  # an unclosed block runs to the end
        spans.append((code, len(text), paragraph + 1))
    elif prose >= 0:
        flush(len(text))
    trimmed = ((*_trim(text, (first, last)), number) for first, last, number in spans)
    return [(first, last, number) for first, last, number in trimmed if last > first]


def excerpt(body: str, prompt: str, *, limit: int, terms: Sequence[str] | None = None) -> str | None:
    """The pieces of `body` that answer `prompt`, at most about `limit` characters, `…` where
    text was left out; None when `body` already fits or no whole piece does.

    Kept, while they fit: the decision section's opening (at most DECISION_SHARE of `limit`),
    the pieces matching the prompt best, then the sentences around those in their paragraphs.
    """
    if len(body) <= limit:
        return None
    parsed = _parse(body)
    spans = [(start, end) for start, end, _ in parsed]
    if not spans:
        return None
    chosen: set[int] = set()
    used = 0

    def take(index: int) -> bool:
        nonlocal used
        size = spans[index][1] - spans[index][0] + 2
        if index in chosen or used + size > limit:
            return False
        chosen.add(index)
        used += size
        return True

    for count, index in enumerate(_decision_section(body, spans)):
        if not take(index) and count == 0:
            break
        if used >= DECISION_SHARE * limit:
            break
    matched = [
        index for index in _by_match(body, spans, query_terms(prompt) if terms is None else terms) if take(index)
    ]
    for index in matched:  # the rest of their paragraphs, nearest first
        for distance in range(1, len(spans)):
            near = [index + distance, index - distance]
            near = [other for other in near if 0 <= other < len(spans) and parsed[other][2] == parsed[index][2]]
            if not near:
                break
            for other in near:
                take(other)
    if not chosen:  # nothing matches and there is no decision: the opening of the record
        for index in range(len(spans)):
            if not take(index):
                break
    if not chosen:
        return None
    return _join(body, spans, sorted(chosen))


def _decision_section(body: str, spans: list[tuple[int, int]]) -> list[int]:
    """The indexes of the decision section's pieces, in order ([] when there is none)."""
    first = -1
    for labels in (_DECISION_LABELS, _DECISION_OPENINGS):
        for index, (start, end) in enumerate(spans):
            opening = body[start:end].lstrip("#*_ ").lower()
            if opening.startswith(labels) and _label_ends(opening, labels):
                first = index
                break
        if first >= 0:
            break
    if first < 0:
        return []
    section = [first]
    for index in range(first + 1, len(spans)):
        start, end = spans[index]
        piece = body[start:end]
        if piece.startswith("#") or (_at_line_start(body, start) and _is_section_label(piece)):
            break
        section.append(index)
    return section


def _label_ends(opening: str, labels: tuple[str, ...]) -> bool:
    """The label is a word of its own: "Decision:" and "Decision Outcome", not "Decisions are…"."""
    for label in labels:
        if opening.startswith(label):
            following = opening[len(label) : len(label) + 1]
            return not following.isalpha()
    return False


def _by_match(body: str, spans: list[tuple[int, int]], terms: Sequence[str]) -> list[int]:
    """Pieces sharing prompt words, best first: each word weighs by its rarity in the record."""
    wanted = {stem(term) for term in terms}
    if not wanted:
        return []
    stems: dict[str, str] = {}  # each distinct word of the body is stemmed once
    found: list[set[str]] = []
    for start, end in spans:
        matched: set[str] = set()
        for word in set(words(body[start:end].lower())):
            root = stems.get(word)
            if root is None:
                root = stems[word] = stem(word)
            if root in wanted:
                matched.add(root)
        found.append(matched)
    frequency: dict[str, int] = {}
    for matched in found:
        for word in matched:
            frequency[word] = frequency.get(word, 0) + 1
    total = len(spans)
    scores = [
        sum(math.log(1 + total / frequency[word]) for word in matched) for matched in found
    ]  # a word in every piece still counts a little
    best = max(scores, default=0.0)
    kept = [index for index in range(total) if scores[index] > 0 and scores[index] >= PIECE_RATIO * best]
    return sorted(kept, key=lambda index: (-scores[index], index))


def _join(body: str, spans: list[tuple[int, int]], chosen: list[int]) -> str:
    parts: list[str] = []
    if chosen[0] > 0:
        parts.append(GAP)
    group_start = spans[chosen[0]][0]
    for position, index in enumerate(chosen):
        following = chosen[position + 1] if position + 1 < len(chosen) else None
        if following == index + 1:
            continue
        parts.append(body[group_start : spans[index][1]])
        if following is not None:
            parts.append(GAP)
            group_start = spans[following][0]
    if chosen[-1] < len(spans) - 1:
        parts.append(GAP)
    return "\n".join(parts)


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split a run of prose at sentence ends: `.`, `!` or `?` (and closing quotes or brackets)
    followed by whitespace and not by a lowercase letter ("e.g. this" is one sentence)."""
    spans: list[tuple[int, int]] = []
    begin = start
    index = start
    while index < end:
        if text[index] in _SENTENCE_ENDS:
            after = index + 1
            while after < end and text[after] in _CLOSERS:
                after += 1
            if after < end and text[after].isspace():
                following = after
                while following < end and text[following].isspace():
                    following += 1
                if following >= end or not text[following].islower():
                    spans.append((begin, after))
                    begin = following
                    index = following
                    continue
        index += 1
    if begin < end:
        spans.append((begin, end))
    return spans


def _trim(text: str, span: tuple[int, int]) -> tuple[int, int]:
    start, end = span
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _numbered(stripped: str) -> bool:
    """`1. item` or `2) item`."""
    digits = 0
    while digits < len(stripped) and stripped[digits].isdigit():
        digits += 1
    return 0 < digits < len(stripped) - 1 and stripped[digits] in ".)" and stripped[digits + 1] == " "


def _is_label(stripped: str) -> bool:
    """A line that opens with a short label ("Decision:", "Consequences:"): a new paragraph."""
    colon = stripped.find(":")
    return 0 < colon <= 40 and stripped[0].isupper() and len(stripped[:colon].split()) <= 4


def _is_section_label(piece: str) -> bool:
    lowered = piece.lstrip("*_ ").lower()
    return _is_label(piece.lstrip("*_ ")) and lowered.startswith(_SECTION_LABELS)


def _at_line_start(text: str, index: int) -> bool:
    return index == 0 or text[index - 1] == "\n"
