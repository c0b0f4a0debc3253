"""Validated params are reused for the same wire params, where nothing can tell the difference."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import AfterValidator, Field, field_validator

from phoneuse_runtime.kernel import params as params_module
from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.kernel.params import RECENT_PARAMS_CHARS, RECENT_PARAMS_ENTRIES, Params, parse_params


class Plain(Params):
    text: str = Field(max_length=10)
    count: int = 0
    mode: Literal["a", "b"] = "a"


class Checked(Params):
    text: str

    @field_validator("text")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


class WithAfter(Params):
    text: Annotated[str, AfterValidator(str.upper)]


class Listed(Params):
    tags: list[str] = Field(default_factory=list)


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    params_module._recent.clear()


def test_the_same_params_of_a_plain_model_are_validated_once() -> None:
    first = parse_params(Plain, {"text": "x", "count": "2"})
    assert parse_params(Plain, {"text": "x", "count": "2"}) is first
    assert parse_params(Plain, {"text": "y", "count": "2"}) is not first
    # In another order: another entry, and the same params.
    assert parse_params(Plain, {"count": "2", "text": "x"}) == first


def test_models_with_validators_or_mutable_values_are_validated_every_time() -> None:
    for model, raw in ((Checked, {"text": "x"}), (WithAfter, {"text": "x"}), (Listed, {"tags": "a,b"})):
        first = parse_params(model, raw)
        again = parse_params(model, raw)
        assert again == first and again is not first, model.__name__
    checked = parse_params(Checked, {"text": "x"})
    assert isinstance(checked, Checked) and checked.text == "X"


def test_invalid_params_are_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(InvalidParams, match="count"):
            parse_params(Plain, {"text": "x", "count": "two"})
        with pytest.raises(InvalidParams, match="unknown param"):
            parse_params(Plain, {"text": "x", "other": "1"})


def test_only_short_params_are_kept_and_only_so_many() -> None:
    long = "x" * (RECENT_PARAMS_CHARS + 1)

    class Long(Params):
        text: str

    assert parse_params(Long, {"text": long}) is not parse_params(Long, {"text": long})
    for n in range(RECENT_PARAMS_ENTRIES * 2):
        parse_params(Plain, {"text": "x", "count": str(n)})
    assert len(params_module._recent) == RECENT_PARAMS_ENTRIES
    newest = parse_params(Plain, {"text": "x", "count": str(RECENT_PARAMS_ENTRIES * 2 - 1)})
    assert parse_params(Plain, {"text": "x", "count": str(RECENT_PARAMS_ENTRIES * 2 - 1)}) is newest
