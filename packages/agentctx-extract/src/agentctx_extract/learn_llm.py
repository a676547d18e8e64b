"""`agentctx learn --llm`: Claude Haiku types and titles the rules `learn` split from instruction files.

It runs on the plan of `agentctx_store.learn` (after the deterministic split, before anything is
written) and only on the rules that plan would write: new and changed rules of instruction files.
Unchanged rules keep their records (their anchor's content hash matches), so a re-run sends
nothing; ADRs (decisions with their own titles) and memory files (typed by their front matter)
are never sent. All rules go in as few requests as fit (`BATCH_RULES`, `BATCH_CHARS`), secrets
redacted (`redact`), through extraction's client and settings (`llm.Caller`), its price table
and its monthly cap (checked before sending; the cost is recorded on a `learn-…` session, as
extraction records its own). Only valid answers are applied: a known type, a non-empty title
that fits; anything else keeps the deterministic type and title. Every way this can fail ends
in a one-line message and the deterministic plan, never an exception.

It reads no file itself: the rules come from the plan, whose files `learn` read within the
repository's tree and its size cap (`agentctx_store.learn.discover`), already redacted;
they are redacted once more here with the file name and draft title they are sent with.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from agentctx_store import Project, Store, clients, config
from agentctx_store.budget import estimate_tokens
from agentctx_store.jsontext import is_array, is_object
from agentctx_store.learn import Action, Item, LearnPlan
from agentctx_store.records import replace
from agentctx_store.redact import redact

from agentctx_extract.backends import choose
from agentctx_extract.llm import CallFailed, Usage
from agentctx_extract.pipeline import cap_message, make_caller, with_run
from agentctx_extract.prices import price_for

Status = Literal["typed", "nothing_to_send", "dry_run", "disabled", "no_key", "cap_reached", "failed"]

TOOL_NAME = "type_rules"
TYPES: tuple[str, ...] = ("decision", "convention", "preference", "discovery")
TITLE_MAX = 90  # the deterministic titles' cut
BATCH_RULES = 80  # rules per request (answers are ~40 tokens a rule, well inside max_tokens)
BATCH_CHARS = 48_000  # rule text per request (~12k tokens)
OUTPUT_TOKENS_PER_RULE = 60  # what the cap check expects each rule's answer to cost

SYSTEM_PROMPT = f"""You read rules that a software project wrote for its coding agents (in CLAUDE.md, \
AGENTS.md, GEMINI.md, Copilot or Cursor rules) and give each rule a type and a short title. Answer only \
by calling the `{TOOL_NAME}` tool, exactly once, with one entry per rule id.

Types:
- decision: a stated choice of technology, design or process (we use X; X is pinned to Y; X is the \
source of truth; we removed X; X instead of Y).
- convention: how code is written, named, tested, built, run or laid out here; a command to use; a \
rule to follow when changing the code.
- preference: how the people want the agent to work with them: asking first, commits, pull requests, \
reviews, tone, what to report.
- discovery: a fact or gotcha about the code or its environment that is not an instruction (X is \
broken; Y lives in Z; W can happen when V).

