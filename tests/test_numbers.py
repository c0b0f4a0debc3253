"""The one rule for comparing phone numbers."""

from __future__ import annotations

import pytest

from phoneuse_runtime.util.numbers import MIN_MATCH, digits, same_number


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        ("+1 (415) 555-0101", "14155550101"),
        ("06.12.34.56.78", "0612345678"),
        ("*#06#", "06"),
        ("٠٦١٢٣٤٥٦٧٨", "0612345678"),  # Arabic-Indic digits, as some keyboards type them
        ("", ""),
        ("Alice", ""),
    ],
)
def test_digits(number: str, expected: str) -> None:
    assert digits(number) == expected


SAME = [
    ("+1 415 555 0101", "+14155550101"),  # formatting
    ("+1 (415) 555-0101", "1.415.555.0101"),  # + or not
    ("+1 415 555 0101", "415 555 0101"),  # without the country code
    ("+1 415 555 0101", "555 0101"),  # a local number: seven digits
    ("+33 6 12 34 56 78", "06 12 34 56 78"),  # the national form's trunk 0
    ("0033 6 12 34 56 78", "06 12 34 56 78"),  # 00 for +
    ("+33 6 12 34 56 78", "0033612345678"),
    ("+44 20 7946 0958", "020 7946 0958"),
    ("+44 (0)20 7946 0958", "020 7946 0958"),
    ("72345", "72 345"),  # a short code equals itself
    ("112", "112"),
]

DIFFERENT = [
    ("+1 415 555 0101", "+1 515 555 0101"),  # the same last nine digits, another area
    ("+1 415 555 0101", "+44 415 555 0101"),  # the same last ten digits, another country
    ("+33 6 12 34 56 78", "+33 6 12 34 56 79"),
    ("06 12 34 56 78", "07 12 34 56 78"),
    ("06 12 34 56 78", "46 12 34 56 78"),  # equal lengths must be equal digits
    ("12345", "112345"),  # short codes are never suffixes of each other
    ("72345", "172345"),
    ("555 010", "+1 415 555 010"),  # six digits identify nothing
    ("0 555 010", "+1 415 555 010"),  # nor do six after the trunk 0
    ("", ""),  # no digits, no number
    ("", "+1 415 555 0101"),
    ("Alice", "Alice"),
    ("+", "+"),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_same(a: str, b: str) -> None:
    assert same_number(a, b)
    assert same_number(b, a)


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different(a: str, b: str) -> None:
    assert not same_number(a, b)
    assert not same_number(b, a)


def test_min_match_is_androids() -> None:
    assert MIN_MATCH == 7
    assert same_number("1234567", "91234567")
    assert not same_number("123456", "9123456")
