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


def _code_words(text: str) -> list[tuple[int, int]]:
    """Where the code words of `text` are (start, end), in order; those that name no secret
    ("zip code") left out."""
    found = []
    for word in _KEYWORD.finditer(text):
        if _NOT_SECRET_BEFORE.search(text, max(0, word.start() - 16), word.start()):
            continue
        if _NOT_SECRET_AFTER.match(text, word.end(), word.end() + 8):
            continue
        found.append(word.span())
    return found


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


def mask_secrets(text: str) -> str:
    """`text` with one-time codes and passwords replaced by MASK_CODE / MASK_PASSWORD (the
    module docstring gives the rule). Linear in the text's length."""
    if not text or (not any(c.isdigit() for c in text) and _PASSWORD.search(text) is None):
        return text
    out = _PASSWORD.sub(lambda m: m.group(1) + MASK_PASSWORD, text)
    pieces: list[str] = []
    last = 0
    words: list[tuple[int, int]] | None = None
    starts: list[int] = []
    for found in _CODE.finditer(out):
        if words is None:
            words = _code_words(out)
            starts = [w[0] for w in words]
        if _announced(out, words, starts, found.start(), found.end()):
            pieces.append(out[last : found.start()])
            pieces.append(MASK_CODE)
            last = found.end()
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
