"""Picking one thing by the name a person gave it: contacts, apps, anything with a display name.

One rule and one error code everywhere: the name, ignoring case, exactly, else a unique prefix.
Anything else is INVALID_PARAMS, listing the candidates when several match and the closest
names when none does, so the caller can correct itself in one step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from phoneuse_runtime.kernel.errors import InvalidParams

T = TypeVar("T")

SUGGESTIONS = 3


def closest_names(names: Sequence[str], wanted: str) -> list[str]:
    """Up to three names most like `wanted`, best first, ignoring case; a name's single words
    count too, so a misspelt first name ("Alcie") finds the full name ("Alice Johnson")."""
    by_key: dict[str, list[str]] = {}
    for name in names:
        folded = name.casefold()
        for key in {folded, *folded.split()}:
            by_key.setdefault(key, []).append(name)
    found: list[str] = []
    import difflib  # here: only a miss needs it

    for key in difflib.get_close_matches(wanted.strip().casefold(), list(by_key), n=max(1, len(by_key))):
        found.extend(n for n in by_key[key] if n not in found)
    return found[:SUGGESTIONS]


def match_name(
    items: Sequence[T],
    wanted: str,
    *,
    name_of: Callable[[T], str],
    kind: str,
    candidate: Callable[[T], Mapping[str, object]],
    shown: Callable[[T], str] | None = None,
    hint: str = "",
) -> T:
    """The one item named `wanted`, ignoring case: exact, else a unique prefix.

    `kind` names the items in messages ("contact"); `candidate` is an ambiguous match as the
    error's details list it, `shown` as its message does (default: its name); `hint` tells how
    else to say what is wanted when nothing matches."""
    folded = wanted.strip().casefold()
    exact = [i for i in items if name_of(i).casefold() == folded]
    matches = exact or [i for i in items if name_of(i).casefold().startswith(folded)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        listed = ", ".join(sorted((shown or name_of)(i) for i in matches))
        raise InvalidParams(
            f"{wanted!r} matches several {kind}s: {listed}; be more specific",
            details={"candidates": [dict(candidate(i)) for i in matches]},
        )
    suggestions = closest_names([name_of(i) for i in items], wanted)
    message = f"no {kind} named {wanted!r}"
    if suggestions:
        message += f"; did you mean {' or '.join(repr(s) for s in suggestions)}?"
    if hint:
        message += f"; {hint}"
    raise InvalidParams(message, details={"suggestions": suggestions})
