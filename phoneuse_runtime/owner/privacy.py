"""The one masking rule for message text the runtime keeps on disk: one-time codes and passwords.

Every store that keeps what a message said applies `mask_secrets` before the text is written:
the memory (an SMS's or a notification's text, memory/ingest.py), each paired device's outbox
(gateway/outbox.py: the copies kept for `sync`), the chat's messages (gateway/chat/store.py),
and NATS (nats/sink.py: every event's payload before JetStream and the spool have it);
`mask_values` applies it to each text of an event's payload.
"Your verification code is 482913" is stored as "Your verification code is [code]"; the rest of
the message stays searchable.

The rule. A *code* is 4 to 12 digits, possibly in groups split by one space or dash ("839 201",
"4839 2214 5566", "G-482913"), that no other digit, letter, currency sign, decimal point or
colon touches (so "12:30", "$1299", "1.299,00" and "14.5" are never codes). A code is masked when
a *code word* stands in the same line within WINDOW characters before or after it: "code",
"OTP", "PIN", "password", "verification", "log in", ... in English, Spanish, Portuguese, French,
German, Russian, Chinese, Hindi (and a few words of Japanese, Korean and Arabic), in any case,
also inside compounds ("Bestätigungscode", "验证码"). "zip code", "area code", "postal code"
and the like are not code words.

The trade-off, deliberately on the side of masking: masking a harmless number costs the owner a
little (an order number beside "confirmation code", a phone number in the same line as a PIN),
storing a live code costs a lot. A number with no code word near it (a time, a price, a phone
number, a date in ordinary chat) is kept as it is. Codes made of mixed letters and digits
("X7K9P2") are not recognised unless a letter prefix and a dash lead the digits ("G-482913").
Passwords are masked after "password:", "pwd is", "mot de passe :", "contraseña:", ...
"""

from __future__ import annotations

import bisect
import re

MASK_CODE = "[code]"
MASK_PASSWORD = "[password]"  # noqa: S105 (the mask itself, not a secret)
# How far (in characters, within one line) a code word reaches to the code it announces.
WINDOW = 48

# Words that announce a code, matched anywhere inside a word (so compounds count).
_INSIDE_WORDS = (
    # English
    "code",
    "passcode",
    "password",
    "passphrase",
    "verification",
    "verify",
    "one-time",
    "one time",
    "authenticat",
    "log in",
    "log-in",
    "login",
    "sign in",
    "sign-in",
    "signin",
    # Spanish, Portuguese
    "código",
    "codigo",
    "clave",
    "contraseña",
    "verificaci",
    "verificaç",
    "autenticaci",
    "autenticaç",
    "senha",
    "iniciar sesi",
    "inicio de sesi",
    # French
    "mot de passe",
    "vérification",
    "authentification",
    "connexion",
    # German
    "passwort",
    "kennwort",
    "bestätigung",
    "einmal",
    "anmeld",
    "verifizierung",
    # Russian
    "код",
    "пароль",
    "парол",
    "подтвержд",
    "верификац",
    "одноразов",
    "вход",
    # Chinese, Japanese, Korean
    "码",
    "碼",
    "验证",
    "驗證",
    "口令",
    "登录",
    "登錄",
    "コード",
    "パスワード",
    "認証",
    "인증",
    "비밀번호",
    # Hindi
    "कोड",
    "ओटीपी",
    "पासवर्ड",
    "सत्यापन",
    "पिन",
    # Arabic
    "رمز",
    "كود",
)
# Short words that announce a code only as words of their own ("PIN", not "shopping").
_WHOLE_WORDS = ("pin", "otp", "tan", "mtan", "2fa", "auth", "token", "kod", "pwd")

_KEYWORD = re.compile(
    "|".join(
        [re.escape(w) for w in sorted(_INSIDE_WORDS, key=len, reverse=True)]
        + [rf"(?<![^\W\d_]){re.escape(w)}(?![^\W\d_])" for w in _WHOLE_WORDS]
    ),
    re.IGNORECASE,
)
# "zip code 94110", "area code 415": a code word that names no secret.
_NOT_SECRET_BEFORE = re.compile(
    r"(?:zip|postal|post|area|country|dial(?:ling)?|dialing|bar|qr|source|promo|discount|coupon)[\s-]*$",
    re.IGNORECASE,
)
_NOT_SECRET_AFTER = re.compile(r"^(?:\s+postal|\s+postal\b|\s+post)", re.IGNORECASE)  # código postal

