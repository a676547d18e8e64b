"""Search: FTS5 BM25 over the literal text a developer typed, scoped, floored, reranked.

Pipeline (docs/adr/0005-keyword-retrieval-with-a-floor.md; the why and the measurements are in
docs/retrieval.md):
  1. plain word terms (any input is safe: FTS syntax never reaches FTS5), chatter dropped; their
     compound forms (`compound_forms`: "type check" also as "typecheck", "precommit" also as the
     phrase "pre commit"; numerals standing for words, `numeral_forms`: "end to end" also as
     "e2e", "e2e" as the phrases `spell_out` reads from the store, "kubernetes" as "k8s") so the
     ways developers write one word meet;
  2. FTS5 BM25, title weighted over body, only this project's and `_global` rows; the best
     candidates scored again with words weighed over those rows alone (`visible_bm25`),
     whatever other projects the store holds, and an IDF that never drops a word to zero; in a
     big store, a row holding only the prompt's common forms is not a candidate
     (`distinctive_forms`);
  3. superseded matches hand their relevance to the current head of their chain;
  4. a floor decided per query on the best match (rare-term units, short-query and
     two-distinct-words rules), then a tail cut;
  5. rerank: relevance × type weight × recency × confidence × pin.
Without FTS5, LIKE serves the same contract (`degraded="like-search"`); when even that fails,
pinned records only (`degraded="pinned-only"`): rungs 4–5 of docs/contracts.md#degradation.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # not the `sqlite3` package (db.py)
import math
import time

from agentctx_store._frozen import field, frozen
from agentctx_store.clock import epoch_seconds
from agentctx_store.porter import stem as porter_stem
from agentctx_store.projects import Project
from agentctx_store.records import Record
from agentctx_store.rows import RECORD_COLUMNS, record_filters, row_to_record, visible_namespaces
from agentctx_store.store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from datetime import datetime
    from typing import Any

MAX_TERMS = 48
MAX_TERM_CHARS = 40
# Compound forms (`compound_forms`): a word is split into two-word phrases when it has at least
# this many characters, each part at least COMPOUND_PART_CHARS; at most MAX_COMPOUND_FORMS in all.
COMPOUND_MIN_CHARS = 5
COMPOUND_MAX_CHARS = 12  # two English words written as one ("healthcheck"); longer ones are names
COMPOUND_PART_CHARS = 2
MAX_COMPOUND_FORMS = 24
# Splits cost FTS5 a phrase each (two lookups and a merge of two position lists): at most this many.
MAX_SPLIT_FORMS = 12
# Numerals standing for words (`numeral_forms`): a digit between two words' letters is the short
# word it sounds like ("e2e", "b2b", "seq2seq", "log4j"); a word of at least NUMERONYM_MIN_CHARS
# letters is also written as its first letter, the count of the letters between, and its last
# ("kubernetes" → k8s, "internationalization" → i18n). At most MAX_NUMERAL_FORMS of them.
NUMERAL_WORDS = {"2": "to", "4": "for"}
DIGIT_OF = {word: digit for digit, word in NUMERAL_WORDS.items()}
NUMERONYM_MIN_CHARS = 10
MAX_NUMERAL_FORMS = 6
# A short form such as "e2e" is spelled out (`spell_out`) from the best SPELL_OUT_ROWS rows that
# share the prompt's other words: at most SPELLED_PHRASES phrases ("end to end") per short form.
SPELL_OUT_ROWS = 20
SPELLED_PHRASES = 3
CANDIDATES = 60
# FTS5 matches ranked before the join to `records` (see `_fts_candidates`).
PRESELECT = 2 * CANDIDATES
# A row holding none of a prompt's forms but those at least this share of the visible rows hold
# is not a candidate (`distinctive_forms`): FTS5 reads the positions and size of every row it
# ranks, and a word 20,000 of 100K rows hold made that ~60 ms a prompt on this machine, to rank
# rows that hold nothing else. Such a form weighs at most a quarter of a rare-term match (IDF ≤
# ln 21 against ≥ 10 at 50K rows) and still counts, as before, in the score of every row that
# holds a rarer form too. Only where that share is at least COMMON_FORM_ROWS rows (20,000
# visible rows): below, counting every form costs more than it saves, and a store of the dev
# sets' size ranks as before (docs/retrieval.md, "Common words in a big store").
COMMON_FORM_SHARE = 0.05
COMMON_FORM_ROWS = 1000
TITLE_WEIGHT = 2.0
BODY_WEIGHT = 1.0
# The relevance floor, in units of "one match of a term that only one record has" (its BM25 IDF
# for this store's size), so it means the same in a 20-record store as in a 100K one; measured
# in docs/retrieval.md. The best hit must reach it, or the query returns nothing.
RELEVANCE_FLOOR = 1.4
# A short query (at most this many searchable words, e.g. an identifier or a flag) cannot pile
# up evidence the way a sentence does: it needs only a share of the floor (docs/retrieval.md).
SHORT_QUERY_TERMS = 2
SHORT_QUERY_FLOOR_SHARE = 0.5
# A longer prompt whose best match shares only one of its words with it is a coincidence
# ("thanks, the *deploy* works" against a deploy rule): ask for this many distinct words.
MIN_DISTINCT_TERMS = 2
# A current record inherits this share of the relevance of the records it superseded: a prompt
# worded like the old fact ("is paper_trail still how we audit?") is about its replacement.
INHERIT_SHARE = 1.0
# IDF from a few dozen records tells rare words from common ones less sharply than a larger
# store's: below this size the gate is figured as if the store had this many records, but
# never above SMALL_STORE_CAP times its own scale (so a store of three records still answers).
REFERENCE_RECORDS = 100
SMALL_STORE_CAP = 1.25
# In a store this small BM25 cannot weigh words at all (a word in half the records has an IDF of
# zero), so the gate is not applied: the shared-words rule alone decides, as for a new user.
TINY_STORE_RECORDS = 20
# Once a query passes the floor, hits below this share of the best hit's relevance are noise.
TAIL_RATIO = 0.3

TYPE_WEIGHTS = {
    "decision": 1.0,
    "convention": 1.0,
    "preference": 0.95,
    "discovery": 0.9,
    "bugfix": 0.85,
    "handover": 0.9,
    "profile": 0.8,
}
# Half-life in days of the recency factor; None = never decays (docs/contracts.md#record-types).
HALF_LIFE_DAYS: dict[str, float | None] = {
    "decision": None,
    "convention": None,
    "profile": None,
    "preference": 365.0,
    "discovery": 120.0,
    "bugfix": 90.0,
    "handover": 14.0,
}
CONFIDENCE_WEIGHTS = {"explicit": 1.0, "reinforced": 1.0, "inferred": 0.75}
PIN_WEIGHT = 1.5

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been before being
    below between both but by can cannot could couldn did didn do does doesn doing don down during each
    either else ever every few for from further get gets getting got had hadn has hasn have haven having
    he her here hers herself him himself his how i if in into is isn it its itself just let lets like ll
    me might more most much must mustn my myself need needs no nor not now of off on once one only or
    other ought our ours ourselves out over own please re same shall shan she should shouldn so some
    still such than that the their theirs them themselves then there these they this those through to
    too under until up upon us ve very was wasn way we were weren what when where whether which while
    who whom whose why will with won would wouldn yes yet you your yours yourself yourselves hey hi ok
    okay thanks thank tell know want wanted think going go use used using make made thing things
    did decide decided deciding agree agreed anything something someone anyone everything nothing
    really actually currently sure quick days works worked working great perfect cool nice done good
    looks seems fine awesome sounds lgtm yeah yep nope
    """.split()  # noqa: SIM905
)

