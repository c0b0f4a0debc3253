"""What never reaches the memory's disk: one-time codes and passwords in messages.

A message like "Your verification code is 482913" is stored as "Your verification code is
[code]"; the rest of the message stays searchable. The patterns are deliberately greedy near
the words that announce a secret: masking a harmless number costs little, storing a live code
costs a lot.
"""

from __future__ import annotations

import re

MASK_CODE = "[code]"
MASK_PASSWORD = "[password]"  # noqa: S105 (the mask itself, not a secret)

# A word that announces a code, then (within a few words) the code: 4-10 digits, possibly
# split by a space or dash (123 456, 123-456), or a short mixed token like G-482913.
_CODE_WORDS = (
    r"code|codes|otp|pin|passcode|verification|verify|one[- ]time|2fa|token|security|"
    r"confirmation|login|sign[- ]in|authentication|auth|code\s+is|kod|código|code:"
)
_CODE = re.compile(
    rf"(?i)\b((?:{_CODE_WORDS})\b[^0-9\n]{{0,40}}?)((?:[A-Z]{{1,3}}-)?\d(?:[\s-]?\d){{3,9}})\b"
)
# A code before its announcement: "482913 is your verification code", "use 1234 as your PIN".
_CODE_FIRST = re.compile(
    rf"(?i)\b((?:[A-Z]{{1,3}}-)?\d(?:[\s-]?\d){{3,9}})(\s+(?:is|as)\s+your\b[^\n]{{0,30}}?(?:{_CODE_WORDS}))"
)
# "password: hunter2", "pwd is s3cr3t!", "mot de passe : xyz"
_PASSWORD = re.compile(
    r"(?i)\b((?:password|passwd|pwd|passphrase|mot de passe|contraseña|kennwort)\b"
    r"(?:\s*[:=]\s*|\s+(?:is|was)\s*:?\s*))(\S+)"
)


def mask_secrets(text: str) -> str:
    """`text` with one-time codes and passwords replaced by MASK_CODE / MASK_PASSWORD."""
    if not text:
        return text
    out = _PASSWORD.sub(lambda m: m.group(1) + MASK_PASSWORD, text)
    out = _CODE_FIRST.sub(lambda m: MASK_CODE + m.group(2), out)
    return _CODE.sub(lambda m: m.group(1) + MASK_CODE, out)
