"""Secrets never enter the store nor any file we write: one redactor for every write path.

Every text bound for the store (record titles and bodies, session metadata, graph node names,
imported files) or for disk (the capture spool, logs, exports) and every text sent to the
extraction model passes through `redact`. Four kinds of rule, applied in this order:

1. **Known shapes** written by hand for the commonest providers and for shapes that need a
   little parsing: private key blocks, `scheme://user:password@host` (the password may hold
   `@` or `/`), `Bearer`/`Basic` credentials, `curl -u`, `mysql -p…`, `docker login -p …`.
2. **gitleaks' maintained rules** (`_secret_rules.py`, generated from gitleaks' default
   configuration by `scripts/secret-rules/generate.py`; ~220 providers: Slack `xapp-`, Twilio,
   Telegram, Discord, Mailchimp, Square, Shopify, Vault, Databricks, age, Linear, Postman,
   New Relic, Artifactory, …, and gitleaks' generic keyword + entropy rule). A rule runs only
   on a text that holds one of its keywords (as gitleaks does); which rules those are comes
   from one index of every keyword (`_Literals`: the text's letter pairs, then a substring
   test for the few keywords filed under a pair it has), so a text that names no provider
   costs one pass, not a test per rule. Each rule is compiled the first time it runs, so a
   hook process compiles only what it meets.
3. **Secret names**: the value of an assignment (`.env` line, `export`, YAML/JSON key, HTTP
   header, `--flag value`) whose *name* says it holds a secret (`…_TOKEN`, `…SECRET…`,
   `…PASSWORD`, `API_KEY`, a name ending in `KEY`, …), unless the name ends in a neutral part
   (`_URL`, `_PATH`, `_FILE`, `_TTL`, …) or the value is a reference (`$VAR`, `${VAR}`), a
   placeholder, a boolean or a bare number.
4. **Prose**: a high-entropy word shortly after "secret", "token", "password", "api key", …
   ("my token is 7Gh3…", "the secret wJalrXUtn…").

What stays, on purpose: a random-looking value under a neutral name (`COMMIT=9fceb02…`,
`NODE_ENV=production`), hashes, UUIDs and base64 in running text. Guessing secrets by entropy
alone mangles commit ids and checksums, which the extraction needs far more often than it
meets an unlabelled secret.

Every expression is linear in the text (no unbounded repetition that can restart at every
position); `tests/test_redact.py` times each rule on crafted 64 KB inputs. `re` is imported
with this module, which the prompt hook never imports.
"""

from __future__ import annotations

import math
import re

from agentctx_store.jsontext import is_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any, TypeGuard

MARK = "[REDACTED:{kind}]"