# Every ASCII character that is not a letter or digit, mapped to a space (see `words`).
_ASCII_SEPARATORS = {code: " " for code in range(128) if not chr(code).isalnum()}


@frozen
class SearchHit:
    record: Record
    score: float  # final rank score (relevance × rerank factors)
    relevance: float  # the text-match part alone, on which the floor is applied


@frozen
class SearchResult:
    hits: list[SearchHit] = field(default_factory=list[SearchHit])
    degraded: str | None = None
    terms: list[str] = field(default_factory=list[str])
    # what was matched: `terms` and their compound forms (`compound_forms`)
    forms: list[str] = field(default_factory=list[str])

    @property
    def records(self) -> list[Record]:
        return [hit.record for hit in self.hits]


def query_terms(text: str) -> list[str]:
    """The searchable words of any input: lowercased, stop words out, deduplicated, capped."""
    terms: list[str] = []
    seen: set[str] = set()
    for word in words(text.lower()):
        if word in seen or word in STOPWORDS or len(word) > MAX_TERM_CHARS:
            continue
        if len(word) == 1 and word.isascii():
            continue
        seen.add(word)
        terms.append(word)
        if len(terms) >= MAX_TERMS:
            break
    return terms


def compound_forms(text: str, terms: Sequence[str]) -> list[str]:
    """The other ways a developer writes the words of `text`, so that `type-check`, `type check`
    and `typecheck` (`pre-commit` / `precommit`, `set up` / `setup`) find each other.

    FTS5 indexes `type-check` as the two tokens `type` `check`, and `typecheck` as one. So each
    pair of adjacent words is also searched joined ("type check" → `typecheck`), and each term of
    `COMPOUND_MIN_CHARS` or more is also searched as every two-word phrase it splits into
    ("precommit" → the phrases `"pre commit"`, `"prec ommit"`, …, for words of 5 to 12 letters,
    at most `MAX_SPLIT_FORMS` phrases; FTS5 matches a phrase only where
    its words stand side by side, so splits that are not words match nothing and score nothing).
    A pair joins only when its first word is not a stop word ("set up", "log in", not "the
    failing"). Numerals that stand for words come first (`numeral_forms`: "end to end" → `e2e`,
    "kubernetes" → `k8s`, and `e2e` → the pattern "e* to e*" that `spell_out` turns into the
    phrases the store writes). A rule about how words are written, not a list of synonyms.
    Forms that are already `terms` are left out; at most `MAX_COMPOUND_FORMS`, joins first
    after the numerals (a pattern becomes up to `SPELLED_PHRASES` phrases): a form that matches
    nothing costs FTS5 one lookup of a token it does not hold (cheaper, measured in a fresh
    process, than asking `fts5vocab` which forms exist).
    """
    known = set(terms)
    forms: list[str] = []

    def add(form: str) -> bool:
        if form not in known:
            known.add(form)
            forms.append(form)
        return len(forms) < MAX_COMPOUND_FORMS

    sequence = [word for word in words(text.lower()) if len(word) <= MAX_TERM_CHARS]
    for form in numeral_forms(sequence, terms):
        if not add(form):
            return forms
    for first, second in zip(sequence, sequence[1:], strict=False):
        if first in STOPWORDS or min(len(first), len(second)) < COMPOUND_PART_CHARS:
            continue  # "how do", "the failing", or the `s` of "what's"; "set up" and "log in" join
        joined = first + second
        if len(joined) <= MAX_TERM_CHARS and joined.isalpha() and not add(joined):
            return forms
    splits = 0
    for term in terms:
        if not COMPOUND_MIN_CHARS <= len(term) <= COMPOUND_MAX_CHARS or not term.isalpha():
            continue
        for cut in range(COMPOUND_PART_CHARS, len(term) - COMPOUND_PART_CHARS + 1):
            splits += 1
            if not add(f"{term[:cut]} {term[cut:]}") or splits >= MAX_SPLIT_FORMS:
                return forms
    return forms


