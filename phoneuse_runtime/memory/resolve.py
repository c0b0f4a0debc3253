"""The keys by which one person is recognised across sources: phone numbers in E.164, emails
compared without case, and names kept as aliases.

A contact, an SMS sender and a calendar attendee are one person when they share a key; the
graph (store.py) looks keys up in its `keys` table, so a number written "+1 (555) 000-1111",
"5550001111" or "+15550001111" lands on the same node.
"""

from __future__ import annotations

import unicodedata

from phoneuse_runtime.util.numbers import digits

# phonenumbers is imported where it is used: it holds over a megabyte resident, and a server
# whose memory reads no number (ingest off, nothing asked) never needs it.

DEFAULT_REGION = "US"


def e164(number: str, region: str = DEFAULT_REGION) -> str | None:
    """The number in E.164 (`+15550001111`), read in `region` when it has no country code; None
    for what is not a possible phone number (short codes, sender names, empty strings)."""
    text = number.strip()
    if not text or not any(c.isdecimal() for c in text):
        return None
    import phonenumbers

    try:
        parsed = phonenumbers.parse(text, region.upper() or DEFAULT_REGION)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_possible_number(parsed):
        return None
    return phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)


def phone_key(number: str, region: str = DEFAULT_REGION) -> str | None:
    """The key of a number: `tel:` and its E.164 form, or `tel:` and its digits for a short code
    (a bank's 72345), so that two messages from one short code meet too; None without digits."""
    normal = e164(number, region)
    if normal is not None:
        return f"tel:{normal}"
    bare = digits(number)
    return f"tel:{bare}" if bare else None


def email_key(email: str) -> str | None:
    """Emails meet whatever their case: `email:` and the address folded."""
    text = email.strip()
    return f"email:{text.casefold()}" if "@" in text else None


def fold(text: str) -> str:
    """Case and accents folded, for comparing names: "Łukasz" and "ŁUKASZ" and "lukasz" meet
    where Unicode can strip the mark (ł has none, so it stays ł, as in the FTS index)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))
