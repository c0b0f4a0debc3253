"""The one way to build a Selector from params: the element params and the text-field params agree."""

from __future__ import annotations

import importlib

from phoneuse_runtime.screen.lookup import SelectorFields, SelectorParams
from phoneuse_runtime.screen.selector import Selector

PICK: dict[str, str] = {
    "resource_id": "user",
    "description": "Email",
    "class_name": "android.widget.EditText",
    "index": "1",
}
# The built-in handlers install as phoneuse_runtime.actions (setup.py maps the folder), which mypy,
# reading the checkout, knows as `actions`: the models are taken by their installed name.
_UI = importlib.import_module("phoneuse_runtime.actions.ui")
PointOrSelector: type[SelectorParams] = _UI.PointOrSelector
FieldParams: type[SelectorFields] = _UI.FieldParams
TypeTextParams: type[SelectorFields] = _UI.TypeTextParams
RID, DESC, CLS, INDEX = "user", "Email", "android.widget.EditText", 1


def test_element_params_select_by_text() -> None:
    p = SelectorParams.model_validate({"text": "Sign in", **PICK})
    assert p.selector() == Selector("Sign in", RID, DESC, CLS, INDEX)
    assert PointOrSelector.model_validate({"text": "OK"}).selector() == Selector(text="OK")


def test_field_params_select_by_field_text() -> None:
    p = FieldParams.model_validate({"field_text": "Email or username", **PICK})
    assert p.selector() == Selector("Email or username", RID, DESC, CLS, INDEX)


def test_the_typed_text_never_selects_the_field() -> None:
    p = TypeTextParams.model_validate({"text": "zoë@example.com"})
    assert p.selector() == Selector()
    assert p.selector().is_empty()