def numeral_forms(sequence: Sequence[str], terms: Sequence[str]) -> list[str]:
    """The ways developers write words with numerals, for the words of a prompt (`sequence`, in
    order) and its `terms`; at most `MAX_NUMERAL_FORMS`:

    - a digit standing for the short word it sounds like (`NUMERAL_WORDS`: 2 = "to", 4 = "for")
      between two words: "end to end" and "end-to-end" are also searched as `e2e`, "peer to
      peer" as `p2p`, "ready for review" as `r4r` (not when a word is a stop word: "how to");
    - and back: a term of letters, that digit and letters (`e2e`, `b2b`, `seq2seq`, `log4j`)
      gives the pattern "e* to e*": words beginning with those letters around the short word,
      which `spell_out` turns into the phrases the store holds ("end to end", but also "easy to
      extend", which then needs the floor and the two-distinct-words rule like any form);
    - a numeronym, the letter count of a long word (at least `NUMERONYM_MIN_CHARS` letters):
      "kubernetes" is also searched as `k8s`, "internationalization" as `i18n`, "accessibility"
      as `a11y`. The other way (`k8s` → "kubernetes") has no form: the index holds Porter stems,
      which keep neither a word's length nor its last letter.
    """
    found: dict[str, None] = {}  # in order, each once
    for first, middle, last in zip(sequence, sequence[1:], sequence[2:], strict=False):
        digit = DIGIT_OF.get(middle)
        if digit is None or first in STOPWORDS or last in STOPWORDS:
            continue
        if first.isalpha() and last.isalpha() and first.isascii() and last.isascii():
            found[f"{first[0]}{digit}{last[0]}"] = None
            if len(found) >= MAX_NUMERAL_FORMS:  # a long prompt: no need to read on
                return list(found)
    for term in terms:
        pattern = _numeral_pattern(term)
        if pattern:
            found[pattern] = None
        elif len(term) >= NUMERONYM_MIN_CHARS and term.isalpha() and term.isascii():
            found[f"{term[0]}{len(term) - 2}{term[-1]}"] = None
    return list(found)[:MAX_NUMERAL_FORMS]


def _numeral_pattern(term: str) -> str:
    """`e2e` → "e* to e*", `seq2seq` → "seq* to seq*", `log4j` → "log* for j*"; "" for any term
    that is not letters, one digit of `NUMERAL_WORDS`, letters."""
    for index, char in enumerate(term):
        if char.isdigit():
            head, tail, word = term[:index], term[index + 1 :], NUMERAL_WORDS.get(char)
            if word and head.isalpha() and tail.isalpha() and head.isascii() and tail.isascii():
                return f"{head}* {word} {tail}*"
            return ""
    return ""


def is_pattern(form: str) -> bool:
    """A pattern of `numeral_forms` ("e* to e*"), for `spell_out`. No term can be one: `words`
    keeps letters and digits only."""
    return "*" in form


def spell_out(
    conn: sqlite3.Connection, terms: Sequence[str], forms: Sequence[str], namespaces: Sequence[str]
) -> list[str]:
    """`forms` with each pattern ("e* to e*", `numeral_forms`) replaced by the phrases that match
    it in the rows of `namespaces` that best match the prompt's other words (`terms` but the
    short forms; at most `SPELL_OUT_ROWS` rows, holding "to" or "for"): "end to end" when a
    record about the rest of the prompt says "end-to-end". At most `SPELLED_PHRASES` per
    pattern, the most frequent first.

    FTS5 could match the pattern itself as a prefix phrase (`"e" * + "to" + "e" *`), but to do so
    it merges the position lists of every word of the whole index that begins with "e", each time
    the search asks (docs/retrieval.md: 1.8-4x a search at 1K rows, 3.5-17x at 10K); this costs
    one ranked query of the prompt's own words, whatever the letter. A prompt with no other word to rank by, or
    no FTS5, drops the pattern.
    """
    patterns = [form.split() for form in forms if is_pattern(form)]
    plain = [form for form in forms if not is_pattern(form)]
    others = [term for term in terms if not _numeral_pattern(term)]
    if not patterns or not others:
        return plain
    joining = fts_query(sorted({word for _, word, _ in patterns}))
    weights = f"{TITLE_WEIGHT}, {BODY_WEIGHT}, 0.0"
    try:
        rows = conn.execute(
            f"""SELECT title, body FROM records_fts WHERE records_fts MATCH ?
                ORDER BY bm25(records_fts, {weights}), rowid LIMIT {SPELL_OUT_ROWS}""",
            (f"{fts_query(others, namespaces)} AND {{title body}}: ({joining})",),
        ).fetchall()
    except sqlite3.Error:
        return plain
    runs: dict[tuple[str, ...], dict[str, int]] = {}
    for title, body in rows:
        for text in (title, body):
            tokens = list(words(str(text).lower()))
            for first, middle, last in zip(tokens, tokens[1:], tokens[2:], strict=False):
                if first in STOPWORDS or last in STOPWORDS:
                    continue
                for head, word, tail in patterns:
                    if middle == word and first.startswith(head[:-1]) and last.startswith(tail[:-1]):
                        found = runs.setdefault((head, word, tail), {})
                        run = f"{first} {word} {last}"
                        found[run] = found.get(run, 0) + 1
    spelled: list[str] = []
    for pattern in patterns:
        ranked = sorted(runs.get(tuple(pattern), {}).items(), key=lambda item: (-item[1], item[0]))
        spelled += [run for run, _ in ranked[:SPELLED_PHRASES]]
    return list(dict.fromkeys([*plain, *spelled]))


def words(text: str) -> Iterator[str]:
    """The runs of letters and digits in `text`, in order: what `re.findall(r"[^\\W_]+", text)`
    returns (tests/test_without_re.py holds them equal), cut by hand."""
    for chunk in text.translate(_ASCII_SEPARATORS).split():
        if chunk.isascii() or chunk.isalnum():
            yield chunk
            continue
        start = -1  # other Unicode punctuation, symbols or marks inside the chunk
        for index, char in enumerate(chunk):
            if char.isalnum():
                if start < 0:
                    start = index
            elif start >= 0:
                yield chunk[start:index]
                start = -1
        if start >= 0:
            yield chunk[start:]


