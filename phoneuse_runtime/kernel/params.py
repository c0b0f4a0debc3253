"""Typed params for handlers, coerced from the wire's `map<string, string>`.

Handlers declare a `Params` model. Values arrive as strings and become the field's
type: ints, floats (finite), `true`/`false`, times (ISO-8601 or epoch milliseconds, within
EARLIEST..LATEST), JSON for objects, JSON or comma-separated text for lists of strings.
Unknown keys are refused with the allowed ones named. Every value is at most
MAX_PARAM_CHARS long, or its field's own `max_length` (limits.py); JSON is at most
MAX_JSON_DEPTH deep and its numbers fit a phone's types.
"""

from __future__ import annotations

import functools
import json
import math
import re
import types
import typing
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Union

import annotated_types
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainValidator,
    ValidationError,
    WrapValidator,
)

from phoneuse_runtime.kernel.errors import InvalidParams
from phoneuse_runtime.kernel.limits import (
    JSON_INT_MAX,
    JSON_INT_MIN,
    MAX_JSON_DEPTH,
    MAX_PARAM_CHARS,
    clip,
    too_long,
)

# A day inside datetime's own range at either end, so that a day either way, or any time
# zone, never leaves it.
EARLIEST = datetime(1, 1, 2, tzinfo=timezone.utc)
LATEST = datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=timezone.utc)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_MS = re.compile(r"-?[0-9]{1,15}")  # LATEST is 15 digits of milliseconds
_TIME_RANGE = (
    "expected a time from 0001-01-02 to 9999-12-30 (UTC): "
    "ISO-8601 (2026-12-01T09:30:00+01:00) or epoch milliseconds"
)


def _ms(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(milliseconds=1)


_EARLIEST_MS, _LATEST_MS = _ms(EARLIEST), _ms(LATEST)


def _parse_time(value: object) -> object:
    if not isinstance(value, str):
        return value
    text = value.strip()
    if _EPOCH_MS.fullmatch(text):
        ms = int(text)
        if not _EARLIEST_MS <= ms <= _LATEST_MS:
            raise ValueError(_TIME_RANGE)
        return _EPOCH + timedelta(milliseconds=ms)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(_TIME_RANGE) from None
    # A naive time means UTC. Aware times compare by the instant they name.
    if not EARLIEST <= (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)) <= LATEST:
        raise ValueError(_TIME_RANGE)
    return parsed


Timestamp = Annotated[datetime, BeforeValidator(_parse_time)]
"""A point in time: ISO-8601 (with or without offset; naive means UTC) or epoch milliseconds,
from EARLIEST to LATEST."""


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
    if typing.get_origin(annotation) is not list:
        return False
    args = typing.get_args(annotation)
    return not args or _strip_optional(args[0]) is str


