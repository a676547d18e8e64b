"""UserPromptSubmit: inject the few stored records that match what the developer just typed.

The literal prompt is searched (docs/hooks.md, "UserPromptSubmit"), records already injected in
this session are skipped, and nothing is injected when nothing clears the relevance floor. The
hook builds the `Asked` and hands it to the warm search service when it is up (`warm`), else
answers on the keyword path itself: `agentctx_store.prompt_answer`'s rank → compose → account,
the same compose and account the service runs. What is injected: the best record in full (long
ones cut to the passages matching the prompt), close runners-up in full, the others by title, as
fenced data within 2,000 tokens and 8,000 characters; records whose anchored files changed are
marked and rank lower, those whose anchored files are all gone are not injected
(docs/freshness.md).
"""

from __future__ import annotations

from agentctx_store.projects import resolve_project
from agentctx_store.prompt_answer import Asked
from agentctx_store.transcripts import is_meta

from agentctx_hooks import log, state, warm
from agentctx_hooks.payload import HookInput
from agentctx_hooks.provenance import client_and_hook

# A slash command is `^/[A-Za-z0-9_.:-]+(?:\s|$)`, checked by hand in `is_slash_command`
# (tests/test_prompt_without_re.py holds it to the expression).
_COMMAND_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-")


def is_developer_prompt(prompt: str) -> bool:
    """False for task notifications, slash commands and command echoes."""
    stripped = prompt.lstrip()
    if not stripped:
        return False
    if is_meta(stripped):
        return False
    return not is_slash_command(stripped)


def is_slash_command(text: str) -> bool:
    """`/name` at the very start, followed by whitespace or nothing."""
    if not text.startswith("/"):
        return False
    end = 1
    while end < len(text) and text[end] in _COMMAND_CHARS:
        end += 1
    return end > 1 and (end == len(text) or text[end].isspace())


def handle(hook: HookInput) -> str:
    prompt = hook.get_text("prompt")
    if not is_developer_prompt(prompt):
        return ""
    if not hook.cwd:
        log.write(hook.event, "payload has no usable cwd; nothing injected", session=hook.session_id)
        return ""
    data = state.load_logged(hook.session_id, hook.event)
    state.add_prompt(data, prompt)  # only a prompt that plainly holds no secret is kept
    from agentctx_store.review import review_required

    client, name = client_and_hook(hook)
    asked = Asked(
        prompt=prompt,
        session_id=hook.session_id,
        client=client,
        hook=name,
        already=state.injected_ids(data),
        pending=state.take_pending(data),
        gated=review_required(),  # `review = required`: unaccepted extraction results stay out
    )
    served = warm.ask(hook, asked, data)  # the search service, when it is up
    if served is None:
        served = _keyword(hook, asked)
        warm.count_keyword(data)
    text, ids, recorded = served
    if not recorded:  # the store was locked: the next hook that opens it records the pending part
        state.put_back_pending(data, asked.pending)
    state.add_injected(data, ids)
    state.save_logged(hook.session_id, hook.event, data)
    return text


def _keyword(hook: HookInput, asked: Asked) -> tuple[str, list[str], bool]:
    """The keyword path: rank, compose and account in this process. (text, ids, whether the
    accounting was recorded: not when the store stayed locked, so the pending part is kept.)"""
    import _sqlite3  # the C module, not the `sqlite3` package (agentctx_store/db.py)

    from agentctx_store.clock import utc_now
    from agentctx_store.prompt_answer import account, compose, rank

    from agentctx_hooks.spool import flush_quietly
    from agentctx_hooks.storage import open_store

    project = resolve_project(hook.cwd)
    floor = keyword_floor(hook, project.project_id)
    with open_store(hook, busy_ms=1000) as store:  # reads never wait under WAL; writes wait 1 s at most
        flush_quietly(store, hook.event)  # captures of the last turn become searchable first
        injection = compose(store, project, asked, rank(store, project, asked, floor=floor))
        try:
            account(store, project, asked, injection, path="keyword", at=utc_now())
        except _sqlite3.OperationalError as exc:  # locked by a long write: inject anyway
            log.error(hook.event, exc, session=hook.session_id)
            return injection.text, injection.ids, False
    return injection.text, injection.ids, True


def keyword_floor(hook: HookInput, project_id: str) -> float:
    """The project's keyword floor, calibrated off the prompt path and only read here
    (`agentctx_store.calibration.read_keyword_floor`); the constant one without it, with one log
    line when the file is there but not usable."""
    from agentctx_store.calibration import read_keyword_floor

    floor, problem = read_keyword_floor(project_id)
    if problem:
        log.write(hook.event, problem, session=hook.session_id)
    else:
        measure_when_missing(hook, project_id)
    return floor


CALIBRATE_TIMEOUT_SECONDS = 120


def measure_when_missing(hook: HookInput, project_id: str) -> None:
    """A project with no keyword floor of its own (its store was filled without `learn`, an
    import, a consolidation or the warm service, which all measure it): start `agentctx
    calibrate` detached, once (its lock), so the next prompts answer on the project's own floor;
    this one keeps the constant. One stat when the floor is there; never fails the prompt."""
    import os

    from agentctx_store import paths

    try:
        if os.path.exists(paths.keyword_calibration_path(project_id)):
            return
        from agentctx_hooks.spawn import spawn_agentctx

        spawn_agentctx(
            ["calibrate", "--project", hook.cwd],
            lock_name=f"calibrate-{project_id}",
            timeout_seconds=CALIBRATE_TIMEOUT_SECONDS,
            cwd=hook.cwd,
        )
    except Exception as exc:  # the answer matters more than the measurement
        log.error(hook.event, exc, session=hook.session_id)