def fts_query(terms: Sequence[str], namespaces: Sequence[str] = ()) -> str:
    """An FTS5 MATCH expression that ORs the terms, each quoted so no input is syntax.

    With `namespaces`, the terms are held to title and body and the match to rows whose `ns`
    column (the owning project, hex-encoded) is one of them, so FTS5 scores only those rows.
    """
    matched = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
    if not namespaces:
        return matched
    owners = " OR ".join('"' + namespace.encode("utf-8").hex().upper() + '"' for namespace in namespaces)
    return f"{{title body}}: ({matched}) AND ns: ({owners})"


def recency_factor(record: Record, now: float) -> float:
    """`now` in seconds since the epoch (`time.time()`)."""
    half_life = HALF_LIFE_DAYS.get(record.type)
    if half_life is None:
        return 1.0
    try:
        age_days = max(0.0, (now - epoch_seconds(record.valid_from)) / 86400)
    except Exception:  # a hand-edited date must not break search
        return 1.0
    return 0.5 + 0.5 * math.pow(0.5, age_days / half_life)


def rerank_factor(record: Record, now: float) -> float:
    factor = TYPE_WEIGHTS.get(record.type, 0.8) * recency_factor(record, now)
    factor *= CONFIDENCE_WEIGHTS.get(record.confidence, 0.75)
    if record.pinned:
        factor *= PIN_WEIGHT
    return factor


def search(
    store: Store,
    project: Project,
    text: str,
    *,
    limit: int = 10,
    types: Sequence[str] | None = None,
    scope: str | None = None,
    include_superseded: bool = False,
    floor: float | None = RELEVANCE_FLOOR,
    exclude_ids: Sequence[str] = (),
    now: datetime | None = None,
) -> SearchResult:
    """Rank this project's (and `_global`) records against `text`. Never raises on any text.

    Args:
        scope: None = project + global; "project" = own records only; "global" = `_global` only
            (`rows.visible_namespaces`).
        include_superseded: history search; superseded records are otherwise never returned.
        floor: the relevance floor in rare-term matches (see `relevance_gate`); None returns every
            match (browsing, evaluation).
        exclude_ids: records already shown (session dedup) are skipped, not counted.

    Raises:
        ValidationError: `scope` is not one of the above.
    """
    terms = query_terms(text)
    if not terms:
        return SearchResult(terms=terms)
    # One snapshot for every read below: the word counts, the row counts and the candidates
    # must describe the same store, or a record another process writes between two of them
    # (a count of rows holding a word above the rows counted) can turn a weight negative.
    with store.snapshot():
        moment = time.time() if now is None else now.timestamp()
        namespaces = visible_namespaces(project, scope)
        fts = store.has_fts  # one look at the schema per search
        forms = [*terms, *compound_forms(text, terms)]
        forms = spell_out(store.conn, terms, forms, namespaces) if fts else [f for f in forms if not is_pattern(f)]
        # Superseded rows are read too (never returned): they lead to their current heads.
        filters, params = _filters(namespaces, types, True, exclude_ids)
        degraded: str | None = None
        stats: NamespaceStatistics | None = None
        try:
            if fts:
                stats = namespace_statistics(store.conn, namespaces)
                big = stats.rows * COMMON_FORM_SHARE >= COMMON_FORM_ROWS
                held = rows_holding(store.conn, forms, namespaces) if big else None
                distinctive = distinctive_forms(forms, held, stats.rows)
                required = fts_query(distinctive, namespaces) if distinctive else None
                found = _fts_candidates(store.conn, fts_query(forms, namespaces), filters, params, required=required)
                scored = visible_bm25(store.conn, found[: max(limit, RESCORED)], forms, namespaces, stats, held=held)
            else:
                degraded = "like-search"
                scored = _like_candidates(store.conn, terms, filters, params)
            if not include_superseded:
                scored = _current_heads(store.conn, scored, namespaces, types, exclude_ids)
        except sqlite3.Error:
            return _pinned_only(store, namespaces, limit)
        if floor is not None and scored:
            try:
                scored = apply_relevance_floor(
                    store.conn,
                    scored,
                    floor,
                    like=degraded is not None,
                    terms=terms,
                    forms=forms,
                    namespaces=namespaces,
                    stats=stats,
                )
            except sqlite3.Error:
                return _pinned_only(store, namespaces, limit)
        hits = [
            SearchHit(record=record, relevance=relevance, score=relevance * rerank_factor(record, moment))
            for record, relevance in scored
            if include_superseded or record.superseded_at is None
        ]
        hits.sort(key=lambda hit: (-hit.score, hit.record.record_id))
        return SearchResult(hits=hits[:limit], degraded=degraded, terms=terms, forms=forms)


def distinctive_forms(forms: Sequence[str], held: Mapping[str, int] | None, rows: int) -> list[str]:
    """The forms a candidate must hold one of: those some but fewer than `COMMON_FORM_SHARE` of
    the `rows` visible rows hold (`held`: each form's count over them). Empty when every form
    may make a candidate: not counted (`held` None), none so common, or none rarer."""
    if held is None:
        return []
    common = COMMON_FORM_SHARE * rows
    kept = [form for form in forms if 0 < held.get(form, 0) < common]
    return kept if any(held.get(form, 0) >= common for form in forms) else []


