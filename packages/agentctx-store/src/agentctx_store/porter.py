"""The Porter stemmer exactly as SQLite's FTS5 `porter` tokenizer applies it (fts5_tokenize.c).

`retrieval.visible_bm25` counts a candidate's words per query form itself; to count what FTS5
matched, a word must stem as FTS5 stems it. Words shorter than 3 or longer than 64 characters
are left as they are, as FTS5 leaves them. Pure functions of one lowercase word.
"""

from __future__ import annotations

_VOWELS = frozenset("aeiou")
MIN_CHARS, MAX_CHARS = 3, 64


def _consonant(word: str, index: int) -> bool:
    char = word[index]
    if char in _VOWELS:
        return False
    if char == "y":  # a vowel after a consonant (SQLite: bYIsVowel), a consonant first or after a vowel
        return index == 0 or not _consonant(word, index - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: how many vowel-consonant sequences `stem` holds."""
    count, index, length = 0, 0, len(stem)
    while index < length and _consonant(stem, index):
        index += 1
    while index < length:
        while index < length and not _consonant(stem, index):
            index += 1
        if index >= length:
            break
        while index < length and _consonant(stem, index):
            index += 1
        count += 1
    return count


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, index) for index in range(len(stem)))


def _double_consonant(stem: str) -> bool:
    """The same consonant twice at the end; "yy" counts (FTS5 checks the letter, not its place)."""
    return len(stem) >= 2 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS


def _cvc(stem: str) -> bool:
    """Consonant-vowel-consonant at the end, the last not w, x or y ("hop", not "snow")."""
    if len(stem) < 3:
        return False
    last = len(stem) - 1
    return (
        _consonant(stem, last)
        and not _consonant(stem, last - 1)
        and _consonant(stem, last - 2)
        and stem[-1] not in "wxy"
    )


_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("logi", "log"),
    ("bli", "ble"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
)
_STEP3 = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)
_STEP4 = (
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "ion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
)


_STEP2_LONGEST = tuple(sorted(_STEP2, key=lambda rule: -len(rule[0])))
_STEP3_LONGEST = tuple(sorted(_STEP3, key=lambda rule: -len(rule[0])))
_STEP4_LONGEST = tuple(sorted(_STEP4, key=len, reverse=True))
_STEP2_ENDINGS = tuple(suffix for suffix, _ in _STEP2)
_STEP3_ENDINGS = tuple(suffix for suffix, _ in _STEP3)
_STEP4_ENDINGS = tuple(_STEP4)


def _replace(word: str, rules: tuple[tuple[str, str], ...], least: int) -> str:
    """The longest rule suffix that ends `word` decides: it is replaced when the rest measures
    more than `least`, else the word stays as it is. `rules` run longest suffix first."""
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            return stem + replacement if _measure(stem) > least else word
    return word


def _ends(word: str, suffix: str) -> bool:
    return len(word) > len(suffix) and word.endswith(suffix)


def stem(word: str) -> str:
    """`word` (lowercase) as FTS5's porter tokenizer indexes it."""
    if not MIN_CHARS <= len(word) <= MAX_CHARS:
        return word
    # Step 1a (each suffix only with something before it, as FTS5 matches them)
    if _ends(word, "sses") or _ends(word, "ies"):
        word = word[:-2]
    elif _ends(word, "s") and not word.endswith("ss"):
        word = word[:-1]
    # Step 1b
    extra = False
    if _ends(word, "eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    elif _ends(word, "ed") and _has_vowel(word[:-2]):
        word, extra = word[:-2], True
    elif _ends(word, "ing") and _has_vowel(word[:-3]):
        word, extra = word[:-3], True
    if extra:
        if word.endswith(("at", "bl", "iz")):
            word += "e"
        elif _double_consonant(word) and word[-1] not in "lsz":
            word = word[:-1]
        elif _measure(word) == 1 and _cvc(word):
            word += "e"
    # Step 1c
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    if word.endswith(_STEP2_ENDINGS):
        word = _replace(word, _STEP2_LONGEST, 0)
    if word.endswith(_STEP3_ENDINGS):
        word = _replace(word, _STEP3_LONGEST, 0)
    # Step 4
    for suffix in _STEP4_LONGEST if word.endswith(_STEP4_ENDINGS) else ():
        if word.endswith(suffix):
            rest = word[: len(word) - len(suffix)]
            if _measure(rest) > 1 and (suffix != "ion" or rest.endswith(("s", "t"))):
                word = rest
            break
    # Step 5a
    if word.endswith("e"):
        rest = word[:-1]
        measure = _measure(rest)
        if measure > 1 or (measure == 1 and not _cvc(rest)):
            word = rest
    # Step 5b
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word
