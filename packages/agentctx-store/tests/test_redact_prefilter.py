"""The redactor's prefilter (one pass that says which rules' keywords a text holds) changes
nothing: on every input, `redact` gives byte-identical text, count, kinds and found secrets to
the reference that tests every rule's keywords one by one, as the redactor did before the
prefilter (issues 30 and 35: redaction dominated `learn` and a remote's first pull).

The inputs: a generated positive example of every gitleaks rule and every hand-written shape
(made from the rule's own expression), alone, after its keywords, in prose; the secrets corpus
and its near misses; and random mixes of all of them with keywords, hints and arbitrary text,
where one rule's redaction changes which keywords the later rules see.
"""

from __future__ import annotations

import random
import re
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secrets_corpus import NEAR_MISSES, SECRETS

from agentctx_store import Store
from agentctx_store import redact as redactor
from agentctx_store._secret_rules import RULES

# the standard library's own parser of expressions (no public API; stubs have none of it)
sre: Any = import_module("re._constants")
sre_parse: Any = import_module("re._parser")

_CATEGORY = {
    sre.CATEGORY_DIGIT: "7",
    sre.CATEGORY_WORD: "aZ9_",
    sre.CATEGORY_SPACE: " ",
    sre.CATEGORY_NOT_DIGIT: "x",
    sre.CATEGORY_NOT_WORD: " ",
    sre.CATEGORY_NOT_SPACE: "q",
}


def example(pattern: str, rng: random.Random) -> str:
    """A string built from `pattern`'s parse tree (usually one it matches; callers check)."""
    out: list[str] = []

    def one_of(items: list[tuple[Any, Any]]) -> str:
        if items and items[0][0] is sre.NEGATE:
            banned = {chr(value) for op, value in items[1:] if op is sre.LITERAL}
            for op, value in items[1:]:
                if op is sre.RANGE:
                    banned.update(chr(code) for code in range(value[0], value[1] + 1))
                elif op is sre.CATEGORY and value is sre.CATEGORY_SPACE:
                    banned.update(" \t\n")
            return next(char for char in "aZ9xQ_-" if char not in banned)
        choices: list[str] = []
        for op, value in items:
            if op is sre.LITERAL:
                choices.append(chr(value))
            elif op is sre.RANGE:
                choices.append(chr(rng.randint(value[0], value[1])))
            elif op is sre.CATEGORY:
                choices.append(rng.choice(_CATEGORY.get(value, "a")))
        return rng.choice(choices) if choices else "a"

    def walk(items: Any) -> None:
        for op, value in items:
            if op is sre.LITERAL:
                out.append(chr(value))
            elif op is sre.NOT_LITERAL:
                out.append("a" if value != ord("a") else "b")
            elif op is sre.ANY:
                out.append(rng.choice("aB3"))
            elif op is sre.IN:
                out.append(one_of(value))
            elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
                low, high, sub = value
                high = low + 3 if high is sre.MAXREPEAT else min(high, low + 3)
                for _ in range(rng.randint(low, max(low, high))):
                    walk(sub)
            elif op is sre.SUBPATTERN:
                walk(value[-1])
            elif op is sre.BRANCH:
                walk(rng.choice(value[1]))
            elif op is sre.ATOMIC_GROUP:
                walk(value)
            elif op is sre.CATEGORY:
                out.append(rng.choice(_CATEGORY.get(value, "a")))
            # anchors, lookarounds and back references add nothing

    walk(sre_parse.parse(pattern))
    return "".join(out)


def positives(pattern: str, count: int = 3) -> list[str]:
    """Up to `count` different strings that `pattern` matches, from fixed seeds."""
    found: list[str] = []
    for seed in range(40):
        text = example(pattern, random.Random(seed))
        if re.search(pattern, text) and text not in found:
            found.append(text)
        if len(found) == count:
            break
    return found


# (rule, its keywords or hints, its positive examples): every gitleaks rule and every shape
RULE_CASES: list[tuple[str, tuple[str, ...], list[str]]] = [
    (rule[0], rule[2], positives(rule[1])) for rule in RULES
] + [(kind, redactor._HINTS[kind], positives(pattern.pattern)) for kind, pattern in redactor._SHAPES]  # pyright: ignore[reportPrivateUsage]

CORPUS = [text for _label, text, _secret in SECRETS] + [text for _label, text in NEAR_MISSES]
PROSE = "We decided to keep the job queue in Postgres; the worker pool has eight workers."


def same(text: str) -> None:
    fast = redactor.redact(text)
    full = redactor._redact(text, prefilter=False)  # pyright: ignore[reportPrivateUsage]
    assert (fast.text, fast.count, fast.kinds, fast.found) == (full.text, full.count, full.kinds, full.found), text


def test_every_rule_has_positive_examples() -> None:
    assert len(RULE_CASES) == len(RULES) + len(redactor._SHAPES) > 200  # pyright: ignore[reportPrivateUsage]
    assert [name for name, _keywords, examples in RULE_CASES if not examples] == []


@pytest.mark.parametrize(("name", "keywords", "examples"), RULE_CASES, ids=[case[0] for case in RULE_CASES])
def test_each_rule_example_redacts_as_the_reference(name: str, keywords: tuple[str, ...], examples: list[str]) -> None:
    word = keywords[0] if keywords else name
    for secret in examples:
        for text in (
            secret,
            f"{word}={secret}",
            f"{word.upper()}: {secret}\n",
            f'"{word}_key": "{secret}"',
            f"{PROSE}\nThe {word} is {secret} for now.\n{PROSE}",
            f"{secret} {secret}\n{word} {secret}",
        ):
            same(text)


