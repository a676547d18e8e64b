"""Cutting a long record to the part that answers the prompt: whole pieces only, decision kept."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_store.passages import GAP, excerpt, pieces, stem

CONTEXT = (
    "Context: The platform team runs several clusters in two regions and each one has its own ingress setup. "
    "Over the years the clusters drifted apart, so every upgrade needs a different runbook and takes a week. "
    "Operators asked for one way to build a cluster that they can review like code. "
    "Several teams also keep their own copies of the scripts that create namespaces and roles. "
    "Nobody is sure which copy is the current one, and audits have found stale permissions twice."
)
DECISION = (
    "Decision: We will build every cluster from one Terraform module and apply it through the pipeline. "
    "Manual changes in the console are not allowed any more."
)
CONSEQUENCES = (
    "Consequences: Upgrades follow one runbook for all regions. "
    "The ingress controller is configured by the module, so a cluster never differs from the others. "
    "Teams that kept their own scripts must move their namespaces into the module within a quarter. "
    "Cost reports become comparable across regions because every cluster is tagged the same way. "
    "The pipeline needs credentials that can create clusters, which the security team reviews yearly."
)
ADR = f"{CONTEXT}\n{DECISION}\n{CONSEQUENCES}"


def test_the_adr_is_long_and_is_cut_to_the_matching_passage_with_the_decision_kept() -> None:
    body = (ADR + "\n" + CONTEXT.replace("Context: ", "More context: "))[:2000]
    assert 1500 < len(body) <= 2000
    cut = excerpt(body, "cost reports across regions look different, why?", limit=700)
    assert cut is not None and len(cut) < 800
    assert "Cost reports become comparable across regions because every cluster is tagged the same way." in cut
    assert "Decision: We will build every cluster from one Terraform module and apply it through the pipeline." in cut
    assert "Nobody is sure which copy" not in cut  # an unrelated context sentence is left out
    assert GAP in cut


def test_kept_text_is_whole_sentences_in_body_order() -> None:
    cut = excerpt(ADR, "who reviews the pipeline credentials?", limit=400)
    assert cut is not None
    segments = [segment for segment in cut.split("\n") if segment != GAP]
    positions = [ADR.index(segment) for segment in segments]
    assert positions == sorted(positions)
    for segment in segments:
        assert segment[-1] in ".!?", segment  # each kept run ends where a sentence ends


def test_a_short_body_is_not_cut() -> None:
    assert excerpt("Use Redis for the job queue.", "redis queue", limit=700) is None


def test_code_blocks_are_one_piece_and_sentences_split_where_they_end() -> None:
    body = (
        "We pin the toolchain, e.g. the compiler version. It must match CI.\n"
        "```toml\n[tool]\nversion = '1.2'\n\nextra = true\n```\n"
        "- first item\n- second item\n"
        "A wrapped paragraph line\ncontinues here. Next one!"
    )
    texts = [body[start:end] for start, end in pieces(body)]
    assert texts == [
        "We pin the toolchain, e.g. the compiler version.",
        "It must match CI.",
        "```toml\n[tool]\nversion = '1.2'\n\nextra = true\n```",
        "- first item",
        "- second item",
        "A wrapped paragraph line\ncontinues here.",
        "Next one!",
    ]


def test_a_matching_code_block_is_kept_whole_or_not_at_all() -> None:
    code = "```python\n" + "\n".join(f"retry_backoff_{index} = {index}" for index in range(12)) + "\n```"
    body = CONTEXT + "\n" + code + "\n" + CONSEQUENCES
    for limit in (150, 300, 600, 900):
        cut = excerpt(body, "retry_backoff settings in python", limit=limit)
        assert cut is not None
        assert (code in cut) or ("```" not in cut), limit


FAMILIES = [
    ("deploy", "deploys", "deployed", "deploying", "deployment", "deployments"),
    ("policy", "policies"),
    ("retry", "retries", "retried"),
    ("index", "indexes"),
    ("class", "classes"),
    ("ingress", "ingresses"),
    ("match", "matches", "matched", "matching"),
    ("release", "releases", "released", "releasing"),
    ("cache", "caches", "cached", "caching"),
    ("file", "files", "filed"),
    ("handle", "handles", "handled", "handling", "handler", "handlers"),
    ("control", "controls", "controlled", "controller", "controllers"),
    ("stop", "stops", "stopped", "stopping"),
    ("migrate", "migrates", "migrated", "migrating", "migration", "migrations"),
    ("status", "statuses"),
    ("api", "apis"),
    ("quick", "quickly"),
]


@pytest.mark.parametrize("forms", FAMILIES, ids=lambda forms: forms[0])
def test_stem_joins_the_forms_of_a_word(forms: tuple[str, ...]) -> None:
    assert len({stem(form) for form in forms}) == 1, {form: stem(form) for form in forms}


@pytest.mark.parametrize(
    ("one", "other"),
    [("app", "apply"), ("status", "stat"), ("user", "use"), ("address", "add"), ("process", "proc"), ("need", "ne")],
)
def test_stem_keeps_different_words_apart(one: str, other: str) -> None:
    assert stem(one) != stem(other)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=14))
def test_stem_leaves_three_letters_and_only_cuts_endings(word: str) -> None:
    root = stem(word)
    assert len(root) >= 3
    assert word.startswith(root[:-1]) or root.endswith("y")  # an ending cut ("ies" → "y": one letter added)


SENTENCE = st.builds(
    lambda words, end: " ".join(words).capitalize() + end,
    st.lists(
        st.sampled_from(["cluster", "queue", "cache", "retry", "the", "of", "module", "é", "x.y"]),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from([".", "!", "?"]),
)
CODE = st.lists(st.sampled_from(["a = 1", "b. = 2", "", "print(x). Y"]), min_size=1, max_size=5).map(
    lambda lines: "```\n" + "\n".join(lines) + "\n```"
)
BLOCK = st.one_of(
    st.lists(SENTENCE, min_size=1, max_size=5).map(" ".join),
    CODE,
    SENTENCE.map(lambda sentence: "- " + sentence),
)


@settings(max_examples=200, deadline=None)
@given(blocks=st.lists(BLOCK, min_size=1, max_size=25), limit=st.integers(min_value=40, max_value=900))
def test_an_excerpt_never_cuts_inside_a_sentence_or_a_code_block(blocks: list[str], limit: int) -> None:
    body = "\n".join(blocks)
    cut = excerpt(body, "cluster retry queue", limit=limit)
    if cut is None:
        return
    spans = pieces(body)
    starts, ends = {start for start, _ in spans}, {end for _, end in spans}
    position = 0
    for segment in (part for part in cut.split(f"\n{GAP}\n") if part):
        segment = segment.removeprefix(f"{GAP}\n").removesuffix(f"\n{GAP}")
        if segment == GAP:
            continue
        # the same text may stand twice (a sentence and a list item of it): take the first
        # occurrence that starts and ends on piece boundaries
        found = body.find(segment, position)
        while found >= 0 and not (found in starts and found + len(segment) in ends):
            found = body.find(segment, found + 1)
        assert found >= 0, segment
        position = found + len(segment)


def test_passages_do_not_import_re() -> None:
    code = "import sys, agentctx_store.passages, agentctx_store.inject\nprint('re' in sys.modules)"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_decision_section_is_found_by_its_label_not_by_a_word_starting_with_it() -> None:
    body = (
        "Decisions are hard to find in our wiki, so they get lost. " * 6
        + "\nContext: The team keeps losing track of choices made in meetings. " * 4
        + "\nDecision Outcome: We record each decision as an ADR in the repository.\n"
        + "Consequences: Reviews take a little longer. " * 4
    )
    cut = excerpt(body, "unrelated words only", limit=300)
    assert cut is not None
    assert "Decision Outcome: We record each decision as an ADR in the repository." in cut
    assert "Decisions are hard" not in cut