def _current_heads(
    conn: sqlite3.Connection,
    scored: list[tuple[Record, float]],
    namespaces: Sequence[str],
    types: Sequence[str] | None,
    exclude_ids: Sequence[str],
) -> list[tuple[Record, float]]:
    """Replace every superseded match by the current head of its chain
    (docs/contracts.md#supersession).

    The head keeps the better of its own relevance and `INHERIT_SHARE` of its predecessor's;
    superseded records themselves are dropped here and never reach the caller.
    """
    best: dict[str, tuple[Record, float]] = {}
    inherited: dict[str, float] = {}
    for record, relevance in scored:
        if record.superseded_at is None:
            if relevance > best.get(record.record_id, (record, -1.0))[1]:
                best[record.record_id] = (record, relevance)
            continue
        head_id = _head_id(conn, record)
        if head_id is not None:
            inherited[head_id] = max(inherited.get(head_id, 0.0), relevance * INHERIT_SHARE)
    missing = [head_id for head_id in inherited if head_id not in best and head_id not in exclude_ids]
    if missing:
        filters, params = _filters(namespaces, types, False, exclude_ids)
        rows = conn.execute(
            f"SELECT {_R_COLUMNS} FROM records r WHERE r.id IN ({','.join('?' * len(missing))}) AND {filters}",
            [*missing, *params],
        ).fetchall()
        for row in rows:
            best[row["id"]] = (row_to_record(row), 0.0)
    for head_id, relevance in inherited.items():
        if head_id in best and relevance > best[head_id][1]:
            best[head_id] = (best[head_id][0], relevance)
    return sorted(best.values(), key=lambda item: -item[1])


def _head_id(conn: sqlite3.Connection, record: Record) -> str | None:
    """The current end of the chain `record` belongs to (cycle-safe), or None if it is broken."""
    seen = {record.record_id}
    current = record.superseded_by
    while current is not None and current not in seen:
        seen.add(current)
        row = conn.execute("SELECT superseded_by, superseded_at FROM records WHERE id = ?", (current,)).fetchone()
        if row is None:
            return None
        if row["superseded_at"] is None:
            return current
        current = row["superseded_by"]
    return None


def rare_term_idf(record_count: int) -> float:
    """Search's IDF (`bm25_idf`) of a term found in one of `record_count` rows: the unit the
    relevance floor is counted in.

    0.0 for a store of one or two records, where no term can be told apart from another.
    """
    return bm25_idf(record_count, 1) if record_count > 2 else 0.0


def relevance_gate(
    conn: sqlite3.Connection,
    floor: float,
    namespaces: Sequence[str] | None = None,
    *,
    stats: NamespaceStatistics | None = None,
) -> float:
    """The BM25 relevance the best hit must reach: `floor` rare-term matches for the size of what
    the query can return (the rows of `namespaces`; without them, of the whole store).

    Search weighs words over the visible namespaces' rows (`visible_bm25`: all projects' rows
    that may be returned, superseded included), so the scale of its scores grows with the log of
    their number; a raw constant would silence a new store and let noise through in a big one.

    Args:
        stats: the namespaces' statistics, when the caller has read them (`search` has).
    """
    count = stats.rows if stats is not None else visible_rows(conn, namespaces)
    if count < TINY_STORE_RECORDS:
        return 0.0
    scale = min(rare_term_idf(max(count, REFERENCE_RECORDS)), SMALL_STORE_CAP * rare_term_idf(count))
    return floor * scale


def apply_relevance_floor(
    conn: sqlite3.Connection,
    scored: list[tuple[Record, float]],
    floor: float,
    *,
    like: bool,
    terms: Sequence[str],
    forms: Sequence[str] | None = None,
    namespaces: Sequence[str] | None = None,
    stats: NamespaceStatistics | None = None,
) -> list[tuple[Record, float]]:
    """The keyword floor on one query's matches: nothing when the best match is weak (below the
    store's `relevance_gate`, or sharing too few distinct words with a longer query); otherwise
    the matches not far below the best (`TAIL_RATIO`). `search` applies it; the hybrid search
    asks it whether the keyword evidence alone would answer.

    Args:
        scored: (record, relevance) pairs, in any order; must not be empty.
        floor: in rare-term matches (`RELEVANCE_FLOOR` in production).
        like: the matches come from the LIKE rung, whose relevance counts matched terms.
        terms: the query's searchable words (`query_terms`).
        forms: what was matched (`SearchResult.forms`: the terms and their compound forms);
            default `terms`.
        namespaces: what the query could return (`rows.visible_namespaces`): the gate is for
            their size (`relevance_gate`); default the whole store.
        stats: their statistics, when the caller has read them.
    """
    if like:
        return [item for item in scored if item[1] >= _like_floor(terms)]
    top, best = max(scored, key=lambda item: item[1])
    gate = relevance_gate(conn, floor, namespaces, stats=stats)
    short = len(terms) <= SHORT_QUERY_TERMS
    if short:
        gate *= SHORT_QUERY_FLOOR_SHARE
    if best < gate:
        return []
    if one_word_match(conn, top, terms, forms):
        return []
    return [item for item in scored if item[1] >= TAIL_RATIO * best]


def one_word_match(
    conn: sqlite3.Connection, record: Record, terms: Sequence[str], forms: Sequence[str] | None = None
) -> bool:
    """Whether a prompt of more than `SHORT_QUERY_TERMS` searchable words shares fewer than
    `MIN_DISTINCT_TERMS` of them (or their `forms`) with `record` (or a record it superseded):
    the two-distinct-words rule, which makes such a match no evidence on either path."""
    if len(terms) <= SHORT_QUERY_TERMS:
        return False
    return _distinct_terms(conn, record, terms if forms is None else forms) < MIN_DISTINCT_TERMS


def _distinct_terms(conn: sqlite3.Connection, record: Record, terms: Sequence[str]) -> int:
    """How many distinct `terms` the record (or one it superseded, whose relevance it may carry)
    contains, counting no further than `MIN_DISTINCT_TERMS`."""
    rows = conn.execute(
        """WITH RECURSIVE chain(id, depth) AS (
               SELECT ?, 0
               UNION SELECT r.id, chain.depth + 1 FROM records r JOIN chain ON r.superseded_by = chain.id
               WHERE chain.depth < 50)
           SELECT r.rowid FROM records r JOIN chain ON r.id = chain.id ORDER BY chain.depth""",
        (record.record_id,),
    ).fetchall()
    most = 0
    for (rowid,) in rows:
        found = 0
        for term in terms:
            match = "{title body}: " + fts_query([term])
            if conn.execute(
                "SELECT 1 FROM records_fts WHERE records_fts MATCH ? AND rowid = ?", (match, rowid)
            ).fetchone():
                found += 1
                if found >= MIN_DISTINCT_TERMS:
                    return found
        most = max(most, found)
    return most