_SEP = r"[ \-\u00a0\u2009\u202f]"
# A code: 4-12 digits in groups split by one separator, optionally after a letter prefix and a
# dash; nothing touching it that makes it a time, a price, a decimal or part of a longer token.
_CODE = re.compile(
    r"(?<!\d)(?<![0-9A-Za-z_$€£¥₹₽.,:/#+\-])"
    rf"(?:[A-Za-z]{{1,3}}-)?\d(?:{_SEP}?\d){{3,11}}"
    r"(?![0-9A-Za-z_%€£¥₹₽]|\d|[.,:/]\d)"
)
# "password: hunter2", "pwd is s3cr3t!", "mot de passe : xyz", "contraseña: abc", "senha: abc"
_PASSWORD = re.compile(
    r"(?i)((?<![^\W\d_])(?:password|passwd|pwd|passphrase|passwort|kennwort|mot de passe|"
    r"contraseña|senha|пароль|密码|पासवर्ड)(?![^\W\d_])"
    r"(?:\s*[:=\uff1a]\s*|\s+(?:is|was|es|é|est|ist|:)\s*:?\s*))(\S+)"
)


# The longest code word: how far before a window a word may start and still reach into it.
_LONGEST_WORD = max(len(w) for w in (*_INSIDE_WORDS, *_WHOLE_WORDS))
# What a code needs: four digits in a run split by single separators. Found first (the scan
# starts at digits only, so it is quick), and `_CODE` judged only around each run.
_RUN = re.compile(rf"\d(?:{_SEP}?\d){{3,}}")
# A password's words, found with str.find in the folded text before `_PASSWORD` runs at all.
_PASSWORD_WORDS = (
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "passwort",
    "kennwort",
    "mot de passe",
    "contraseña",
    "senha",
    "пароль",
    "密码",
    "पासवर्ड",
)
# The letters whose case `re.IGNORECASE` folds but str.lower does not (or not in one character):
# dotted capital I, dotless i, long s, the Kelvin sign.
_FOLDS = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))


def _folded(text: str) -> str | None:
    """`text` in lower case, character for character (None when lowering changes its length)."""
    if not text.isascii():
        for upper, lower in _FOLDS:
            if upper in text:
                text = text.replace(upper, lower)
    low = text.lower()
    return low if len(low) == len(text) else None


_NEAR = 64  # runs closer than this are read by one `_CODE` scan


def _codes(text: str) -> list[tuple[int, int]]:
    """Where `_CODE` matches in `text`, as a scan of the whole text would find them, but read
    only around the runs of four digits (a code's prefix is at most 4 characters before its
    run; `_CODE`'s look-ahead reads at most 2 after)."""
    regions: list[list[int]] = []
    for run in _RUN.finditer(text):
        lo, hi = run.start() - 4, run.end() + 2
        if regions and lo - regions[-1][1] < _NEAR:  # one scan over both costs less than two
            regions[-1][1] = hi
        else:
            regions.append([max(0, lo), hi])
    spans: list[tuple[int, int]] = []
    last = 0
    for lo, hi in regions:
        for code in _CODE.finditer(text, max(last, lo), hi):
            spans.append(code.span())
            last = code.end()
    return spans


# `_KEYWORD`'s alternatives in its order (at one place the first that matches wins), and how
# many of them match inside words.
_ALTERNATIVES = (*sorted(_INSIDE_WORDS, key=len, reverse=True), *_WHOLE_WORDS)
_INSIDE_COUNT = len(_INSIDE_WORDS)


def _letter(text: str, at: int) -> bool:
    """Whether text[at] is a letter as `[^\\W\\d_]` says (outside the text: no)."""
    if at < 0 or at >= len(text):
        return False
    c = text[at]
    return c.isalnum() and not c.isdecimal()


