"""What each stand-in for a standard library module saves on the hook path (docs/architecture.md,
"Stand-ins for speed").

The fast core avoids a few standard modules with code of its own: `_frozen` for `dataclasses`,
`jsontext` for `json`, `clock` for `datetime`, matching by hand for `re` (the slash-command check
here, as words, remote URLs and fences elsewhere), and `Literal` types made on first use instead of
importing `typing`. A stand-in pays only for what the hook would not load anyway, so each test
first runs the real hook under `python -X importtime` and takes what it loaded from the standard
library (and the `agentctx_store` package) as the *context*: for the prompt hook, a prompt that
injects, with nothing waiting in the spool. Then, interleaved round by round in one run, fresh
interpreters as a client starts the hook (the venv's `python`, no `-I` or `-S`):

- `python -c pass` (the floor);
- the context, then the standard module used as the code would use it (`dataclass` on the hook's
  own `@frozen` classes, the slash-command expression compiled, the four `Literal` types built);
- timed by the benchmark: the context, then the stand-in.

After those rounds, as many runs of the hook itself (`.venv/bin/agentctx hook <Event>`), for the
share of a hook run. Not between them: a process started right after a hook is slower.

`extra_info` holds the medians, both variants as ratios to the floor, `saved_ms` (standard
library minus stand-in, whole process) and `saved_share_of_hook` (over the hook's median), the
same measured inside the two processes (`*_in_process_ms`, `saved_in_process_share_of_hook`:
steadier on a loaded machine), `stdlib_loaded_anyway` (the hook imports the module regardless:
the stand-in buys nothing there) and, for the prompt hook, `stdlib_loaded_after_an_edit` (the
same for a prompt that first applies a captured Edit). Nothing is asserted on time; each test
checks that the stand-in's own module does not import what it stands in for.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import json
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _harness import FLOOR, process_env, run_process
from agentctx_store.records import CONFIDENCES, RECORD_TYPES, SCOPES, SOURCES
from test_bench_hooks import AGENTCTX, EVENTS, payloads

SIZE = 10_000
ROUNDS, WARMUP = 30, 3
SLASH_COMMAND = r"^/[A-Za-z0-9_.:-]+(?:\s|$)"  # what `agentctx_hooks.prompt.is_slash_command` checks by hand


@dataclass(frozen=True)
class StandIn:
    module: str  # the standard library module it stands in for
    home: str  # the module it lives in, which must not import `module`
    stdlib: Callable[[list[str]], str]  # the hook's modules -> code doing it with the standard library
    stand_in: Callable[[list[str]], str]  # ... and with the stand-in


def frozen_classes(modules: list[str], decorator: str) -> str:
    """The `@frozen` classes of the agentctx modules a hook loaded, fields only, under `decorator`."""
    classes: list[str] = []
    for name in modules:
        spec = importlib.util.find_spec(name) if name.startswith(("agentctx_store", "agentctx_hooks")) else None
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        for node in ast.parse(Path(spec.origin).read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and any(
                isinstance(item, ast.Name) and item.id == "frozen" for item in node.decorator_list
            ):
                fields = [item for item in node.body if isinstance(item, ast.AnnAssign)]
                for item in fields:  # as `from __future__ import annotations` leaves them: text
                    item.annotation = ast.Constant(ast.unparse(item.annotation))
                    if isinstance(item.value, ast.Name):  # a default named by a constant of the module
                        item.value = ast.Constant(getattr(importlib.import_module(name), item.value.id))
                node.body, node.decorator_list = list(fields) or [ast.Pass()], []
                classes.append(f"{decorator}\n{ast.unparse(node)}")
    assert classes, f"no @frozen class among {modules}"
    return "\n".join(classes)


def literals(_modules: list[str]) -> str:
    """`records.RecordType`, `Confidence`, `Scope` and `Source`, built at import."""
    built = (RECORD_TYPES, CONFIDENCES, SCOPES, SOURCES)
    return "from typing import Literal\n" + "\n".join(f"Literal[{choices!r}]" for choices in built)


STANDINS = {
    "_frozen": StandIn(
        "dataclasses",
        "agentctx_store._frozen",
        lambda mods: (
            "from dataclasses import dataclass, field\n" + frozen_classes(mods, "@dataclass(frozen=True, kw_only=True)")
        ),
        lambda mods: "from agentctx_store._frozen import field, frozen\n" + frozen_classes(mods, "@frozen"),
    ),
    "jsontext": StandIn(
        "json", "agentctx_store.jsontext", lambda _: "import json", lambda _: "import agentctx_store.jsontext"
    ),
    "clock": StandIn(
        "datetime", "agentctx_store.clock", lambda _: "import datetime", lambda _: "import agentctx_store.clock"
    ),
    "slash command": StandIn(
        "re", "agentctx_hooks.prompt", lambda _: f"import re\nre.compile({SLASH_COMMAND!r})", lambda _: "pass"
    ),
    "lazy Literal": StandIn("typing", "agentctx_store.records", literals, lambda _: "pass"),
}
CASES = [  # (stand-in, the hook whose path it is measured on: a name of test_bench_hooks.EVENTS)
    ("_frozen", "UserPromptSubmit"),
    ("jsontext", "UserPromptSubmit"),
    ("jsontext", "PostToolUse(Edit)"),
    ("clock", "UserPromptSubmit"),
    ("clock", "PostToolUse(Edit)"),
    ("slash command", "UserPromptSubmit"),
    ("lazy Literal", "UserPromptSubmit"),
]


def hook_imports(event: str, stdin: bytes, env: dict[str, str]) -> tuple[list[str], bytes]:
    """The modules one real run of the hook imported, in `-X importtime` order, and its stdout."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(AGENTCTX), "hook", event],
        input=stdin,
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-500:]
    lines = done.stderr.decode("utf-8").splitlines()
    names = [line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:") and "|" in line]
    return names[1:], done.stdout  # the first line is the header


def injecting_prompt_imports(site: Any, env: dict[str, str]) -> list[str]:
    """What the prompt hook imports for a prompt that injects (a record's title, in a new session)."""
    for title in site.titles[:12]:
        payload = {"session_id": str(uuid.uuid4()), "cwd": str(site.project_dir), "prompt": title}
        modules, output = hook_imports("UserPromptSubmit", json.dumps(payload).encode("utf-8"), env)
        if output.strip():
            return modules
    pytest.fail("no prompt of 12 record titles injected anything")


def path_imports(event: str, site: Any, env: dict[str, str]) -> tuple[list[str], list[str]]:
    """What the hook imports on its path, and what the prompt hook imports after a captured Edit.

    The prompt hook: a prompt that injects with nothing waiting in the spool (a first run applies
    whatever earlier tests left there); then the same after one PostToolUse Edit, whose capture
    the prompt applies first (the usual prompt in a session that edits files). Other hooks: one
    run, both the same."""
    edit = payloads("PostToolUse(Edit)", site.project_dir, site.prompts)
    if event != "UserPromptSubmit":
        modules = hook_imports(event, next(edit), env)[0]
        return modules, modules
    injecting_prompt_imports(site, env)
    modules = injecting_prompt_imports(site, env)
    run_process((str(AGENTCTX), "hook", "PostToolUse"), next(edit), env)
    return modules, injecting_prompt_imports(site, env)


def program(context: list[str], code: str, module: str, loads: bool) -> tuple[str, ...]:
    """`python -c`: import the context, run `code` and print how long it took (seconds), then check
    whether `module` got loaded."""
    check = f"assert {'' if loads else 'not '}{module!r} in sys.modules, {module!r}"
    timed = f"_started = time.perf_counter()\n{code}\nprint(time.perf_counter() - _started)"
    return (sys.executable, "-c", f"import sys, time, {', '.join(context)}\n{timed}\n{check}")


class Interleaved:
    """Runs each of `commands` once per round, in order, as the `setup` of a `benchmark.pedantic`
    run, so they alternate with the timed function and machine load hits all alike; keeps each
    one's wall time and what it printed."""

    def __init__(self, commands: dict[str, tuple[str, ...]], env: dict[str, str]) -> None:
        self.commands, self.env = commands, env
        self.times: dict[str, list[float]] = {name: [] for name in commands}
        self.printed: dict[str, list[bytes]] = {name: [] for name in commands}

    def setup(self) -> tuple[tuple[()], dict[str, Any]]:
        for name, command in self.commands.items():
            started = time.perf_counter()
            self.printed[name].append(run_process(command, b"", self.env))
            self.times[name].append(time.perf_counter() - started)
        return (), {}


def median_ms(seconds: list[float], skip: int) -> float:
    """The median in milliseconds, leaving out the `skip` warm-up rounds (when there were more)."""
    return statistics.median(seconds[skip:] or seconds) * 1000


@pytest.mark.parametrize(("name", "event"), CASES, ids=[f"{name}-{event}" for name, event in CASES])
def test_stand_in(benchmark: Any, hook_site: Any, bench_mode: Any, name: str, event: str) -> None:
    site = hook_site(SIZE)
    env = process_env(site.home, TMPDIR=str(site.root))
    stand_in = STANDINS[name]
    alone = f"import sys, {stand_in.home}\nassert {stand_in.module!r} not in sys.modules"
    run_process((sys.executable, "-c", alone), b"", env)  # fails (exit 1) once the stand-in stops standing in
    hook_modules, after_an_edit = path_imports(EVENTS[event][0], site, env)
    anyway = stand_in.module in hook_modules
    context = [
        module
        for module in hook_modules
        if module.split(".")[0] in sys.stdlib_module_names or module == "agentctx_store"
    ]
    rounds, warmup = bench_mode.scale(ROUNDS, 1), bench_mode.scale(WARMUP, 0)
    timer = Interleaved(
        {"floor": FLOOR, "stdlib": program(context, stand_in.stdlib(hook_modules), stand_in.module, loads=True)}, env
    )
    measured = program(context, stand_in.stand_in(hook_modules), stand_in.module, loads=anyway)
    printed: list[bytes] = []

    benchmark.group = "stand-ins"
    benchmark.pedantic(
        lambda: printed.append(run_process(measured, b"", env)),
        setup=timer.setup,
        rounds=rounds,
        warmup_rounds=warmup,
    )
    # The hook after the pairs, not between them: a process started right after a hook runs slower
    # (whatever the hook left the machine doing), which would tilt whichever variant came next.
    hook_times = []
    for payload in itertools.islice(payloads(event, site.project_dir, site.prompts), rounds):
        started = time.perf_counter()
        run_process((str(AGENTCTX), "hook", EVENTS[event][0]), payload, env)
        hook_times.append(time.perf_counter() - started)
    floor, stdlib = (median_ms(timer.times[key], warmup) for key in ("floor", "stdlib"))
    hook = median_ms(hook_times, 0)
    inside = {  # each variant's own code timed inside its process (the context costs both alike)
        "stdlib": median_ms([float(out) for out in timer.printed["stdlib"]], warmup),
        "stand_in": median_ms([float(out) for out in printed], warmup),
    }
    benchmark.extra_info.update(
        event=event,
        replaces=stand_in.module,
        stdlib_loaded_anyway=anyway,
        floor_median_ms=round(floor, 2),
        stdlib_median_ms=round(stdlib, 2),
        hook_median_ms=round(hook, 2),
        hook_ratio_to_floor=round(hook / floor, 3),
        stdlib_in_process_ms=round(inside["stdlib"], 3),
        stand_in_in_process_ms=round(inside["stand_in"], 3),
        saved_in_process_share_of_hook=round((inside["stdlib"] - inside["stand_in"]) / hook, 3),
    )
    if event == "UserPromptSubmit":
        benchmark.extra_info["stdlib_loaded_after_an_edit"] = stand_in.module in after_an_edit
    if benchmark.enabled:
        median = benchmark.stats.stats.median * 1000
        benchmark.extra_info.update(
            ratio_to_floor=round(median / floor, 3),
            stdlib_ratio_to_floor=round(stdlib / floor, 3),
            saved_ms=round(stdlib - median, 2),
            saved_share_of_hook=round((stdlib - median) / hook, 3),
        )