def _filters(
    namespaces: Sequence[str], types: Sequence[str] | None, include_superseded: bool, exclude_ids: Sequence[str]
) -> tuple[str, list[Any]]:
    clauses, params = record_filters(
        namespaces, types, include_superseded=include_superseded, exclude_ids=exclude_ids, alias="r."
    )
    return " AND ".join(clauses), params


_R_COLUMNS = ", ".join("r." + column.strip() for column in RECORD_COLUMNS.split(","))


def _fts_candidates(
    conn: sqlite3.Connection, match: str, filters: str, params: list[Any], *, required: str | None = None
) -> list[tuple[int, Record, float]]:
    """The best `CANDIDATES` matches that pass `filters`, by relevance (ties: oldest row first).

    FTS5 ranks its matches first and only the best `PRESELECT` of them are joined to `records`
    and filtered: joining every match (thousands for common words) before the sort costs more
    than the ranking itself. When the filters leave fewer than `CANDIDATES` of those, the full
    join runs instead, so the result is always the same as ranking every filtered match.

    `required`: a second MATCH expression every candidate must also match (`distinctive_forms`).
    It is checked before FTS5 scores a row (`+rowid`: a filter on the rows `match` finds, not a
    look-up per row), so rows that fail it cost no score, and those that pass keep the score
    and order `match` gives them.
    """
    weights = f"{TITLE_WEIGHT}, {BODY_WEIGHT}, 0.0"  # the `ns` column never scores
    matches = [match] if required is None else [match, required]

    def held_to(rowid: str) -> str:
        return "" if required is None else f" AND +{rowid} IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?)"

    ranked = f"""SELECT rowid, -bm25(records_fts, {weights}) AS relevance FROM records_fts
                 WHERE records_fts MATCH ?{held_to("rowid")} ORDER BY relevance DESC, rowid LIMIT {PRESELECT}"""
    sql = f"""SELECT {_R_COLUMNS}, f.rowid AS rid, f.relevance AS relevance FROM ({ranked}) AS f JOIN records r ON r.rowid = f.rowid
              WHERE {filters} ORDER BY f.relevance DESC, f.rowid LIMIT {CANDIDATES}"""
    rows = conn.execute(sql, [*matches, *params]).fetchall()
    if len(rows) < CANDIDATES:
        sql = f"""SELECT {_R_COLUMNS}, r.rowid AS rid, -bm25(records_fts, {weights}) AS relevance
                  FROM records_fts JOIN records r ON r.rowid = records_fts.rowid
                  WHERE records_fts MATCH ?{held_to("records_fts.rowid")} AND {filters}
                  ORDER BY relevance DESC, r.rowid LIMIT {CANDIDATES}"""  # by alias: bm25 runs once per row
        rows = conn.execute(sql, [*matches, *params]).fetchall()
    return [(int(row["rid"]), row_to_record(row), float(row["relevance"])) for row in rows]


@frozen
class NamespaceStatistics:
    """What BM25 weighs words with, over the namespaces a query can return (`fts_namespaces`,
    kept by the FTS triggers; migration m011)."""

    rows: int  # rows of the visible namespaces in the index (superseded included)
    tokens: int  # their tokens, all columns, as FTS5 counts them
    store_rows: int  # rows of the whole index


def namespace_statistics(conn: sqlite3.Connection, namespaces: Sequence[str] | None) -> NamespaceStatistics:
    """The index's size over `namespaces` (None: the whole store) and over the whole store.

    One read of a table with a row per project. A store without the table (no FTS5, or a
    migration not yet run by this process) counts `records` instead, with no tokens.
    """
    try:
        table = conn.execute("SELECT ns, rows, tokens FROM fts_namespaces").fetchall()
    except sqlite3.OperationalError:
        count = "SELECT count(*) FROM records"
        total = int(conn.execute(count).fetchone()[0])
        if namespaces is None:
            return NamespaceStatistics(rows=total, tokens=0, store_rows=total)
        marks = ",".join("?" * len(namespaces))
        mine = int(conn.execute(f"{count} WHERE project_id IN ({marks})", list(namespaces)).fetchone()[0])
        return NamespaceStatistics(rows=mine, tokens=0, store_rows=total)
    wanted = None if namespaces is None else set(namespaces)
    rows = tokens = total = 0
    for ns, count, size in table:
        total += count
        if wanted is None or ns in wanted:
            rows += count
            tokens += size
    return NamespaceStatistics(rows=rows, tokens=tokens, store_rows=total)


def visible_rows(conn: sqlite3.Connection, namespaces: Sequence[str] | None) -> int:
    """How many rows a query over `namespaces` (None: every project) weighs its words against."""
    return namespace_statistics(conn, namespaces).rows


# Only FTS5's best this many candidates are scored again over the visible namespaces
# (`visible_bm25`; at least the search's `limit`): the rest never reach a prompt, and each costs
# a count per word it holds.
RESCORED = 20
# FTS5's BM25 constants (fts5_aux.c), which `visible_bm25` repeats.
BM25_K1 = 1.2
BM25_B = 0.75


