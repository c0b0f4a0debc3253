"""The one matcher for picking a thing by name: exact, else a unique prefix, else suggestions."""

from __future__ import annotations

import pytest

from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.util.names import closest_names, match_name

NAMES = ["Alice Johnson", "Bob Smith", "Bobby Tables", "Carol Diaz", "Mom", "mom"]


def pick(wanted: str, names: list[str] = NAMES) -> str:
    return match_name(
        names,
        wanted,
        name_of=lambda n: n,
        kind="thing",
        candidate=lambda n: {"name": n},
        hint="try harder",
    )


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        ("Alice Johnson", "Alice Johnson"),
        ("  alice JOHNSON ", "Alice Johnson"),
        ("ali", "Alice Johnson"),
        ("bob smith", "Bob Smith"),
        ("bobb", "Bobby Tables"),
    ],
)
def test_exact_else_a_unique_prefix(wanted: str, expected: str) -> None:
    assert pick(wanted) == expected


def test_an_exact_name_beats_longer_names_it_prefixes() -> None:
    assert pick("bob", ["Bob", "Bobby Tables"]) == "Bob"


@pytest.mark.parametrize(
    ("wanted", "candidates"),
    [("bob", ["Bob Smith", "Bobby Tables"]), ("MOM", ["Mom", "mom"]), ("", NAMES)],
)
def test_several_matches_list_the_candidates(wanted: str, candidates: list[str]) -> None:
    with pytest.raises(InvalidParams) as raised:
        pick(wanted)
    assert raised.value.message.startswith(f"{wanted!r} matches several things: ")
    assert raised.value.message.endswith("; be more specific")
    assert raised.value.details == {"candidates": [{"name": n} for n in candidates]}


@pytest.mark.parametrize(
    ("wanted", "suggestions", "said"),
    [
        ("Alcie", ["Alice Johnson"], "did you mean 'Alice Johnson'?"),
        ("Bob Smyth", ["Bob Smith"], "did you mean 'Bob Smith'?"),
        ("Bobbi", ["Bobby Tables", "Bob Smith"], "did you mean 'Bobby Tables' or 'Bob Smith'?"),
        ("Caroll Diaz", ["Carol Diaz"], "did you mean 'Carol Diaz'?"),
        ("Zelda", [], ""),
    ],
)
def test_no_match_is_invalid_params_with_the_closest_names(
    wanted: str, suggestions: list[str], said: str
) -> None:
    with pytest.raises(InvalidParams) as raised:
        pick(wanted)
    assert raised.value.code == "INVALID_PARAMS"
    assert raised.value.details == {"suggestions": suggestions}
    expected = f"no thing named {wanted!r}" + (f"; {said}" if said else "") + "; try harder"
    assert raised.value.message == expected


def test_nothing_to_pick_from() -> None:
    with pytest.raises(InvalidParams) as raised:
        pick("Alice", [])
    assert raised.value.details == {"suggestions": []}


def test_closest_names_ignore_case_and_keep_at_most_three() -> None:
    names = ["Chrome", "Chromium", "chrome beta", "Chromecast", "Clock"]
    found = closest_names(names, "CHROMEE")
    assert len(found) == 3
    assert found[0] == "Chrome"
    assert "Clock" not in found


def test_closest_names_name_each_name_once() -> None:
    assert closest_names(["Mom Mom"], "mum") == ["Mom Mom"]
    assert closest_names(["Mom", "Mom"], "mum") == ["Mom"]