def _word_spans(text: str, folded: str | None, start: int, end: int) -> list[tuple[int, int]]:
    """What `_KEYWORD.finditer(text, start, end)` finds, as spans. With the folded text (same
    length, lower case) each word is found with str.find and the regex's choices are made
    by hand (leftmost; at one place, the first alternative; none overlapping): one pass of
    C code per word instead of the alternation tried at every character."""
    if folded is None:
        return [m.span() for m in _KEYWORD.finditer(text, start, end)]
    found: list[tuple[int, int, int]] = []
    for rank, word in enumerate(_ALTERNATIVES):
        size = len(word)
        at = folded.find(word, start, end)
        while at >= 0:
            whole = rank < _INSIDE_COUNT or not (_letter(text, at - 1) or _letter(text, at + size))
            if whole:
                found.append((at, rank, at + size))
            at = folded.find(word, at + 1, end)
    found.sort()
    spans: list[tuple[int, int]] = []
    for at, _rank, stop in found:
        if not spans or at >= spans[-1][1]:
            spans.append((at, stop))
    return spans


def _code_words(text: str, regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Where the code words of `text` are (start, end), in order, among those that start or
    end inside `regions` (sorted, apart); those that name no secret ("zip code") left out."""
    folded = _folded(text)
    found: list[tuple[int, int]] = []
    for lo, hi in regions:
        start = max(0, lo - _LONGEST_WORD)
        for word_start, word_end in _word_spans(text, folded, start, min(len(text), hi + _LONGEST_WORD + 1)):
            if word_start >= hi or (found and word_start < found[-1][1]):
                continue
            if _NOT_SECRET_BEFORE.search(text, max(0, word_start - 16), word_start):
                continue
            if _NOT_SECRET_AFTER.match(text, word_end, word_end + 8):
                continue
            found.append((word_start, word_end))
    return found


def _windows(text: str, codes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The stretches of `text` within WINDOW characters of a code, merged where they meet."""
    merged: list[tuple[int, int]] = []
    for start, end in codes:
        lo, hi = max(0, start - WINDOW), min(len(text), end + WINDOW)
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _announced(text: str, words: list[tuple[int, int]], starts: list[int], start: int, end: int) -> bool:
    """Whether a code word stands within WINDOW characters of text[start:end], in its line."""
    lo = max(0, start - WINDOW)
    hi = min(len(text), end + WINDOW)
    newline = text.rfind("\n", lo, start)
    if newline >= 0:
        lo = newline + 1
    newline = text.find("\n", end, hi)
    if newline >= 0:
        hi = newline
    # The words that start before the window's end; the last of them ends past its start?
    i = bisect.bisect_left(starts, hi)
    while i > 0:
        i -= 1
        word_start, word_end = words[i]
        if word_end <= lo:
            return False
        if word_end <= start or word_start >= end:
            return True
    return False


def _has_password_word(text: str) -> bool:
    folded = _folded(text)
    return folded is None or any(word in folded for word in _PASSWORD_WORDS)


def mask_secrets(text: str) -> str:
    """`text` with one-time codes and passwords replaced by MASK_CODE / MASK_PASSWORD (the
    module docstring gives the rule). Linear in the text's length, and quick on long texts:
    the regexes with many alternatives run only where a code's digits or a password's word
    are (bench/bench_masking.py)."""
    if not text:
        return text
    out = _PASSWORD.sub(lambda m: m.group(1) + MASK_PASSWORD, text) if _has_password_word(text) else text
    codes = _codes(out)
    if not codes:
        return out
    # Codes so many that their windows would cover the text: the whole text is read at once.
    dense = len(codes) * 2 * WINDOW >= len(out)
    words = _code_words(out, [(0, len(out))] if dense else _windows(out, codes))
    if not words:
        return out
    starts = [w[0] for w in words]
    pieces: list[str] = []
    last = 0
    for start, end in codes:
        if _announced(out, words, starts, start, end):
            pieces.append(out[last:start])
            pieces.append(MASK_CODE)
            last = end
    if not pieces:
        return out
    pieces.append(out[last:])
    return "".join(pieces)


# Keys whose texts are the server's own (ids, references, digests), never a message's words.
_OWN_KEYS = ("id", "ids", "_ref", "sha256")


def mask_values(value: object, key: str = "") -> object:
    """`value` (parsed JSON: an event's payload) with `mask_secrets` applied to every text in
    it, however deep, except those under a key of the server's own (ids, references, digests)."""
    if isinstance(value, str):
        return value if key.endswith(_OWN_KEYS) else mask_secrets(value)
    if isinstance(value, dict):
        return {k: mask_values(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_values(v, key) for v in value]
    return value