def visible_bm25(
    conn: sqlite3.Connection,
    candidates: list[tuple[int, Record, float]],
    forms: Sequence[str],
    namespaces: Sequence[str],
    stats: NamespaceStatistics | None = None,
    idf_of: Callable[[int, int], float] | None = None,
    held: Mapping[str, int] | None = None,
) -> list[tuple[Record, float]]:
    """The candidates' BM25 over the rows the query can return, not over every project, with
    search's IDF (`bm25_idf`).

    FTS5's `bm25()` takes its statistics (row count, mean row length, how many rows hold each
    form) from the whole index, so a project's scores and ranks would move whenever another
    project is added to the data dir; and its IDF drops a word held by half the rows or more to
    nothing. Each candidate is scored again with FTS5's formula, `bm25_idf` and the visible
    namespaces' statistics: how often each form occurs in its title and body (counted here,
    words stemmed as FTS5 stems them: `porter.stem`), its length from the index's `docsize`,
    the row count and tokens from `fts_namespaces`, and one count per form found over the
    visible rows (`MATCH … AND ns: …`).

    Args:
        stats: the namespaces' statistics, when the caller has read them.
        idf_of: the IDF of a form held by so many of so many rows; default `bm25_idf` (tests
            pass FTS5's own to check the counting against `bm25()`).
        held: how many visible rows hold each form, when the caller has counted them all
            (`rows_holding`; `search` has in a big store).
    """
    if stats is None:
        stats = namespace_statistics(conn, namespaces)
    if not candidates or stats.rows <= 0 or stats.tokens <= 0:
        return [(record, relevance) for _, record, relevance in candidates]
    rowids = [rowid for rowid, _, _ in candidates]
    sizes = dict(
        conn.execute(
            f"SELECT id, sz FROM records_fts_docsize WHERE id IN ({','.join('?' * len(rowids))})", rowids
        ).fetchall()
    )
    counter = _FormCounter(forms)
    frequencies = [counter.count(record.title, record.body) for _, record, _ in candidates]
    present = sorted({form for counts in frequencies for form in counts})
    if held is None:
        held = rows_holding(conn, [forms[i] for i in present], namespaces)
    holding = {i: held[forms[i]] for i in present}
    mean_length = stats.tokens / stats.rows
    idf_of = bm25_idf if idf_of is None else idf_of
    idf = {form: idf_of(stats.rows, count) for form, count in holding.items()}
    rescored: list[tuple[Record, float]] = []
    for (rowid, record, _), counts in zip(candidates, frequencies, strict=True):
        norm = BM25_K1 * (1 - BM25_B + BM25_B * _varint_sum(sizes.get(rowid, b"")) / mean_length)
        score = 0.0
        for form, frequency in counts.items():
            score += idf[form] * (frequency * (BM25_K1 + 1)) / (frequency + norm)
        rescored.append((record, score))
    rescored.sort(key=lambda item: -item[1])
    return rescored


def rows_holding(conn: sqlite3.Connection, forms: Sequence[str], namespaces: Sequence[str]) -> dict[str, int]:
    """How many rows of the visible namespaces hold each form (as FTS5 matches it: stemmed, a
    phrase's words side by side), in one statement."""
    distinct = list(dict.fromkeys(forms))
    if not distinct:
        return {}
    counted = ", ".join("(SELECT count(*) FROM records_fts WHERE records_fts MATCH ?)" for _ in distinct)
    values = conn.execute(f"SELECT {counted}", [fts_query([form], namespaces) for form in distinct]).fetchone()
    return dict(zip(distinct, (int(value) for value in values), strict=True))


# Stop words' weights (`word_weights`) per database file and namespaces, with the visible rows they
# were counted over: a word most rows hold costs FTS5 a walk through most of the index (29 stop
# words, 89 ms at 100K records; the same prompt's 9 other words, 7 ms), and its IDF barely moves
# while the rows change by less than a tenth.
_COMMON_WEIGHTS: dict[tuple[str, tuple[str, ...]], tuple[int, dict[str, float]]] = {}


def word_weights(conn: sqlite3.Connection, words: Sequence[str], namespaces: Sequence[str] | None) -> dict[str, float]:
    """Each word's IDF over the rows a query can return (`bm25_idf`; stop words too, which most
    rows hold): how much it tells one of the project's records from the others, the weight the
    keyword ranking gives it. For the warm path's token coverage (`agentctx_embed.hybrid.coverage`).
    Stop words are counted once per database and namespaces, and again when the visible rows
    have changed by more than a tenth (`_COMMON_WEIGHTS`). `namespaces` None: the whole store."""
    from agentctx_store.calibration import changed_size

    rows = namespace_statistics(conn, namespaces).rows
    database = conn.execute("PRAGMA database_list").fetchone()
    key = (str(database[2] if database else ""), ("*",) if namespaces is None else tuple(sorted(namespaces)))
    counted_at, common = _COMMON_WEIGHTS.get(key, (rows, {}))
    if changed_size(counted_at, rows):
        counted_at, common = rows, {}
    asked = list(dict.fromkeys(words))
    fresh = {
        word: bm25_idf(rows, count)
        for word, count in rows_holding(conn, [word for word in asked if word not in common], namespaces or ()).items()
    }
    learned = {word: weight for word, weight in fresh.items() if word in STOPWORDS}
    if learned or key not in _COMMON_WEIGHTS:
        _COMMON_WEIGHTS[key] = (counted_at, common | learned)
    return {word: fresh[word] if word in fresh else common[word] for word in asked}


def bm25_idf(rows: int, holding: int) -> float:
    """Search's IDF of a form `holding` of `rows` rows hold: `ln(1 + (rows − holding + 0.5) /
    (holding + 0.5))`, BM25's with one added inside the log (as Lucene has it), so a word that
    half a project's records hold still counts a little, where FTS5's own (the same without the
    1, floored at a token 1e-6) drops it: in a project of 40 records its own name, its platform,
    its main framework are such words, and a prompt's best record is often told apart by them
    (docs/retrieval.md, "Weighing words in a small project"). Never negative, even if `holding`
    was counted above `rows`."""
    return math.log(1 + (max(rows - holding, 0) + 0.5) / (holding + 0.5))


def _varint_sum(blob: bytes) -> int:
    """The sum of the varints of an FTS5 `docsize` blob: a row's tokens in all columns."""
    total = value = 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            total += value
            value = 0
    return total