def test_the_corpus_redacts_as_the_reference() -> None:
    for text in CORPUS:
        same(text)
    same("\n".join(CORPUS))
    same(PROSE * 40)


def test_the_index_finds_exactly_the_literals_a_text_holds() -> None:
    keywords = [rule[2] for rule in RULES]
    index = redactor._index(keywords)  # pyright: ignore[reportPrivateUsage]
    rng = random.Random(7)
    words = sorted({word for group in keywords for word in group})
    for _ in range(300):
        text = "".join(rng.choice([*words, " ", "x", "\n", "ß", "İ"]) for _ in range(rng.randint(0, 12)))
        expected = {number for number, group in enumerate(keywords) if any(word in text for word in group)}
        assert index.owners(text) == expected, text


FRAGMENTS = st.one_of(
    st.sampled_from([secret for _name, _keywords, examples in RULE_CASES for secret in examples]),
    st.sampled_from(sorted({word for _name, keywords, _examples in RULE_CASES for word in keywords})),
    st.sampled_from(CORPUS),
    st.sampled_from(
        ["password", "token", "Bearer ", "Basic ", "://u:p@h", "-----BEGIN RSA PRIVATE KEY-----", "=", ": "]
    ),
    st.text(max_size=40),
)
SEPARATORS = st.sampled_from(["", " ", "\n", "=", ": ", "_", "-", "\t", '"'])


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(FRAGMENTS, SEPARATORS), max_size=12))
def test_random_mixes_redact_as_the_reference(parts: list[tuple[str, str]]) -> None:
    text = "".join(fragment + separator for fragment, separator in parts)
    same(text)
    same(text.upper())


def test_later_rules_see_the_keywords_of_the_text_as_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule runs only when its keywords are in the text as the earlier rules left it: a keyword
    that went with a redacted secret no longer lets its rule run, and one a mark brings in does."""
    import agentctx_store._secret_rules as generated

    rules = (
        ("zz-one-delta", r"alpha-(beta\w+)", ("alpha",), 0.0, 1, (), "secret", ()),
        ("zz-two", r"gamma\d+", ("betasecret",), 0.0, 0, (), "secret", ()),
        ("zz-three", r"epsilon\d+", ("delta",), 0.0, 0, (), "secret", ()),
    )
    monkeypatch.setattr(generated, "RULES", rules)
    monkeypatch.setattr(redactor, "_rule_literals", [])
    monkeypatch.setattr(redactor, "_compiled", {})
    monkeypatch.setattr(redactor, "_clean", set[str]())
    text = "alpha-betasecret gamma12345 epsilon678"
    expected = "alpha-[REDACTED:zz-one-delta] gamma12345 [REDACTED:zz-three]"
    assert redactor._redact(text, prefilter=False).text == expected  # pyright: ignore[reportPrivateUsage]
    assert redactor.redact(text).text == expected


def test_a_text_redacted_twice_costs_the_rules_once_and_a_secret_always_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    """`learn` redacts what it plans and the store what it writes: a clean text is remembered
    (the second redaction is a lookup), a text that held a secret never is."""
    calls: list[str] = []
    full = redactor._redact  # pyright: ignore[reportPrivateUsage]

    def counted(text: str, *, prefilter: bool) -> redactor.Redaction:
        calls.append(text)
        return full(text, prefilter=prefilter)

    monkeypatch.setattr(redactor, "_redact", counted)
    monkeypatch.setattr(redactor, "_clean", set[str]())
    clean = f"{PROSE} (remembered)"
    secret = SECRETS[0][1]
    for _ in range(3):
        assert redactor.redact_text(clean) == clean
        assert SECRETS[0][2] not in redactor.redact_text(secret)
    assert calls.count(clean) == 1 and calls.count(secret) == 3


def test_learn_runs_the_rules_once_per_text(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, store: Store) -> None:
    """`learn` of an ADR folder: each title and body passes the rules once, not once in `learn`
    and again in the store; a secret in an ADR is still never stored."""
    from agentctx_store import resolve_project
    from agentctx_store.learn import learn

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    adrs = root / "docs" / "adr"
    adrs.mkdir(parents=True)
    for n in range(1, 13):
        extra = f"\nDeploy with {SECRETS[0][1]}\n" if n == 5 else ""
        (adrs / f"{n:04d}-decision-{n}.md").write_text(
            f"# {n}. Decision number {n}\n\nDate: 2024-01-01\n\n## Status\n\nAccepted\n\n## Context\n\n"
            f"We needed thing {n}.{extra}\n\n## Decision\n\nWe will do thing {n}.\n",
            encoding="utf-8",
        )
    calls: list[str] = []
    full = redactor._redact  # pyright: ignore[reportPrivateUsage]

    def counted(text: str, *, prefilter: bool) -> redactor.Redaction:
        calls.append(text)
        return full(text, prefilter=prefilter)

    monkeypatch.setattr(redactor, "_redact", counted)
    monkeypatch.setattr(redactor, "_clean", set[str]())
    project = resolve_project(root)
    learn(store, project, root)
    records = store.list_records(project, limit=None)
    assert len(records) == 12
    assert all(SECRETS[0][2] not in record.body for record in records)
    clean_twice = [
        text for text in set(calls) if calls.count(text) > 1 and "[REDACTED" not in full(text, prefilter=True).text
    ]
    assert clean_twice == []
