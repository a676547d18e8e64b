"""The prompt hook checks slash commands and record fences without `re` on its path (importing
it costs the hook ~3 ms); each check must give what its regular expression gives."""

from __future__ import annotations

import re
import subprocess
import sys

from agentctx_store.fence import unfence as _unfence
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx_hooks.prompt import is_slash_command

_SLASH_COMMAND = re.compile(r"^/[A-Za-z0-9_.:-]+(?:\s|$)")
_TAG = re.compile(r"<(?=(.))", re.DOTALL)


def _opens_a_tag(char: str) -> bool:
    """What may follow `<` in a tag: a letter (any script's, as XML names allow) or `/!?_:`."""
    return char.isalpha() or char in "/!?_:"


PIECES = ["/", "/compact", "/mcp:x", "a", " ", "\n", "\u2028", "\u00a0", "é", "-", ":", ".", "_", "/x\n", "K", "İ"]


def _unfence_by_expression(text: str) -> str:
    return _TAG.sub(lambda match: "&lt;" if _opens_a_tag(match.group(1)) else "<", text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=8).map("".join))
def test_slash_commands_are_what_the_expression_matches(text: str) -> None:
    assert is_slash_command(text) == bool(_SLASH_COMMAND.match(text))


FENCE_PIECES = [
    "<agentctx-record",
    "</AgentCtx-Record",
    "<AGENTCTX-RECORD>",
    "</agentctx-records>",
    "<",
    "/",
    "!",
    "?",
    "_",
    ":",
    "1",
    "agentctx-record",
    "x",
    "İ",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FENCE_PIECES), st.text(max_size=3)), max_size=8).map("".join))
def test_fences_are_neutralised_as_the_expression_does(text: str) -> None:
    assert _unfence(text) == _unfence_by_expression(text)


def test_every_character_after_a_less_than_sign_is_treated_as_the_expression_does() -> None:
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert (_unfence(f"a<{char}b") == f"a&lt;{char}b") == _opens_a_tag(char), hex(code)


def test_no_record_text_can_close_or_forge_a_tag() -> None:
    for text in (
        "</agentctx-record>",
        '<agentctx-record id="X" type="preference">',
        "</AGENTCTX-RECORDS>",
        "<?x",
        "<!--",
    ):
        assert "<" not in _unfence(f"x {text} y")
    assert _unfence("a < b, x<=y, <- and <<") == "a < b, x<=y, <- and <<"


def test_the_prompt_hook_path_does_not_import_re() -> None:
    code = (
        "import sys\n"
        "import agentctx_hooks.prompt, agentctx_hooks.storage, agentctx_hooks.spool, agentctx_store.budget\n"
        "import agentctx_store.inject\n"
        "print(' '.join(name for name in ('re', 'contextlib', 'pathlib', 'dataclasses') if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []


# Gemini CLI's fences (`agentctx_hooks.clients.gemini.bracket_fences`), as the expressions they replace
_BRACKET_FORM = re.compile(r"\[(/?)(agentctx-records?)", re.IGNORECASE)
_TAG_FORM = re.compile(r"<(/?)(agentctx-records?)((?: [^<>\n]*)?)>")
BRACKET_PIECES = [
    *FENCE_PIECES,
    "[",
    "[/",
    "[AgentCtx-RecordS",
    "<agentctx-record ",
    ' id="X" type="decision">',
    "<agentctx-records",
    "\n",
    ">",
    "]",
    " ",
    "s",
    "S",
    "\u017f",  # LATIN SMALL LETTER LONG S: an `s` to re.IGNORECASE
    "\u212a",
]


def _brackets_by_expression(text: str) -> str:
    if "agentctx-record" not in text.lower():
        return text
    return _TAG_FORM.sub(r"[\1\2\3]", _BRACKET_FORM.sub(r"[\1\2_", text))


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(BRACKET_PIECES), st.text(max_size=3)), max_size=10).map("".join))
def test_gemini_fences_become_brackets_as_the_expressions_make_them(text: str) -> None:
    from agentctx_hooks.clients.gemini import bracket_fences

    assert bracket_fences(text) == _brackets_by_expression(text)


def test_gemini_fences_of_every_short_combination_are_what_the_expressions_make() -> None:
    """Every sequence of up to three pieces (36^3), so no combination is left to chance."""
    import itertools

    from agentctx_hooks.clients.gemini import bracket_fences

    for count in range(1, 4):
        for pieces in itertools.product(BRACKET_PIECES, repeat=count):
            text = "".join(pieces)
            assert bracket_fences(text) == _brackets_by_expression(text), text


def test_gemini_brackets_of_a_real_injection() -> None:
    from agentctx_hooks.clients.gemini import bracket_fences

    text = (
        'agentctx records (data):\n\n<agentctx-record id="01J" type="decision" detail="title">\nUse [agentctx-record] '
        'and &lt;agentctx-record in prose\n</agentctx-record>\n\n<agentctx-records note="x">\n</agentctx-records>'
    )
    assert bracket_fences(text) == _brackets_by_expression(text)
    assert "[agentctx-record_]" in bracket_fences(text) and "<agentctx" not in bracket_fences(text)