def _stem_head(stem: str) -> str:
    """What every word Porter stems to `stem` begins with: all of it, but the last letter of a
    stem ending in "e" or "i" (from "y", or added: "hoping" → "hope") and the last two of one in
    "bl" ("possibility" → "possibl"). Checked against FTS5 in tests/test_porter.py."""
    if stem.endswith("bl"):
        return stem[: max(1, len(stem) - 2)]
    if stem.endswith(("e", "i")):
        return stem[: max(1, len(stem) - 1)]
    return stem


class _FormCounter:
    """How often each of the query's forms occurs in a record, weighted by column, as FTS5 counts
    it for `bm25()`: a word counts for every single-word form it stems the same as, a two-word
    form (a split such as "pre commit") where its two words stand side by side, a longer one (a
    short form spelled out, "end to end") at every run of words that stem as its words do
    (overlapping runs too, as FTS5 counts a phrase's instances).

    Only words that begin like one of the forms' stems (`_stem_head`) are stemmed, so a long body
    costs a split and a set look-up per word.
    """

    def __init__(self, forms: Sequence[str]) -> None:
        self.single: dict[str, list[int]] = {}
        self.pairs: dict[tuple[str, str], list[int]] = {}
        stems: list[str] = []
        self.phrases: list[tuple[int, list[str]]] = []
        for index, form in enumerate(forms):
            parts = [porter_stem(part) for part in form.split()]
            stems += parts
            if len(parts) > 2:
                self.phrases.append((index, parts))
                continue
            if len(parts) == 1:
                self.single.setdefault(parts[0], []).append(index)
            elif len(parts) == 2:
                self.pairs.setdefault((parts[0], parts[1]), []).append(index)
        self.heads: dict[str, list[str]] = {}
        for form_stem in set(stems):
            head = _stem_head(form_stem)
            self.heads.setdefault(head[:2], []).append(head)
        self.two = frozenset(head for head in self.heads if len(head) == 2)
        self.one = frozenset(head for head in self.heads if len(head) == 1)
        self.cache: dict[str, str] = {}

    def _phrase_count(self, tokens: list[str], parts: list[str]) -> int:
        """How many runs of `tokens` stem as `parts` do (`_stem`: the phrases' words are among
        the forms' stems, so only words that begin like one of them are stemmed)."""
        found = 0
        for start in range(len(tokens) - len(parts) + 1):
            if all(self._stem(tokens[start + offset]) == part for offset, part in enumerate(parts)):
                found += 1
        return found

    def _stem(self, word: str) -> str:
        known = self.cache.get(word)
        if known is not None:
            return known
        heads = self.heads.get(word[:2], ()) if word[:2] in self.two else ()
        if word[:1] in self.one:
            heads = [*heads, *self.heads[word[:1]]]
        found = porter_stem(word) if any(word.startswith(head) for head in heads) else ""
        self.cache[word] = found
        return found

    def count(self, title: str, body: str) -> dict[int, float]:
        counts: dict[int, float] = {}
        two, one = self.two, self.one
        for text, weight in ((title, TITLE_WEIGHT), (body, BODY_WEIGHT)):
            lowered = text.lower()
            tokens = lowered.translate(_ASCII_SEPARATORS).split() if lowered.isascii() else list(words(lowered))
            if one:
                near = [(i, word) for i, word in enumerate(tokens) if word[:2] in two or word[:1] in one]
            else:
                near = [(i, word) for i, word in enumerate(tokens) if word[:2] in two]
            last, previous = -2, ""
            for index, word in near:
                current = self._stem(word)
                if current:
                    for form in self.single.get(current, ()):
                        counts[form] = counts.get(form, 0.0) + weight
                    if last == index - 1 and previous and self.pairs:
                        for form in self.pairs.get((previous, current), ()):
                            counts[form] = counts.get(form, 0.0) + weight
                last, previous = index, current
            for form, parts in self.phrases:
                found = self._phrase_count(tokens, parts)
                if found:
                    counts[form] = counts.get(form, 0.0) + weight * found
        return counts


def _like_floor(terms: Sequence[str]) -> float:
    # LIKE has no IDF: ask for at least two matched terms (or the only one there is).
    return min(2.0, float(len(terms)))


def _like_candidates(
    conn: sqlite3.Connection, terms: Sequence[str], filters: str, params: list[Any]
) -> list[tuple[Record, float]]:
    """Rung 4: substring matching. Relevance = matched terms, a title match counting double."""
    terms = list(terms)[:16]
    score_parts: list[str] = []
    score_params: list[Any] = []
    for term in terms:
        pattern = "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        score_parts.append(
            "(CASE WHEN lower(r.title) LIKE ? ESCAPE '\\' THEN 2 WHEN lower(r.body) LIKE ? ESCAPE '\\' THEN 1 ELSE 0 END)"
        )
        score_params.extend([pattern, pattern])
    relevance = " + ".join(score_parts)
    sql = f"""SELECT * FROM (SELECT {_R_COLUMNS}, ({relevance}) AS relevance FROM records r WHERE {filters})
              WHERE relevance > 0 ORDER BY relevance DESC LIMIT {CANDIDATES}"""
    rows = conn.execute(sql, [*score_params, *params]).fetchall()
    return [(row_to_record(row), float(row["relevance"])) for row in rows]


def _pinned_only(store: Store, namespaces: Sequence[str], limit: int) -> SearchResult:
    """Rung 5: everything else failed; pinned current records are still safe to hand out."""
    try:
        rows = store.conn.execute(
            f"""SELECT {RECORD_COLUMNS} FROM records WHERE pinned = 1 AND superseded_at IS NULL
                AND project_id IN ({",".join("?" * len(namespaces))}) ORDER BY recorded_at DESC LIMIT ?""",
            [*namespaces, limit],
        ).fetchall()
    except sqlite3.Error:
        rows = []
    hits = [SearchHit(record=row_to_record(row), score=0.0, relevance=0.0) for row in rows]
    return SearchResult(hits=hits, degraded="pinned-only")
