"""An action's result_json is its model's `model_dump_json(by_alias=True)`, however it is produced."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from phoneuse_runtime.kernel.limits import MAX_RESPONSE_JSON_BYTES, OMITTED, fit_json
from phoneuse_runtime.kernel.registry import ActionResult, result_json


def _result_json(result: ActionResult) -> str:
    """As an action's run makes it (ActionSpec.run): the JSON, fitted."""
    return fit_json(result_json(result))


class Aliased(ActionResult):
    from_: str = Field(alias="from")
    text: str = "é"
    count: int | None = None


class DumpsItself(ActionResult):
    def model_dump_json(self, **kwargs: Any) -> str:
        return '{"custom":true}'


def test_the_json_is_the_models_own() -> None:
    result = Aliased(via="sim", **{"from": "+1 555"})
    assert _result_json(result) == result.model_dump_json(by_alias=True)
    assert _result_json(DumpsItself(via="sim")) == '{"custom":true}'


def test_a_result_too_large_to_send_is_the_omitted_marker() -> None:
    huge = Aliased(via="sim", text="x" * MAX_RESPONSE_JSON_BYTES, **{"from": "+1"})
    assert OMITTED in _result_json(huge)
