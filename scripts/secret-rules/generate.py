"""Generate `agentctx_store/_secret_rules.py` from gitleaks' maintained rule set.

Source: `gitleaks.toml` beside this script, gitleaks' default configuration (MIT, see
GITLEAKS-LICENSE), copied from the gitleaks repository at commit
b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b (2026-07-22). To update: replace `gitleaks.toml`
with the newer `config/gitleaks.toml`, run `uv run python scripts/secret-rules/generate.py`,
then `uv run pytest packages/agentctx-store/tests/test_redact.py` (it checks the generated
file is current, every rule compiles, and no rule is slow on a crafted 64 KB input).

What changes on the way from Go's RE2 to Python's `re`:
- a `(?i)` inside an expression applies to the rest of its group in RE2; Python only accepts
  flags at the start, so it becomes a scoped `(?i:…)` group;
- `\\z` is `\\Z`, POSIX classes (`[[:alnum:]]`) are spelled out; a literal `[` inside a character class is escaped;
- RE2 never backtracks, Python does: an unbounded `.*` becomes `.{0,256}`, and the
  continuation-line alternatives of the two curl rules (`(?:.*|.*(?:[\\r\\n]{1,2}.*){1,5})`,
  which took 31 s and 65 s on a crafted 64 KB input) become one bounded line, so every rule stays linear;
- rules that match file paths only (no `regex`) are left out: we scan text, not files;
- the generic keyword + entropy rule runs last, so a provider's own rule names its secrets.
"""

from __future__ import annotations

import pprint
import re
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parents[1] / "packages/agentctx-store/src/agentctx_store/_secret_rules.py"
HEADER = '''"""Secret rules generated from gitleaks' default configuration (MIT); do not edit.

Made by `scripts/secret-rules/generate.py` from `scripts/secret-rules/gitleaks.toml`.
Each rule: (id, expression, keywords, minimum entropy, secret group, allowlist expressions,
what the allowlist checks: "secret" | "match" | "line", stopwords).
"""

# fmt: off
RULES: tuple[tuple[str, str, tuple[str, ...], float, int, tuple[str, ...], str, tuple[str, ...]], ...] = '''
GLOBAL_HEADER = "\n\n# values no rule reports (gitleaks' global allowlist)\nGLOBAL_ALLOW: tuple[str, ...] = "


def _group_end(pattern: str, start: int) -> int:
    """Index of the `)` closing the group that contains `start`, or len(pattern)."""
    depth, index, in_class = 0, start, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "^":
                index += 1
            if pattern[index + 1 : index + 2] == "]":
                index += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return index
            depth -= 1
        index += 1
    return len(pattern)


def _escape_class_brackets(pattern: str) -> str:
    out, index, in_class = [], 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            if char == "[" and pattern[index + 1 : index + 2] != ":":
                out.append("\\[")
                index += 1
                continue
            if char == "]" and out and out[-1] not in ("[", "[^"):
                in_class = False
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "^":
                out.append("[^")
                index += 2
                continue
        out.append(char)
        index += 1
    return "".join(out)


# constructs that backtrack badly in Python's engine, and their bounded replacement
_SLOW = {
    "(?:.*|.*(?:[\\r\\n]{1,2}.*){1,5})": ".*",  # curl-auth-user
    "(?:.*?|.*?(?:[\\r\\n]{1,2}.*?){1,5})": ".*?",  # curl-auth-header
    # two lazy name prefixes in a row try 50 × 50 splits at every position (cisco-meraki, okta, …)
    "[\\w.-]{0,50}?(?i:[\\w.-]{0,50}?": "(?i:[\\w.-]{0,50}?",
}
_POSIX = {
    "alnum": "A-Za-z0-9",
    "alpha": "A-Za-z",
    "digit": "0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "xdigit": "0-9A-Fa-f",
}


def to_python(pattern: str) -> str:
    """A gitleaks (RE2) expression as an equivalent, linear-enough Python expression."""
    pattern = pattern.replace("\\z", "\\Z")
    for slow, linear in _SLOW.items():
        pattern = pattern.replace(slow, linear)
    for name, chars in _POSIX.items():
        pattern = pattern.replace(f"[[:{name}:]]", f"[{chars}]").replace(f"[:{name}:]", chars)
    pattern = _escape_class_brackets(pattern)
    while True:
        position = pattern.find("(?i)", 1)
        if position < 0:
            break
        end = _group_end(pattern, position + 4)
        pattern = pattern[:position] + "(?i:" + pattern[position + 4 : end] + ")" + pattern[end:]
    return re.sub(r"(?<!\\)\.\*(?![+*{])", ".{0,256}", pattern)


def rules(config: dict) -> list[tuple]:
    out = []
    # the generic keyword + entropy rule last, so a provider's own rule names what it finds
    for rule in sorted(config["rules"], key=lambda rule: rule["id"].startswith("generic")):
        if "regex" not in rule:
            continue
        allow, target, stopwords = [], "secret", []
        for allowlist in rule.get("allowlists", []):
            if allowlist.get("paths") and not allowlist.get("regexes") and not allowlist.get("stopwords"):
                continue
            allow.extend(to_python(item) for item in allowlist.get("regexes", []))
            target = allowlist.get("regexTarget", target) if allowlist.get("regexes") else target
            stopwords.extend(word.lower() for word in allowlist.get("stopwords", []))
        expression = to_python(rule["regex"])
        re.compile(expression)
        for item in allow:
            re.compile(item)
        out.append(
            (
                rule["id"],
                expression,
                tuple(word.lower() for word in rule.get("keywords", [])),
                float(rule.get("entropy", 0)),
                int(rule.get("secretGroup", 0)),
                tuple(allow),
                target,
                tuple(stopwords),
            )
        )
    return out


def render(config: dict) -> str:
    global_allow = tuple(to_python(item) for item in config.get("allowlist", {}).get("regexes", []))
    body = pprint.pformat(tuple(rules(config)), width=200, sort_dicts=False)
    return HEADER + body + GLOBAL_HEADER + pprint.pformat(global_allow, width=200) + "\n# fmt: on\n"


def main() -> int:
    config = tomllib.loads((HERE / "gitleaks.toml").read_text(encoding="utf-8"))
    text = render(config)
    if "--check" in sys.argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        return 0 if current == text else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({len(rules(config))} rules)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
