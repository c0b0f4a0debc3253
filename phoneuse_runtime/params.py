"""Typed params for handlers, coerced from the wire's `map<string, string>`.

Handlers declare a `Params` model. Values arrive as strings and become the field's
type: ints, floats, `true`/`false`, times (ISO-8601 or epoch milliseconds), JSON for
objects, JSON or comma-separated text for lists of strings. Unknown keys are refused
with the allowed ones named.
"""

from __future__ import annotations

import functools
import json
import types
import typing
from datetime import datetime, timezone
from typing import Annotated, Any, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from .errors import InvalidParams


def _parse_time(value: object) -> object:
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit():
            return datetime.fromtimestamp(int(text) / 1000, tz=timezone.utc)
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError("expected ISO-8601 (2026-12-01T09:30:00+01:00) or epoch milliseconds") from exc
        return parsed
    return value


Timestamp = Annotated[datetime, BeforeValidator(_parse_time)]
"""A point in time: ISO-8601 (with or without offset; naive means UTC) or epoch milliseconds."""


def _strip_optional(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _strip_optional(args[0])
    if origin is Annotated:
        return _strip_optional(typing.get_args(annotation)[0])
    return annotation


def _is_str_list(annotation: Any) -> bool:
    return typing.get_origin(annotation) is list and typing.get_args(annotation) in ((str,), ())


def _is_structured(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (dict, list) or annotation in (dict, list)


class Params(BaseModel):
    """Base of every handler's params model."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False, frozen=True, defer_build=True)


def _decode_structured(model: type[BaseModel], data: dict[str, str], allowed: list[str]) -> dict[str, Any]:
    """The wire's text for JSON fields (and comma-separated lists) decoded; other values as they are."""
    out: dict[str, Any] | None = None
    for key, comma_list in _structured_fields(model):
        raw = data.get(key)
        if raw is None:
            continue
        if out is None:
            out = dict(data)
        if comma_list and not raw.lstrip().startswith("["):
            out[key] = [part.strip() for part in raw.split(",") if part.strip()]
            continue
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidParams(
                f"{key}: not valid JSON ({exc.msg} at char {exc.pos}) (allowed: {', '.join(allowed)})"
            ) from None
    return data if out is None else out


@functools.cache
def _structured_fields(model: type[BaseModel]) -> tuple[tuple[str, bool], ...]:
    """(wire key, accepts comma-separated text) for each field that takes JSON."""
    found = []
    for name, info in model.model_fields.items():
        annotation = _strip_optional(info.annotation)
        if _is_str_list(annotation):
            found.append((info.alias or name, True))
        elif _is_structured(annotation):
            found.append((info.alias or name, False))
    return tuple(found)


@functools.cache
def _wire_keys(model: type[BaseModel]) -> frozenset[str]:
    """The wire names of a model's fields (aliases where a name is a Python keyword, like `from`)."""
    return frozenset(info.alias or name for name, info in model.model_fields.items())


def parse_params(
    model: type[Params], raw: typing.Mapping[str, str], *, also_allowed: typing.Iterable[str] = ()
) -> Params:
    """Validates wire params against a model; every failure is InvalidParams naming the field.

    `also_allowed` names keys the caller consumed itself (e.g. a query's offset), so the
    error lists them among the allowed ones."""
    keys = _wire_keys(model)
    if not keys.issuperset(raw):
        allowed = sorted({*keys, *also_allowed})
        unknown = sorted(set(raw) - set(allowed))
        raise InvalidParams(
            f"unknown param(s) {', '.join(unknown)}; allowed: {', '.join(allowed) or '(none)'}"
        )
    data = raw if isinstance(raw, dict) else dict(raw)
    try:
        if _structured_fields(model):
            data = _decode_structured(model, data, sorted({*keys, *also_allowed}))
        return model.model_validate(data)
    except ValidationError as exc:
        raise InvalidParams(describe_validation_error(exc, sorted({*keys, *also_allowed}))) from None


def describe_validation_error(exc: ValidationError, allowed: list[str]) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "params"
        message = err["msg"]
        if message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        problems.append(f"{where}: {message}")
    text = "; ".join(problems)
    return f"{text} (allowed: {', '.join(allowed)})"