def _is_structured(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (dict, list) or annotation in (dict, list)


class Params(BaseModel):
    """Base of every handler's params model."""

    model_config = ConfigDict(
        extra="forbid", str_strip_whitespace=False, frozen=True, defer_build=True, allow_inf_nan=False
    )


_NUMBERS = "JSON numbers must be finite, and integers within -2^63 .. 2^63-1"


class _OutOfRange(ValueError):
    """A JSON number no phone type holds."""

    def __init__(self, text: str) -> None:
        shown = text if len(text) <= 40 else clip(text)
        super().__init__(f"JSON number {shown} is out of range; {_NUMBERS}")


def _json_int(text: str) -> int:
    # The length check first: int() of thousands of digits is slow, and past 4300 it refuses.
    value = int(text) if len(text) <= 20 else None
    if value is None or not JSON_INT_MIN <= value <= JSON_INT_MAX:
        raise _OutOfRange(text)
    return value


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as inf
        raise _OutOfRange(text)
    return value


def _json_constant(text: str) -> float:
    raise _OutOfRange(text)  # NaN, Infinity, -Infinity: Python's JSON extensions


def _deeper_than(value: object, limit: int) -> bool:
    """Whether lists and objects in `value` nest more than `limit` levels, without recursing."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def decode_json(key: str, raw: str) -> Any:
    """A param's JSON, within the limits of limits.py; InvalidParams (naming `key`) otherwise."""
    too_deep = InvalidParams(f"{key}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        value = json.loads(raw, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant)
    except RecursionError:  # far deeper than the limit: the decoder recurses per level
        raise too_deep from None
    except _OutOfRange as exc:
        raise InvalidParams(f"{key}: {exc}") from None
    # Only text with enough brackets can nest too deep; most never needs the walk.
    if raw.count("[") + raw.count("{") > MAX_JSON_DEPTH and _deeper_than(value, MAX_JSON_DEPTH):
        raise too_deep
    return value


def _decode_structured(
    structured: tuple[tuple[str, bool], ...], data: dict[str, str], allowed: list[str]
) -> dict[str, Any]:
    """The wire's text for JSON fields (and comma-separated lists) decoded; other values as they are."""
    out: dict[str, Any] | None = None
    for key, comma_list in structured:
        raw = data.get(key)
        if raw is None:
            continue
        if out is None:
            out = dict(data)
        if comma_list and not raw.lstrip().startswith("["):
            out[key] = [part.strip() for part in raw.split(",") if part.strip()]
            continue
        try:
            out[key] = decode_json(key, raw)
        except json.JSONDecodeError as exc:
            raise InvalidParams(
                f"{key}: not valid JSON ({exc.msg} at char {exc.pos}) (allowed: {', '.join(allowed)})"
            ) from None
    return data if out is None else out


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


def _wire_keys(model: type[BaseModel]) -> frozenset[str]:
    """The wire names of a model's fields (aliases where a name is a Python keyword, like `from`)."""
    return frozenset(info.alias or name for name, info in model.model_fields.items())


def _wire_limits(model: type[BaseModel]) -> dict[str, int]:
    """The longest value each wire key takes: its field's own `max_length` where a string field
    declares one, else MAX_PARAM_CHARS."""
    limits = {}
    for name, info in model.model_fields.items():
        limit = MAX_PARAM_CHARS
        if _strip_optional(info.annotation) is str:
            for meta in info.metadata:
                if isinstance(meta, annotated_types.MaxLen):
                    limit = meta.max_length
        limits[info.alias or name] = limit
    return limits


# Field types whose validated values are immutable and depend on the wire text alone.
_PLAIN_TYPES = (str, int, float, bool)
_VALIDATOR_TYPES = (BeforeValidator, AfterValidator, PlainValidator, WrapValidator)


def _reusable(model: type[BaseModel]) -> bool:
    """Whether one validated instance can serve every call with the same wire params: the model
    validates nothing beyond its fields' types and constraints (a validator of its own might
    look at more than the text, the time say), and every value it holds is immutable."""
    decorators = model.__pydantic_decorators__
    if (
        decorators.validators
        or decorators.field_validators
        or decorators.root_validators
        or decorators.model_validators
        or model.model_post_init is not BaseModel.model_post_init
    ):
        return False
    for info in model.model_fields.values():
        annotation = _strip_optional(info.annotation)
        if not (annotation in _PLAIN_TYPES or typing.get_origin(annotation) is typing.Literal):
            return False
        if any(isinstance(meta, _VALIDATOR_TYPES) for meta in info.metadata):
            return False
    return True


@dataclass(frozen=True, slots=True)
class _Plan:
    """What parsing needs to know of a params model, worked out once per model."""

    keys: frozenset[str]
    limits: dict[str, int]
    structured: tuple[tuple[str, bool], ...]
    reusable: bool


@functools.cache
def _plan(model: type[BaseModel]) -> _Plan:
    return _Plan(_wire_keys(model), _wire_limits(model), _structured_fields(model), _reusable(model))


# Validated params of recent calls, by model and wire params, for the models `_reusable` allows:
# an agent repeats small calls (the same key, the same text), and validating them again would
# cost more than the rest of the runtime's bookkeeping for the call. Only short params are kept,
# and only so many (the oldest go first): the cache holds at most ENTRIES x CHARS characters.
RECENT_PARAMS_ENTRIES = 256
RECENT_PARAMS_CHARS = 256
_recent: dict[tuple[type[BaseModel], tuple[tuple[str, str], ...]], Params] = {}


def _remember(key: tuple[type[BaseModel], tuple[tuple[str, str], ...]], params: Params) -> None:
    if sum(len(value) for _, value in key[1]) > RECENT_PARAMS_CHARS:
        return
    if len(_recent) >= RECENT_PARAMS_ENTRIES:
        del _recent[next(iter(_recent))]
    _recent[key] = params


def _shown_keys(keys: list[str], most: int = 8) -> str:
    shown = [key if len(key) <= 40 and key.isprintable() else clip(key) for key in keys[:most]]
    more = f" and {len(keys) - most} more" if len(keys) > most else ""
    return ", ".join(shown) + more


def parse_params(
    model: type[Params], raw: typing.Mapping[str, str], *, also_allowed: typing.Iterable[str] = ()
) -> Params:
    """Validates wire params against a model; every failure is InvalidParams naming the field.

    `also_allowed` names keys the caller consumed itself (e.g. a query's offset), so the
    error lists them among the allowed ones."""
    plan = _plan(model)
    recent_key = None
    if plan.reusable:
        recent_key = (model, tuple(raw.items()))
        known = _recent.get(recent_key)
        if known is not None:
            return known
    keys = plan.keys
    if not keys.issuperset(raw):
        allowed = sorted({*keys, *also_allowed})
        unknown = sorted(set(raw) - set(allowed))
        raise InvalidParams(
            f"unknown param(s) {_shown_keys(unknown)}; allowed: {', '.join(allowed) or '(none)'}"
        )
    limits = plan.limits
    for key, value in raw.items():  # every key is known by now
        if len(value) > limits[key]:
            raise InvalidParams(too_long(key, len(value), limits[key]))
    data = raw if isinstance(raw, dict) else dict(raw)
    try:
        if plan.structured:
            data = _decode_structured(plan.structured, data, sorted({*keys, *also_allowed}))
        params = model.model_validate(data)
    except ValidationError as exc:
        raise InvalidParams(describe_validation_error(exc, sorted({*keys, *also_allowed}))) from None
    if recent_key is not None:
        _remember(recent_key, params)
    return params


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