# (kind, pattern). Whole match replaced unless the pattern has a group named `secret`.
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9]{2,8}-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}\b")),
    ("openai-key", re.compile(r"\bsk-[A-Za-z0-9]{32,}\b")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b")),
    ("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}")),
    ("gitlab-token", re.compile(r"\bgl(?:pat|dt|rt|ptt|oas|cbt|imt|ffct)-[A-Za-z0-9_-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposrec]-[A-Za-z0-9-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("stripe-webhook-secret", re.compile(r"\bwhsec_[A-Za-z0-9]{24,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("google-oauth-token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}")),
    ("google-client-secret", re.compile(r"\bGOCSPX-[0-9A-Za-z_-]{20,}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{40,}")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{20,}")),
    ("digitalocean-token", re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer-token", re.compile(r"\b(?:Bearer|Token)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})")),
    ("cli-credentials", re.compile(r"(?<!\S)(?:-u|--user)[ \t]+[^\s:]+:(?P<secret>(?!\[REDACTED)[^\s'\"]+)")),
    (
        "cli-credentials",
        re.compile(r"\bmysql(?:dump|admin)?\b[^\n]{0,300}?[ \t]-p(?P<secret>(?!\[REDACTED)[^\s'\"-][^\s'\"]*)"),
    ),
    (
        "cli-credentials",
        re.compile(
            r"\bdocker[ \t]+login\b[^\n]{0,300}?[ \t](?:-p|--password)[ \t=]+['\"]?(?P<secret>(?!\[REDACTED)[^\s'\"-][^\s'\"]*)"
        ),
    ),
    ("basic-auth", re.compile(r"\bBasic\s+(?P<secret>[A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])")),
)

# a literal each shape's match must contain: most text has none of them, and a substring test
# is far cheaper than a regex scan, so the scan is skipped (keeps redaction linear and quick)
_HINTS: dict[str, tuple[str, ...]] = {
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "aws-access-key": ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    "github-token": ("gh", "github_pat_"),
    "gitlab-token": ("gl",),
    "slack-token": ("xox",),
    "slack-webhook": ("hooks.slack.com",),
    "stripe-key": ("_live_", "_test_"),
    "stripe-webhook-secret": ("whsec_",),
    "google-api-key": ("AIza",),
    "google-oauth-token": ("ya29.",),
    "google-client-secret": ("GOCSPX-",),
    "npm-token": ("npm_",),
    "pypi-token": ("pypi-AgE",),
    "huggingface-token": ("hf_",),
    "sendgrid-key": ("SG.",),
    "digitalocean-token": ("_v1_",),
    "jwt": ("eyJ",),
    "bearer-token": ("Bearer", "Token"),
    "cli-credentials": ("-u", "--user", "mysql", "docker"),
    "basic-auth": ("Basic",),
}


# English's commonest letter pairs: a literal is indexed under one of its pairs that is not
# among them where it has one, so few literals are candidates for an ordinary text
_PAIRS_TEXT = (
    "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi "
    "ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns ge ly ei os no pe do su pa ec ac ot di ol tr "
    "sh ut ke ey"
)
_COMMON_PAIRS = frozenset(_PAIRS_TEXT.split())


class _Literals:
    """Which of many literals occur in a text, found in one pass: the text's set of letter pairs
    (built in C), then a substring test only for the literals indexed under a pair the text has.
    A literal occurs only where each of its pairs does, so the answer is exactly that of testing
    every literal with `in` (the prefilter in front of the rules: most texts name no provider)."""

    __slots__ = ("by_pair", "short")

    def __init__(self, literals: dict[str, tuple[int, ...]]) -> None:
        self.by_pair: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
        self.short: list[tuple[str, tuple[int, ...]]] = []  # under two characters: tested directly
        for literal, owners in literals.items():
            if len(literal) < 2:
                self.short.append((literal, owners))
                continue
            pairs = [literal[i : i + 2] for i in range(len(literal) - 1)]
            pair = next((pair for pair in pairs if pair.lower() not in _COMMON_PAIRS), pairs[0])
            self.by_pair.setdefault(pair, []).append((literal, owners))

    def owners(self, text: str) -> set[int]:
        """The owners (rule indices) of every literal that occurs in `text`."""
        found: set[int] = set()
        for literal, owners in self.short:
            if literal in text:
                found.update(owners)
        if len(text) < 2:
            return found
        for pair in self.by_pair.keys() & set(map(str.__add__, text, text[1:])):
            for literal, owners in self.by_pair[pair]:
                if literal in text:
                    found.update(owners)
        return found


def _index(literals_of: list[tuple[str, ...]]) -> _Literals:
    owners: dict[str, list[int]] = {}
    for index, literals in enumerate(literals_of):
        for literal in literals:
            owners.setdefault(literal, []).append(index)
    return _Literals({literal: tuple(indices) for literal, indices in owners.items()})


_SHAPE_HINTS = tuple(_HINTS[kind] for kind, _pattern in _SHAPES)
_SHAPE_LITERALS = _index(list(_SHAPE_HINTS))

# name parts that make a value secret; pairs are matched on adjacent parts (api + key)
_SECRET_PARTS = frozenset(
    {
        "secret",
        "secrets",
        "token",
        "tokens",
        "password",
        "passwords",
        "passwd",
        "pass",
        "pwd",
        "passphrase",
        "apikey",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "cookie",
        "dsn",
        "privatekey",
        "pat",
    }
)
# words that mark a secret even inside a run-together name
_SECRET_WORDS = ("password", "passwd", "secret", "token", "apikey", "credential", "privatekey", "accesskey")
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"), ("set", "cookie")})
# a name ending in one of these describes a secret's settings, not the secret
_NEUTRAL_LAST = frozenset(
    {
        "url",
        "uri",
        "endpoint",
        "host",
        "path",
        "file",
        "dir",
        "ttl",
        "expiry",
        "expires",
        "timeout",
        "length",
        "len",
        "size",
        "type",
        "name",
        "header",
        "prefix",
        "env",
        "enabled",
        "mode",
        "count",
        "max",
        "min",
        "version",
        "format",
        "algorithm",
        "alg",
        "id",
        "ids",
        "policy",
        "required",
        "rotation",
        "scope",
        "scopes",
    }
)

_NAME = r"[A-Za-z_][A-Za-z0-9_.-]{0,127}"
_VALUE = r"<[^>\n]*>|\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`;,&|)}\]]+"
_ASSIGNMENTS: tuple[re.Pattern[str], ...] = (
    # KEY=value (.env, export, inline env, --flag=value), optional quotes
    re.compile(rf"(?P<pre>(?<![A-Za-z0-9_.-])-{{0,2}})(?P<name>{_NAME})(?P<sep>[ \t]*=(?!=)[ \t]*)(?P<value>{_VALUE})"),
    # "key": "value" (JSON) and key: value (YAML, HTTP headers)
    re.compile(
        rf"(?<![A-Za-z0-9_.-])(?P<pre>[\"']?)(?P<name>{_NAME})[\"']?(?P<sep>[ \t]*:[ \t]*)(?P<value><[^>\n]*>|\"[^\"\n]*\"|'[^'\n]*'|[^\s,}}\]]+)"
    ),
    # --password value / --token value on a command line
    re.compile(rf"(?P<pre>(?<!\S)--)(?P<name>{_NAME})(?P<sep>[ \t]+)(?P<value>{_VALUE})"),
)
_REFERENCE = re.compile(r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^>]*>|\*+|x+|\.{3}|…|%\(?\w+\)?s?|\{\{.*\}\})$", re.I)
_PLACEHOLDER_WORDS = frozenset(
    {"true", "false", "null", "none", "nil", "yes", "no", "on", "off", "undefined", "changeme"}
)


