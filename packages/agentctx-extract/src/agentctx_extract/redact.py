"""Secrets never leave the machine nor enter the store: redaction before the API call and before a write.

Two kinds of rule, applied in this order:

1. **Known shapes**, anywhere in the text: provider keys and tokens whose format identifies them
   (Anthropic `sk-ant-…`, OpenAI `sk-…`/`sk-proj-…`, AWS `AKIA…`, GitHub `ghp_…`/`github_pat_…`,
   GitLab `glpat-…`, Slack `xox…`, Stripe `sk_live_…`, Google `AIza…`, JWTs, private key blocks,
   the password part of `scheme://user:password@host`, `Bearer`/`Basic` credentials).
2. **Secret names**: the value of an assignment (`.env` line, `export`, YAML/JSON key, HTTP
   header, `--flag value`) whose *name* says it holds a secret (`…_TOKEN`, `…SECRET…`,
   `…PASSWORD`, `API_KEY`, a name ending in `KEY`, …), unless the name ends in a neutral part
   (`_URL`, `_PATH`, `_FILE`, `_TTL`, …) or the value is a reference (`$VAR`, `${VAR}`), a
   placeholder, a boolean or a bare number.

What stays, on purpose: a random-looking value under a neutral name (`COMMIT=9fceb02…`,
`NODE_ENV=production`), hashes, UUIDs and base64 in running text. Guessing secrets by entropy
alone mangles commit ids and checksums, which the extraction needs far more often than it
meets an unlabelled secret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MARK = "[REDACTED:{kind}]"

# (kind, pattern). Whole match replaced unless the pattern has a group named `secret`.
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\sA-Za-z0-9+/=:,\\-]*)",
            re.DOTALL,
        ),
    ),
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
    (
        "url-password",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@\"'<>\[\]]*:(?P<secret>(?!\[REDACTED)[^\s@/\"'<>]+)@"),
    ),
    ("bearer-token", re.compile(r"\b(?:Bearer|Token)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})")),
    ("cli-credentials", re.compile(r"(?<!\S)(?:-u|--user)[ \t]+[^\s:]+:(?P<secret>(?!\[REDACTED)[^\s'\"]+)")),
    (
        "cli-credentials",
        re.compile(r"\bmysql(?:dump|admin)?\b[^\n]*?[ \t]-p(?P<secret>(?!\[REDACTED)[^\s'\"-][^\s'\"]*)"),
    ),
    ("basic-auth", re.compile(r"\bBasic\s+(?P<secret>[A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])")),
)

# a literal each shape's match must contain: most text has none of them, and a substring test
# is far cheaper than a regex scan, so the scan is skipped (keeps redaction linear and quick)
_HINTS: dict[str, tuple[str, ...]] = {
    "private-key": ("PRIVATE KEY",),
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
    "url-password": ("://",),
    "bearer-token": ("Bearer", "Token"),
    "cli-credentials": ("-u", "--user", "mysql"),
    "basic-auth": ("Basic",),
}

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

_NAME = r"[A-Za-z_][A-Za-z0-9_.-]*"
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


@dataclass(frozen=True, kw_only=True)
class Redaction:
    text: str
    count: int
    kinds: tuple[str, ...]


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
    if len(bare) < 3 or bare.startswith("[REDACTED"):
        return True
    if bare.lower() in _PLACEHOLDER_WORDS or _REFERENCE.match(bare):
        return True
    return bool(re.fullmatch(r"[0-9]+(?:\.[0-9]+)?[smhd]?", bare))  # TOKEN_TTL=3600 is a number, not a secret


def redact(text: str) -> Redaction:
    """Replace every secret in `text` with `[REDACTED:<kind>]`; idempotent."""
    kinds: list[str] = []

    def shape(kind: str) -> object:
        def replace(match: re.Match[str]) -> str:
            kinds.append(kind)
            mark = MARK.format(kind=kind)
            if "secret" in match.re.groupindex and match.group("secret") is not None:
                start, end = match.span("secret")
                whole_start = match.start()
                return match.group()[: start - whole_start] + mark + match.group()[end - whole_start :]
            return mark

        return replace

    for kind, pattern in _SHAPES:
        if any(hint in text for hint in _HINTS[kind]):
            text = pattern.sub(shape(kind), text)  # type: ignore[arg-type]

    def assignment(match: re.Match[str]) -> str:
        name, value = match.group("name"), match.group("value")
        if not is_secret_name(name) or _is_plain_value(value):
            return match.group()
        kinds.append("secret-value")
        quote = value[0] if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1 else ""
        return f"{match.group('pre')}{match.group()[len(match.group('pre')) : match.start('value') - match.start()]}{quote}{MARK.format(kind='secret')}{quote}"

    for pattern in _ASSIGNMENTS:
        text = pattern.sub(assignment, text)
    return Redaction(text=text, count=len(kinds), kinds=tuple(kinds))


def redact_text(text: str) -> str:
    """`redact(text).text`: for callers that only need the clean text."""
    return redact(text).text
