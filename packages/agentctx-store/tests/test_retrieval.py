"""Search behaviour: what the developer typed finds the right record, and nothing when nothing is relevant."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentctx_store import NewRecord, Project, Record, Store, search
from agentctx_store.retrieval import (
    REFERENCE_RECORDS,
    RELEVANCE_FLOOR,
    SMALL_STORE_CAP,
    TINY_STORE_RECORDS,
    bm25_idf,
    fts_query,
    query_terms,
    rare_term_idf,
    relevance_gate,
    words,
)

AddRecord = Callable[..., Record]  # the `add` fixture of conftest.py

PROJECT_FACTS = [
    ("Payments go through Stripe", "Card payments use Stripe Checkout; webhooks land in payments/webhooks.py."),
    ("Postgres is the only database", "All durable state lives in Postgres 16; no Redis, no Mongo."),
    ("Migrations with Alembic", "Schema changes are Alembic migrations, one per pull request."),
    ("Tests use pytest fixtures", "Database tests use the transactional db fixture from conftest.py."),
    ("Frontend is Vue 3", "The admin UI is Vue 3 with Pinia for state."),
    ("Deploys via GitHub Actions", "Merges to main deploy to staging through GitHub Actions; prod is manual."),
    ("Feature flags in Unleash", "Flags are read through the flags.enabled helper backed by Unleash."),
    ("Structured JSON logging", "Use structlog; every log line carries the request id."),
    ("Background jobs on Celery", "Long work runs on Celery workers with Redis-free SQS broker."),
    ("Money is stored in cents", "Amounts are integers in minor units; never floats."),
    ("API errors follow RFC 7807", "Error responses are problem+json documents."),
    ("Python 3.12 only", "Code may use 3.12 syntax; CI runs only 3.12."),
]


@pytest.fixture
def facts(store: Store, project: Project, other_project: Project) -> dict[str, Record]:
    added = {}
    for title, body in PROJECT_FACTS:
        added[title] = store.add(project, NewRecord(type="decision", title=title, body=body))
    store.add(other_project, NewRecord(type="decision", title="GraphQL federation gateway", body="Apollo federation."))
    return added


def _titles(store: Store, project: Project, text: str, **kwargs: object) -> list[str]:
    return [hit.record.title for hit in search(store, project, text, **kwargs).hits]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("the stripe webhook handler is returning 400s, where does it live?", "Payments go through Stripe"),
        ("how should I write the alembic migration for the new column", "Migrations with Alembic"),
        ("is it ok to store the price as a float?", "Money is stored in cents"),
        ("add a flag so this is only enabled for beta users (unleash?)", "Feature flags in Unleash"),
    ],
)
def test_a_prompt_finds_the_record_it_is_about_with_the_production_floor(
    store: Store, project: Project, facts: dict[str, Record], prompt: str, expected: str
) -> None:
    assert _titles(store, project, prompt)[0] == expected


@pytest.mark.parametrize(
    "prompt",
    [
        "add a dark mode toggle to the settings screen",
        "which kubernetes ingress controller do we run?",
        "did we pick graphql federation for the gateway?",  # another project's topic
        "thanks, that works now",
        "ok",
    ],
)
def test_a_prompt_about_nothing_in_the_store_returns_nothing(
    store: Store, project: Project, facts: dict[str, Record], prompt: str
) -> None:
    assert _titles(store, project, prompt) == []


def test_without_a_floor_weak_matches_come_back(store: Store, project: Project, facts: dict[str, Record]) -> None:
    assert _titles(store, project, "which kubernetes ingress controller do we run in prod?", floor=None) != []


def test_a_new_store_with_three_records_still_answers(store: Store, project: Project, add: AddRecord) -> None:
    add("Use uv for Python", "Install with uv sync.")
    add("Commit messages in English", "Imperative mood.")
    add("SQLite in WAL mode", "Many short-lived writers.")
    assert _titles(store, project, "why is the sqlite file in wal mode?") == ["SQLite in WAL mode"]
    assert _titles(store, project, "set up the dark mode toggle") == []


def test_the_floor_is_scaled_to_the_store_size(store: Store, project: Project, add: AddRecord) -> None:
    assert rare_term_idf(1) == rare_term_idf(2) == 0.0
    assert 0 < rare_term_idf(10) < rare_term_idf(1_000) < rare_term_idf(100_000)
    gates = []
    for size in (3, 30, 60, 150):
        while store.conn.execute("SELECT count(*) FROM records").fetchone()[0] < size:
            add("Filler record", "Nothing to see.")
        gates.append(relevance_gate(store.conn, 1.0))
    assert gates[0] == 0.0  # a tiny store: BM25 cannot weigh words yet, the shared-words rule decides
    assert gates[1] == pytest.approx(SMALL_STORE_CAP * rare_term_idf(30))  # a small store keeps near its own scale
    assert gates[2] == pytest.approx(rare_term_idf(REFERENCE_RECORDS))  # a 60-record one is judged as a 100-record one
    assert gates[3] == pytest.approx(rare_term_idf(150))


def test_a_title_match_ranks_above_the_same_word_in_a_body(store: Store, project: Project, add: AddRecord) -> None:
    body_only = add("Cache policy", "Responses are cached; invalidation happens on deploy via the CDN purge hook.")
    title = add("CDN purge on deploy", "Responses are cached; invalidation happens on deploy via a hook.")
    hits = search(store, project, "cdn purge", floor=None).hits
    assert [hit.record.record_id for hit in hits] == [title.record_id, body_only.record_id]


def test_a_word_most_of_the_project_holds_still_tells_records_apart(
    store: Store, project: Project, add: AddRecord
) -> None:
    """A project's own common words ("ledger" in half of a ledger service's records) are how a
    developer names the part they mean. FTS5's IDF drops a word held by half the rows to nothing,
    which ranked the shorter record below first on "retention" alone; search's IDF (`bm25_idf`)
    still counts it."""
    add("Invoice retention", "Invoices are kept seven years in cold storage.")
    ledger = add("Ledger retention", "Entries are kept for seven years in cold storage.")
    for index in range(20):
        add(f"Ledger note {index}", f"The ledger service handles case {index} through its queue.")
        add(f"Queue note {index}", f"The billing service handles case {index} through its queue.")
    hits = search(store, project, "ledger retention period", floor=None).hits
    assert hits[0].record.record_id == ledger.record_id
    assert hits[0].relevance > 1.1 * hits[1].relevance
    assert bm25_idf(42, 21) > 0.5  # a word in half the rows still counts
    assert bm25_idf(42, 1) == pytest.approx(rare_term_idf(42))


def test_pinned_and_explicit_records_rank_above_equal_inferred_ones(
    store: Store, project: Project, add: AddRecord
) -> None:
    inferred = add("Retry flaky uploads", "Uploads retry with backoff.", confidence="inferred")
    explicit = add("Retry flaky uploads", "Uploads retry with backoff.", confidence="explicit")
    pinned = add("Retry flaky uploads", "Uploads retry with backoff.", confidence="inferred", pinned=True)
    order = [hit.record.record_id for hit in search(store, project, "retry uploads", floor=None).hits]
    assert order.index(pinned.record_id) < order.index(inferred.record_id)
    assert order.index(explicit.record_id) < order.index(inferred.record_id)


def test_old_bugfixes_decay_but_decisions_do_not(store: Store, project: Project, add: AddRecord) -> None:
    now = datetime.now(UTC)
    old_fix = add("Timeout in upload worker", "Raised the timeout.", type="bugfix", valid_from="2020-01-01")
    new_fix = add("Timeout in upload worker", "Raised the timeout.", type="bugfix", valid_from=now.isoformat())
    old_decision = add("Timeout for upload worker", "Raised the timeout.", valid_from="2020-01-01")
    hits = {hit.record.record_id: hit for hit in search(store, project, "upload worker timeout", floor=None).hits}
    assert hits[new_fix.record_id].score > hits[old_fix.record_id].score
    later = search(store, project, "upload worker timeout", floor=None, now=now + timedelta(days=3650)).hits
    assert {hit.record.record_id: hit.score for hit in later}[old_decision.record_id] == pytest.approx(
        hits[old_decision.record_id].score
    )


def test_query_terms_drop_stop_words_and_syntax() -> None:
    assert query_terms('what did we decide about "NEAR(auth AND jwt)" -token*') == ["near", "auth", "jwt", "token"]
    assert query_terms("") == [] and query_terms("the and of") == []
    assert fts_query(['a"b']) == '"a""b"'


def test_a_prompt_of_only_stop_words_searches_nothing(store: Store, project: Project, add: AddRecord) -> None:
    add("Anything", "Something.")
    result = search(store, project, "what is this? can you do it?", floor=None)
    assert result.hits == [] and result.terms == []


def test_limit_caps_the_hits(store: Store, project: Project, add: AddRecord) -> None:
    for index in range(8):
        add(f"Webhook retry rule {index}", "Webhooks retry five times.")
    assert len(search(store, project, "webhook retry", floor=None, limit=3).hits) == 3


def test_like_search_finds_records_and_applies_its_own_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: Project
) -> None:
    monkeypatch.setenv("AGENTCTX_SIMULATE_NO_FTS5", "1")
    with Store.open(tmp_path / "like.db") as store:
        assert not store.has_fts
        for title, body in PROJECT_FACTS:
            store.add(project, NewRecord(type="decision", title=title, body=body))
        result = search(store, project, "stripe webhook returns 400")
        assert result.degraded == "like-search"
        assert result.hits[0].record.title == "Payments go through Stripe"
        assert search(store, project, "dark mode toggle").hits == []


def test_a_store_made_without_fts5_keeps_working_when_reopened_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: Project
) -> None:
    monkeypatch.setenv("AGENTCTX_SIMULATE_NO_FTS5", "1")
    with Store.open(tmp_path / "like.db") as store:
        store.add(project, NewRecord(type="decision", title="Payments go through Stripe", body="Stripe."))
    monkeypatch.delenv("AGENTCTX_SIMULATE_NO_FTS5")
    with Store.open(tmp_path / "like.db") as store:
        result = search(store, project, "stripe payments", floor=None)
        assert [hit.record.title for hit in result.hits] == ["Payments go through Stripe"]


def test_a_prompt_worded_like_a_superseded_fact_finds_its_current_replacement(
    store: Store, project: Project, facts: dict[str, Record]
) -> None:
    old = store.add(
        project,
        NewRecord(type="decision", title="Audit trail with paper_trail", body="The paper_trail gem versions rows."),
    )
    _, middle = store.supersede(project, old.record_id, title="Audit log table", body="A plain audit_log table.")
    _, head = store.supersede(project, middle.record_id, title="No row auditing", body="We dropped row history.")
    for kwargs in ({}, {"floor": None}):
        hits = search(store, project, "is paper_trail still how we version rows?", **kwargs).hits  # type: ignore[arg-type]
        assert [hit.record.record_id for hit in hits][:1] == [head.record_id]
        assert {old.record_id, middle.record_id}.isdisjoint(hit.record.record_id for hit in hits)
    history = search(store, project, "is paper_trail still how we version rows?", include_superseded=True, floor=None)
    assert history.hits[0].record.record_id == old.record_id


def test_an_inherited_head_still_obeys_filters_and_dedup(store: Store, project: Project, add: AddRecord) -> None:
    old = add("Deploy with Capistrano", "cap production deploy.")
    _, head = store.supersede(project, old.record_id, title="Deploy with Kamal", body="kamal deploy.")
    prompt = "capistrano deploy"
    assert [hit.record.record_id for hit in search(store, project, prompt, floor=None).hits] == [head.record_id]
    assert search(store, project, prompt, floor=None, exclude_ids=[head.record_id]).hits == []
    assert search(store, project, prompt, floor=None, types=["convention"]).hits == []
    assert search(store, project, prompt, floor=None, scope="global").hits == []


def test_a_one_word_identifier_needs_only_half_the_floor(
    store: Store, project: Project, facts: dict[str, Record], add: AddRecord
) -> None:
    for index in range(TINY_STORE_RECORDS):  # past the tiny-store size, where the gate applies
        add(f"Filler note {index}", "Nothing to see here.")
    hit = search(store, project, "structlog", floor=None).hits[0]
    assert hit.record.title == "Structured JSON logging"
    assert hit.relevance < relevance_gate(store.conn, RELEVANCE_FLOOR)  # a sentence would need more evidence
    assert _titles(store, project, "structlog") == ["Structured JSON logging"]
    assert _titles(store, project, "structlog zebra giraffe") == []  # same evidence, longer prompt


def test_a_longer_prompt_sharing_one_word_with_the_best_match_returns_nothing(
    store: Store, project: Project, facts: dict[str, Record], add: AddRecord
) -> None:
    add("Kestrel, the kestrel service", "Kestrel is the kestrel telemetry service; kestrel owns uploads.")
    prompt = "the banana stand keeps asking about kestrel in the mango chutney recipe"
    hits = search(store, project, prompt, floor=None).hits
    assert hits[0].record.title == "Kestrel, the kestrel service"
    assert hits[0].relevance >= relevance_gate(store.conn, RELEVANCE_FLOOR)  # strong enough on its own
    assert _titles(store, project, prompt) == []  # but one shared word is a coincidence
    assert _titles(store, project, "who owns the kestrel uploads in the mango rollout")[0] == hits[0].record.title


# -- developer vocabulary: compound and hyphenated forms meet (issue 31, item 7) ---------------

COMPOUND_FACTS = [
    ("Typecheck a single file with pyright", "Run `pyright path/to/module.py` on that module alone."),
    ("Pre-commit runs ruff", "The pre-commit hook runs ruff format and ruff check on staged files."),
    ("Setup installs the toolchain", "`just setup` installs uv, node and the browsers."),
    ("Back up the database nightly", "A cron job dumps Postgres to S3 at 02:00."),
    ("Login goes through the SSO proxy", "Sessions come from the oauth2 proxy in front of the app."),
]
FILLER = [(f"Filler rule {n}", f"Unrelated convention number {n} about {topic}.") for n, topic in enumerate(
    ["logging", "naming", "imports", "docstrings", "branches", "reviews", "releases", "metrics", "caching",
     "retries", "timeouts", "queues", "fixtures", "mocks", "linters", "packaging", "secrets", "dashboards",
     "alerts", "tracing", "locales", "fonts", "icons", "colours", "layouts"])]  # fmt: skip


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("how do I type-check just one file quickly?", "Typecheck a single file with pyright"),
        ("how do I type check just one file quickly?", "Typecheck a single file with pyright"),
        ("what does the precommit hook run on staged files?", "Pre-commit runs ruff"),
        ("how do I set up the toolchain on a new laptop?", "Setup installs the toolchain"),
        ("how often do we backup the database?", "Back up the database nightly"),
        ("where does the log in page get its sessions?", "Login goes through the SSO proxy"),
    ],
)
def test_compound_and_hyphenated_forms_meet(store: Store, project: Project, prompt: str, expected: str) -> None:
    for title, body in [*COMPOUND_FACTS, *FILLER]:
        store.add(project, NewRecord(type="convention", title=title, body=body))
    assert _titles(store, project, prompt, limit=3)[:1] == [expected]


def test_compound_forms_are_a_rule_about_writing_not_synonyms(store: Store, project: Project) -> None:
    from agentctx_store.retrieval import MAX_COMPOUND_FORMS, compound_forms

    text = "how do I type-check this, set it up and backup"
    forms = compound_forms(text, query_terms(text))
    assert "typecheck" in forms and "setit" in forms and "back up" in forms
    assert "howdo" not in forms  # two stop words joined are not a word anyone searches for
    long = compound_forms(" ".join(f"word{chr(97 + n % 26)}longer" for n in range(200)), ["abcdefghij"] * 10)
    assert len(long) <= MAX_COMPOUND_FORMS
    store.add(project, NewRecord(type="convention", title="Quoting", body="a b c d"))
    assert search(store, project, '"a" b-c NEAR(d*) x"y').hits == []  # FTS syntax stays text in every form


# -- developer vocabulary: numerals standing for words (issue 31, item 7) ----------------------
# Each record shares one word with its prompt besides the numeral form, so without the rule the
# two-distinct-words rule returns nothing: every case fails when `numeral_forms` is switched off.

NUMERAL_CASES = [
    # the short form in the prompt, the words in the record (spelled out from the store)
    ("End-to-end suite needs a browser", "Playwright drives Chromium against staging.", "is the e2e suite flaky?"),
    ("Peer-to-peer sync between laptops", "No relay server; laptops find each other.", "does p2p sync work offline?"),
    ("Business to business invoices", "Invoices for companies carry a VAT number.", "where are b2b invoices numbered?"),
    (
        "Sequence to sequence summaries",
        "A small transformer writes release notes.",
        "are seq2seq summaries translated?",
    ),
    # the words in the prompt, the short form in the record
    ("E2E suite needs a browser", "Playwright drives Chromium against staging.", "is the end-to-end suite flaky?"),
    ("E2E suite needs a browser", "Playwright drives Chromium against staging.", "is the end to end suite flaky?"),
    (
        "K8s manifests live in deploy/",
        "Helm charts, one values file per environment.",
        "where are kubernetes manifests stored?",
    ),
    (
        "I18n strings live in locales/",
        "Translators edit the JSON catalogs.",
        "where do internationalization strings belong?",
    ),
    ("A11y checks on the storybook", "axe-core audits every page.", "which accessibility checks are mandatory?"),
    ("O11y budget per service", "Each service pays for its own spans.", "who sets the observability budget?"),
]


def _with_fillers(store: Store, project: Project, *facts: tuple[str, str]) -> None:
    for title, body in [*facts, *FILLER]:
        store.add(project, NewRecord(type="convention", title=title, body=body))


@pytest.mark.parametrize(("title", "body", "prompt"), NUMERAL_CASES)
def test_numerals_standing_for_words_meet_both_ways(
    store: Store, project: Project, monkeypatch: pytest.MonkeyPatch, title: str, body: str, prompt: str
) -> None:
    import agentctx_store.retrieval as retrieval

    _with_fillers(store, project, (title, body))
    assert _titles(store, project, prompt, limit=3) == [title]
    monkeypatch.setattr(retrieval, "numeral_forms", lambda sequence, terms: [])
    assert _titles(store, project, prompt, limit=3) == []  # one shared word: the rule is what answers


def test_a_short_form_is_spelled_out_from_records_about_the_rest_of_the_prompt(store: Store, project: Project) -> None:
    """A phrase such as "easy to extend" fits the pattern of e2e too: it is spelled out only
    from a record that shares another word of the prompt, then needs the floor and two words."""
    _with_fillers(
        store,
        project,
        ("End-to-end suite needs a browser", "Playwright drives Chromium against staging."),
        ("Plugins are easy to extend", "Write a class and register it in the entry points."),
    )
    found = search(store, project, "is the e2e suite flaky?")
    assert "end to end" in found.forms and "easy to extend" not in found.forms
    assert [hit.record.title for hit in found.hits] == ["End-to-end suite needs a browser"]
    assert search(store, project, "e2e").forms == ["e2e"]  # no other word to find the phrase by
    # the pattern itself never reaches FTS5, and a prompt about nothing here gets nothing
    assert search(store, project, "did the e2e dashboard go green today?").hits == []
    plugins = search(store, project, "which plugins does the e2e harness load?")
    assert "easy to extend" in plugins.forms  # spelled out from the plugins record, which shares "plugins"
    assert all(" to " not in form or form in ("easy to extend", "end to end") for form in plugins.forms)


def test_numeral_forms_are_a_rule_about_writing(store: Store, project: Project, tmp_path: Path) -> None:
    from agentctx_store.retrieval import MAX_NUMERAL_FORMS, numeral_forms

    def forms(text: str) -> list[str]:
        return numeral_forms(list(words(text.lower())), query_terms(text))

    assert forms("end-to-end, peer to peer, ready for review") == ["e2e", "p2p", "r4r"]
    assert forms("how to run it, what to do, a way to go") == []  # a stop word on either side
    assert forms("e2e b2b seq2seq word2vec log4j") == [
        "e* to e*", "b* to b*", "seq* to seq*", "word* to vec*", "log* for j*"
    ]  # fmt: skip
    assert forms("py311 utf8 ipv4 x86 h264 2fa k3s mp4 e2 2e") == []  # numbers that stand for no word
    assert forms("kubernetes internationalization accessibility observability localization") == [
        "k8s", "i18n", "a11y", "o11y", "l10n"
    ]  # fmt: skip
    assert forms("deploy kube config") == []  # short words have no numeronym
    assert len(forms(" ".join(f"a{n}2b{n}" for n in range(9)) + " a2b c2d e2f g2h i2j k2l m2n")) == MAX_NUMERAL_FORMS
    # without FTS5 the pattern is dropped, not matched as text
    monkeypatch = pytest.MonkeyPatch()
    try:
        monkeypatch.setenv("AGENTCTX_SIMULATE_NO_FTS5", "1")
        plain = Store.open(tmp_path / "plain.db")
        try:
            plain.add(project, NewRecord(type="convention", title="End-to-end suite", body="Runs nightly."))
            result = search(plain, project, "is the e2e suite flaky?")
            assert result.degraded == "like-search" and not any("*" in form for form in result.forms)
        finally:
            plain.close()
    finally:
        monkeypatch.undo()


def test_rescoring_counts_spelled_out_phrases_as_fts5_does(
    store: Store, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scoring the candidates again over the visible rows (`visible_bm25`, forced here) gives
    FTS5's own scores for the numeral forms too: three-word phrases where they stand, counted
    once per run (overlapping runs too), title and body weighted."""
    import agentctx_store.retrieval as retrieval

    _with_fillers(
        store,
        project,
        ("End-to-end suite needs a browser", "End to end to end: the end-to-end suite drives Chromium."),
        ("E2E suite on staging", "The e2e suite and the ends to ending suite share fixtures."),
        ("K8s manifests live in deploy/", "Kubernetes manifests and k8s charts, one per environment."),
        ("Peer to peer sync", "Peer-to-peer sync between peers; p2p means no relay."),
    )
    prompts = [
        "is the e2e suite flaky?",
        "is the end-to-end suite flaky?",
        "where are kubernetes manifests?",
        "does p2p sync work?",
    ]
    plain = [search(store, project, prompt, floor=None) for prompt in prompts]
    assert "end to end" in plain[0].forms and "peer to peer" in plain[3].forms
    real = retrieval.namespace_statistics

    def with_a_neighbour(conn, namespaces):
        stats = real(conn, namespaces)
        return retrieval.NamespaceStatistics(rows=stats.rows, tokens=stats.tokens, store_rows=stats.rows + 1)

    monkeypatch.setattr(retrieval, "namespace_statistics", with_a_neighbour)
    for before, prompt in zip(plain, prompts, strict=True):
        after = search(store, project, prompt, floor=None).hits
        assert [hit.record.record_id for hit in after] == [hit.record.record_id for hit in before.hits]
        assert [hit.relevance for hit in after] == pytest.approx([hit.relevance for hit in before.hits], rel=1e-9)