class Redaction:
    """The redacted text, how many secrets went, their kinds, and (kind, secret) in order.
    A plain slotted class (a core module: docs/architecture.md)."""

    __slots__ = ("count", "found", "kinds", "text")

    def __init__(self, *, text: str, count: int, kinds: tuple[str, ...], found: tuple[tuple[str, str], ...] = ()):
        self.text, self.count, self.kinds, self.found = text, count, kinds, found

    def summary(self) -> str:
        """What was replaced, for a warning: kinds and a short, harmless prefix of each secret."""
        shown = [f"{kind} ({secret[:4]}…)" if len(secret) > 8 else kind for kind, secret in self.found]
        return ", ".join(shown or self.kinds)


# -- private key blocks and URL passwords: parsed, not matched, so they stay linear ------------

_KEY_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(r"-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_KEY_BODY = re.compile(r"[\sA-Za-z0-9+/=:,\\.-]*")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
# after `scheme://`: user, `:`, then the password up to the LAST `@` that a host follows
_URL_AUTH = re.compile(
    r"(?P<user>[^\s:/@\"'<>\[\]]{0,256}):(?P<secret>(?!\[REDACTED)[^\s\"'<>]{1,512})@(?=[^\s@/\"'<>:?#]+(?:[:/?#\s\"'<>]|$))"
)


def _private_keys(text: str, found: list[tuple[str, str]]) -> str:
    if "PRIVATE KEY" not in text:
        return text
    ends = [match.end() for match in _KEY_END.finditer(text)]
    out: list[str] = []
    position = 0
    for begin in _KEY_BEGIN.finditer(text):
        if begin.start() < position:
            continue
        import bisect

        index = bisect.bisect_left(ends, begin.end())
        next_begin = _KEY_BEGIN.search(text, begin.end())
        if index < len(ends) and (next_begin is None or ends[index] <= next_begin.start()):
            stop = ends[index]
        else:  # a cut-off block: the key material that follows the header
            body = _KEY_BODY.match(text, begin.end(), next_begin.start() if next_begin else len(text))
            stop = body.end() if body else begin.end()
            stop = next_begin.start() if next_begin is not None and next_begin.start() < stop else stop
        out.append(text[position : begin.start()])
        out.append(MARK.format(kind="private-key"))
        found.append(("private-key", text[begin.start() : stop]))
        position = stop
    out.append(text[position:])
    return "".join(out)


def _url_passwords(text: str, found: list[tuple[str, str]]) -> str:
    if "://" not in text:
        return text
    out: list[str] = []
    position = 0
    cut = text.find("://")
    while cut >= 0:
        scheme_start = cut
        while scheme_start > 0 and cut - scheme_start < 32 and text[scheme_start - 1] in _SCHEME_CHARS:
            scheme_start -= 1
        usable = scheme_start < cut and cut + 3 >= position and text.find("@", cut, cut + 800) > 0
        match = _URL_AUTH.match(text, cut + 3) if usable else None
        if match is not None:
            start, end = match.span("secret")
            out.append(text[position:start])
            out.append(MARK.format(kind="url-password"))
            found.append(("url-password", match.group("secret")))
            position = end
        cut = text.find("://", max(cut + 3, position))
    out.append(text[position:])
    return "".join(out)


# -- gitleaks rules ----------------------------------------------------------------------------

_compiled: dict[str, re.Pattern[str]] = {}
_allow_compiled: dict[str, tuple[re.Pattern[str], ...]] = {}
_global_allow: list[re.Pattern[str]] = []


def _rule(rule: tuple[Any, ...]) -> re.Pattern[str]:
    """The rule's expression, compiled when its keywords first appear (a hook pays only for those)."""
    if rule[0] not in _compiled:
        _compiled[rule[0]] = re.compile(rule[1])
    return _compiled[rule[0]]


def _allowlist(rule: tuple[Any, ...]) -> tuple[re.Pattern[str], ...]:
    """The rule's allowlist, compiled only once the rule has a candidate (generic-api-key's is large)."""
    if rule[0] not in _allow_compiled:
        _allow_compiled[rule[0]] = tuple(re.compile(item) for item in rule[5])
    return _allow_compiled[rule[0]]


def entropy(text: str) -> float:
    """Shannon entropy in bits per character (what gitleaks' `entropy` thresholds measure)."""
    if not text:
        return 0.0
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    size = len(text)
    return -sum(count / size * math.log2(count / size) for count in counts.values())


def _gitleaks_replacer(rule: tuple[Any, ...], found: list[tuple[str, str]]) -> Any:
    rule_id, _expression, _keywords, min_entropy, group, _allow, target, stopwords = rule

    def replace(match: re.Match[str]) -> str:
        # gitleaks: the secret is the rule's secret group, else the first group that matched
        index = group or next((i for i in range(1, (match.re.groups or 0) + 1) if match.group(i)), 0)
        secret = match.group(index) if index else match.group()
        if not secret or "REDACTED" in secret or (min_entropy and entropy(secret) < min_entropy):
            return match.group()
        checked = match.group() if target in ("match", "line") else secret
        lowered_secret = secret.lower()
        if any(word in lowered_secret for word in stopwords) or any(item.search(checked) for item in _allowlist(rule)):
            return match.group()
        if any(item.search(secret) for item in _global_allow):
            return match.group()
        found.append((rule_id, secret))
        start, end = match.span(index) if index else match.span()
        whole = match.start()
        return match.group()[: start - whole] + MARK.format(kind=rule_id) + match.group()[end - whole :]

    return replace


_NAME_PREFIXES = ("(?i)[\\w.-]{0,50}?", "[\\w.-]{0,50}?", "(?i:[\\w.-]{0,50}?")
_WINDOW_BEFORE = 64  # the rule's own name prefix is at most 50 characters
_WINDOW_AFTER = 2048  # keyword, separator and value of an assignment; then to the end of that line


def _windows(text: str, lowered: str, keywords: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """Merged spans of `text` around each keyword hit, or None to scan all of it (many hits, or
    a text whose lower-case form has another length, so positions would not match)."""
    if len(lowered) != len(text):
        return None
    spans: list[tuple[int, int]] = []
    for word in keywords:
        start = lowered.find(word)
        while start >= 0:
            end = start + len(word) + _WINDOW_AFTER
            line_end = text.find("\n", end, end + _WINDOW_AFTER)
            spans.append((max(0, start - _WINDOW_BEFORE), line_end if line_end >= 0 else end))
            if len(spans) > 2000:
                return None
            start = lowered.find(word, start + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    covered = sum(end - start for start, end in merged)
    return None if covered > len(text) // 2 else merged


_rule_literals: list[
    tuple[_Literals, tuple[tuple[str, ...], ...]]
] = []  # the index of every rule's keywords, built on first use


def _due(
    index: _Literals, literals_of: Sequence[tuple[str, ...]], current: Callable[[], str], *, prefilter: bool
) -> Iterator[int]:
    """The rules to run, in order: those whose literals occur in the text as it stands when each
    is reached (`current()`; a rule without literals always runs). While the text is unchanged the
    index answers for all of them in one pass; once a rule has changed it (rare), or with
    `prefilter=False` (the reference the tests hold the index to), each rule's literals are
    tested one by one, as gitleaks does."""
    after = -1
    if prefilter:
        start = current()
        for number in sorted(index.owners(start)):
            yield number
            after = number
            if current() is not start:
                break
        else:
            return
    for number in range(after + 1, len(literals_of)):
        text = current()
        if not literals_of[number] or any(literal in text for literal in literals_of[number]):
            yield number


def _gitleaks(text: str, found: list[tuple[str, str]], prefilter: bool = True) -> str:
    """Apply gitleaks' rules. A rule that begins with a lazy name prefix (`[\\w.-]{0,50}?`, the
    keyword-and-assignment family) tries up to 50 starts at every position, so on a long text it
    scans only the spans around its keywords: the same matches, a fraction of the work."""
    from agentctx_store._secret_rules import GLOBAL_ALLOW, RULES

    if not _global_allow:
        _global_allow.extend(re.compile(item) for item in GLOBAL_ALLOW)
    if not _rule_literals:
        _rule_literals.append((_index([rule[2] or ("",) for rule in RULES]), tuple(rule[2] for rule in RULES)))
    index, keywords_of = _rule_literals[0]
    lowered = text.lower()
    for number in _due(index, keywords_of, lambda: lowered, prefilter=prefilter):  # noqa: B023 - the text as it stands
        rule = RULES[number]
        keywords = rule[2]
        replace = _gitleaks_replacer(rule, found)
        spans = _windows(text, lowered, keywords) if keywords and rule[1].startswith(_NAME_PREFIXES) else None
        if spans is None:
            redacted = _rule(rule).sub(replace, text)
        else:
            pieces: list[str] = []
            position = 0
            for start, end in spans:
                for match in _rule(rule).finditer(text, start, min(end, len(text))):
                    if match.start() < position:
                        continue
                    pieces.append(text[position : match.start()])
                    pieces.append(replace(match))
                    position = match.end()
            pieces.append(text[position:])
            redacted = "".join(pieces)
        if redacted != text:  # the later rules' keywords are tested on the new text
            text, lowered = redacted, redacted.lower()
    return text


# -- prose: a high-entropy word after a word that announces a secret --------------------------

_PROSE = re.compile(
    r"(?i)\b(?:secret|token|password|passwd|passphrase|pwd|api[ _-]?key|access[ _-]?key|private[ _-]?key|"
    r"credentials?|key)\b[^\n]{0,40}?(?<![A-Za-z0-9+/=_.~-])(?P<secret>[A-Za-z0-9+/=_.~-]{16,200})(?![A-Za-z0-9+/=_.~-])"
)
_PROSE_WORDS = ("secret", "token", "passw", "passphrase", "pwd", "key", "credential")
_HEX = frozenset("0123456789abcdefABCDEF-")


def _looks_random(word: str) -> bool:
    """A word no language or path makes: letters and digits mixed, high entropy, not a hash,
    a UUID, a path, a dotted name or a ULID."""
    if word.startswith(("/", ".", "~")) or "REDACTED" in word or set(word) <= _HEX:
        return False
    if word.count(".") >= 2 or (word.isalnum() and word.isupper() and len(word) == 26):
        return False
    has_digit = any(char.isdigit() for char in word)
    has_alpha = any(char.isalpha() for char in word)
    return has_digit and has_alpha and entropy(word) >= 3.5


def _prose(text: str, found: list[tuple[str, str]]) -> str:
    lowered = text.lower()
    if not any(word in lowered for word in _PROSE_WORDS):
        return text

    def replace(match: re.Match[str]) -> str:
        secret = match.group("secret").rstrip(".,;:")
        public = text[max(0, match.start() - 7) : match.start()].lower().endswith("public ")
        if public or secret.startswith("AAAA") or not _looks_random(secret):  # a public key, an SSH key blob
            return match.group()
        found.append(("secret", secret))
        start = match.start("secret") - match.start()
        return match.group()[:start] + MARK.format(kind="secret") + match.group()[start + len(secret) :]

    return _PROSE.sub(replace, text)


def _name_parts(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [part for part in re.split(r"[_.\-]+", spaced.lower()) if part]


def is_secret_name(name: str) -> bool:
    """Whether an assignment's name says its value is a secret (`GITHUB_TOKEN`, `apiKey`, `db-password`)."""
    parts = _name_parts(name)
    if not parts or parts[-1] in _NEUTRAL_LAST:
        return False
    if parts[-1] == "key" and len(parts) > 1:  # STRIPE_KEY, OPENAI_KEY, SECRET_KEY
        return parts[-2] not in {"primary", "sort", "partition", "cache", "foreign", "unique", "public", "hot", "map"}
    if any(part in _SECRET_PARTS for part in parts):
        return not (parts[-1] == "author" or parts == ["auth"])  # AUTH=github is a method, not a secret
    if any(word in "".join(parts) for word in _SECRET_WORDS):  # PGPASSWORD, GHTOKEN, SECRETKEY
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(parts, parts[1:], strict=False))


def _is_plain_value(value: str) -> bool:
    bare = value.strip("\"'").strip()
    if len(bare) < 3 or bare.startswith(("[REDACTED", "${{", "{{")):  # a template expression
        return True
    if bare.lower() in _PLACEHOLDER_WORDS or _REFERENCE.match(bare):
        return True
    return bool(re.fullmatch(r"[0-9]+(?:\.[0-9]+)?[smhd]?", bare))  # TOKEN_TTL=3600 is a number, not a secret


# Texts the rules left unchanged, so their redaction is themselves: a text redacted twice in
# one process (`learn` redacts what it plans, so `--dry-run` prints no secret, then the store
# redacts what it writes) costs the rules once. Only unchanged texts are kept, so the answer is
# the rules' own, byte for byte; only record-sized texts, bounded, and emptied when full.
_clean: set[str] = set()
_clean_chars = [0]
_CLEAN_MAX_TEXT = 4096  # a record's body is at most 2,000 characters (records.MAX_BODY_CHARS)
_CLEAN_MAX_TEXTS = 65_536
_CLEAN_MAX_CHARS = 16_000_000


def redact(text: str) -> Redaction:
    """Replace every secret in `text` with `[REDACTED:<kind>]`; idempotent."""
    if text in _clean:
        return Redaction(text=text, count=0, kinds=())
    result = _redact(text, prefilter=True)
    if not result.count and result.text == text and len(text) <= _CLEAN_MAX_TEXT:
        if len(_clean) >= _CLEAN_MAX_TEXTS or _clean_chars[0] + len(text) > _CLEAN_MAX_CHARS:
            _clean.clear()
            _clean_chars[0] = 0
        _clean.add(text)
        _clean_chars[0] += len(text)
    return result


def _redact(text: str, *, prefilter: bool) -> Redaction:
    """`redact`; `prefilter=False` tests each rule's literals one by one (the reference)."""
    found: list[tuple[str, str]] = []
    text = _private_keys(text, found)
    text = _url_passwords(text, found)

    def shape(kind: str) -> Callable[[re.Match[str]], str]:
        def replace(match: re.Match[str]) -> str:
            mark = MARK.format(kind=kind)
            if "secret" in match.re.groupindex and match.group("secret") is not None:
                found.append((kind, match.group("secret")))
                start, end = match.span("secret")
                whole_start = match.start()
                return match.group()[: start - whole_start] + mark + match.group()[end - whole_start :]
            found.append((kind, match.group()))
            return mark

        return replace

    for number in _due(_SHAPE_LITERALS, _SHAPE_HINTS, lambda: text, prefilter=prefilter):  # noqa: B023 - the text as it stands
        kind, pattern = _SHAPES[number]
        redacted = pattern.sub(shape(kind), text)
        if redacted != text:
            text = redacted
    text = _gitleaks(text, found, prefilter)

    def assignment(match: re.Match[str]) -> str:
        name, value = match.group("name"), match.group("value")
        if not is_secret_name(name) or _is_plain_value(value):
            return match.group()
        found.append(("secret-value", value))
        quote = value[0] if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1 else ""
        return f"{match.group('pre')}{match.group()[len(match.group('pre')) : match.start('value') - match.start()]}{quote}{MARK.format(kind='secret')}{quote}"

    if "=" in text or ":" in text or "--" in text:
        for pattern in _ASSIGNMENTS:
            text = pattern.sub(assignment, text)
    text = _prose(text, found)
    return Redaction(text=text, count=len(found), kinds=tuple(kind for kind, _ in found), found=tuple(found))


def _is_sequence(value: object) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, list | tuple)


def redact_value(value: Any) -> Any:
    """`value` with every string in it redacted (lists, tuples and dict values, recursively)."""
    if isinstance(value, str):
        return redact_text(value)
    if is_object(value):
        return {key: redact_value(item) for key, item in value.items()}
    if _is_sequence(value):
        return [redact_value(item) for item in value]
    return value


def redact_text(text: str) -> str:
    """`redact(text).text`: for callers that only need the clean text."""
    return redact(text).text