Title: at most 80 characters, one line, naming the rule's subject specifically in the rule's own \
terms (not "Rule", "Guideline" or the file name), no trailing period. The draft title shows the \
section the rule is under; keep what is right in it."""

TOOL: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": "Give each numbered rule its type and a short title.",
    "input_schema": {
        "type": "object",
        "properties": {
            "rules": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer", "description": "The rule's id as given."},
                        "type": {"type": "string", "enum": list(TYPES)},
                        "title": {"type": "string", "maxLength": 80},
                    },
                    "required": ["id", "type", "title"],
                },
            }
        },
        "required": ["rules"],
    },
}


@dataclass(frozen=True, kw_only=True)
class LlmOutcome:
    """The plan to write (typed by Haiku where its answers were valid) and one line saying what happened."""

    plan: LearnPlan
    status: Status
    message: str
    usage: Usage = field(default_factory=Usage)
    sent: int = 0  # rules sent
    answered: int = 0  # rules with at least a valid type or title back
    retyped: int = 0
    retitled: int = 0
    secrets_redacted: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "rules_sent": self.sent,
            "rules_answered": self.answered,
            "retyped": self.retyped,
            "retitled": self.retitled,
            "secrets_redacted": self.secrets_redacted,
            **self.usage.to_json(),
        }


@dataclass(frozen=True, kw_only=True)
class SentRule:
    number: int  # the id sent (1-based over the whole run)
    index: int  # the action's place in the plan
    text: str  # what is sent, redacted


def candidates(plan: LearnPlan) -> list[int]:
    """Places in the plan of the rules it would write: new or changed instruction-file rules."""
    return [
        index
        for index, action in enumerate(plan.actions)
        if action.action in ("add", "supersede") and action.item is not None and action.item.kind == "rules"
    ]


def _rule_text(number: int, item: Item) -> tuple[str, int]:
    cleaned = redact(f'<rule id="{number}" file="{item.anchor.path}">\ndraft title: {item.title}\n{item.body}\n</rule>')
    return cleaned.text, cleaned.count


def batches(rules: Sequence[SentRule]) -> list[list[SentRule]]:
    """Consecutive groups of at most `BATCH_RULES` rules and `BATCH_CHARS` characters."""
    groups: list[list[SentRule]] = []
    size = 0
    for rule in rules:
        if not groups or len(groups[-1]) >= BATCH_RULES or size + len(rule.text) > BATCH_CHARS:
            groups.append([])
            size = 0
        groups[-1].append(rule)
        size += len(rule.text)
    return groups


def message_of(group: Sequence[SentRule]) -> str:
    return f"{len(group)} rules:\n\n" + "\n\n".join(rule.text for rule in group)


def estimated_cost(groups: Sequence[Sequence[SentRule]], model: str) -> float:
    """What the requests would cost at most: each one's estimated input (system prompt, tool
    schema, message) and `OUTPUT_TOKENS_PER_RULE` per rule."""
    fixed = estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(json.dumps(TOOL))
    price = price_for(model)
    return sum(
        price.cost(
            input_tokens=fixed + estimate_tokens(message_of(group)), output_tokens=OUTPUT_TOKENS_PER_RULE * len(group)
        )
        for group in groups
    )


def valid_answers(answer: Any, numbers: set[int]) -> dict[int, tuple[str | None, str | None]]:
    """Rule id → (type, title), each `None` where the answer for it is missing or invalid."""
    entries = answer.get("rules") if is_object(answer) else None
    found: dict[int, tuple[str | None, str | None]] = {}
    for entry in entries if is_array(entries) else []:
        if not is_object(entry):
            continue
        number = entry.get("id")
        if isinstance(number, str) and number.strip().isdigit():
            number = int(number)
        if not isinstance(number, int) or isinstance(number, bool) or number not in numbers or number in found:
            continue
        kind = entry.get("type")
        kind = kind.strip().lower() if isinstance(kind, str) and kind.strip().lower() in TYPES else None
        title = entry.get("title")
        title = " ".join(title.split()).rstrip(".") if isinstance(title, str) else ""
        valid_title = title if 3 <= len(title) <= TITLE_MAX and "[REDACTED" not in title else None
        if kind is not None or valid_title is not None:
            found[number] = (kind, valid_title)
    return found


def _retyped(item: Item, kind: str | None, title: str | None) -> Item:
    return replace(item, type=kind or item.type, title=title or item.title)


def _skip(plan: LearnPlan, status: Status, message: str, **counts: Any) -> LlmOutcome:
    return LlmOutcome(plan=plan, status=status, message=f"--llm: {message}", **counts)


def type_rules(store: Store, project: Project, plan: LearnPlan, *, dry_run: bool = False) -> LlmOutcome:
    """Let Haiku type and title the rules `plan` would write; returns the plan to write instead.

    Never raises for LLM failures: the deterministic plan comes back with a one-line message.
    """
    places = candidates(plan)
    settings = config.load()
    choice = choose(settings)
    if choice.status == "disabled":
        return _skip(plan, "disabled", "LLM use is off (`agentctx config --llm` turns it on); nothing sent.")
    if choice.backend is None:
        return _skip(plan, "no_key", f"{choice.reason}; nothing sent, rules keep learn's own types and titles.")
    who = "Haiku" if choice.backend == "api" else clients.CLIENTS[str(choice.backend)].label
    if not places:
        return _skip(plan, "nothing_to_send", "no new or changed rules; nothing sent.")
    if dry_run:
        return _skip(plan, "dry_run", f"{len(places)} rules would go to {who}; nothing sent on --dry-run.")
    rules: list[SentRule] = []
    redacted = 0
    for number, index in enumerate(places, start=1):
        item = plan.actions[index].item
        assert item is not None  # `candidates` keeps only actions with an item
        text, count = _rule_text(number, item)
        rules.append(SentRule(number=number, index=index, text=text))
        redacted += count
    groups = batches(rules)
    model = str(settings["extraction_model"])
    estimate = estimated_cost(groups, model)
    tokens = sum(estimate_tokens(message_of(group)) + estimate_tokens(SYSTEM_PROMPT) + 1000 for group in groups)
    capped = cap_message(store, settings, choice, (estimate, tokens), what="LLM")
    if capped:
        return _skip(
            plan,
            "cap_reached",
            f"{capped.removesuffix('; nothing sent').replace('this run', f'{len(rules)} rules')}; nothing sent, rules keep learn's own "
            "types and titles.",
        )
    caller = make_caller(choice, settings)
    answers: dict[int, tuple[str | None, str | None]] = {}
    failure = ""
    for position, group in enumerate(groups, start=1):
        try:
            answer = caller.call(
                message_of(group),
                label=f"learn {position}/{len(groups)}",
                system=[{"type": "text", "text": SYSTEM_PROMPT}],
                tool=TOOL,
            )
        except CallFailed as exc:
            failure = str(exc)
            break  # the service is failing: the rest would fail too
        answers |= valid_answers(answer, {rule.number for rule in group})
    _record_spend(store, project, caller.usage, status="failed" if failure else "written", backend=choice.backend)
    actions = list(plan.actions)
    retyped = retitled = 0
    for rule in rules:
        kind, title = answers.get(rule.number, (None, None))
        action = actions[rule.index]
        item = action.item
        assert item is not None
        retyped += kind is not None and kind != item.type
        retitled += title is not None and title != item.title
        if kind is not None or title is not None:
            actions[rule.index] = Action(
                action=action.action,
                item=_retyped(item, kind, title),
                record=action.record,
                duplicate_of=action.duplicate_of,
            )
    typed = LearnPlan(sources=plan.sources, actions=actions, skipped=plan.skipped)
    counts = {
        "usage": caller.usage,
        "sent": len(rules),
        "answered": len(answers),
        "retyped": retyped,
        "retitled": retitled,
        "secrets_redacted": redacted,
    }
    cost = f"{caller.usage.calls} request{'s' * (caller.usage.calls != 1)}, ${caller.usage.cost_usd:.4f}"
    if choice.backend != "api":
        used = caller.usage.input_tokens + caller.usage.cache_read_tokens + caller.usage.output_tokens
        cost = f"{caller.usage.calls} request{'s' * (caller.usage.calls != 1)}, {used:,} tokens"
    if failure and not answers:
        return _skip(typed, "failed", f"{who} failed ({failure}); rules keep learn's own types and titles.", **counts)
    note = f"; the rest failed ({failure}) and keep learn's own" if failure else ""
    return _skip(
        typed,
        "typed",
        f"{who} answered for {len(answers)} of {len(rules)} rules ({cost}): {retyped} types and {retitled} "
        f"titles changed{note}.",
        **counts,
    )


def _record_spend(store: Store, project: Project, usage: Usage, *, status: str, backend: str | None = "api") -> None:
    """The run's cost on a session of its own, as extraction records its runs (the monthly cap
    and `agentctx status` count it)."""
    if not usage.calls:
        return
    session_id = "learn-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    store.add_extraction_cost(session_id, project, usage.cost_usd)
    store.update_session_meta(
        project,
        session_id,
        extraction=with_run({}, usage, trigger="learn", mode="learn", status=status, backend=backend or "api"),
    )
