"""Whether two phone numbers are the same: the one rule for actions, queries and the simulator.

In the spirit of Android's `PhoneNumberUtils.compare` (loose): stores keep numbers in whatever
form they were typed, so "+33 6 12 34 56 78", "0033612345678" and "06 12 34 56 78" must match,
while "+1 415 555 0101" and "+1 515 555 0101" must not. A suffix rule is not an equivalence
(it is not transitive), so there is no key to group by; compare with `same_number` instead.
"""

from __future__ import annotations

# Fewer trailing digits than this identify nothing (Android's MIN_MATCH); short codes must be equal.
MIN_MATCH = 7


def digits(number: str) -> str:
    """The number's digits alone, as ASCII: no +, spaces, dashes, brackets, dots, * or #."""
    return "".join(str(int(c)) for c in number if c.isdecimal())


def same_number(a: str, b: str) -> bool:
    """Equal digits; otherwise the longer ends with the shorter, less a national trunk prefix 0,
    on at least `MIN_MATCH` digits. Numbers without digits are never the same.

    The longer one's extra leading digits stand for a country code (or 00 and a country code),
    which the digits alone cannot check."""
    da, db = digits(a), digits(b)
    if not da or not db:
        return False
    if da == db:
        return True
    shorter, longer = sorted((da, db), key=len)
    tail = shorter.removeprefix("0")
    return len(longer) > len(shorter) and len(tail) >= MIN_MATCH and longer.endswith(tail)


def valid_region(region: str) -> bool:
    """Whether `region` is a two-letter region phonenumbers knows (US, GB, FR, ...): the region
    national numbers are read in (settings' memory_default_region, a SIM's country)."""
    if region.upper() == "US":  # the default: no need to load phonenumbers' tables for it
        return True
    import phonenumbers

    return region.upper() in phonenumbers.SUPPORTED_REGIONS
