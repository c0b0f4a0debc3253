"""The MCP tools, generated from the registry: one per action and one per query, no per-tool code.

This module needs no MCP SDK: it turns specs into tool definitions (names, descriptions, input
and output schemas, annotations) and a tool call's JSON arguments into the runtime's call, and
is what `phoneuse-runtime actions` and the MCP tool list share.

Names: an action's wire name in snake case (`SEND_MESSAGE` -> `send_message`), a query's with
`query_` in front (`CONTACTS` -> `query_contacts`). Arguments are the params' own JSON types;
each is checked against its field's JSON type here (a string where an integer belongs is refused,
never coerced; a list or object may also come as its JSON text), then written as the runtime's
wire text, which the runtime validates as it does
every front end's (limits, ranges, required keys, the messages that name the allowed keys). The
call's own options are arguments too: `request_id` (a retry with the same id gets the first
answer), `timeout_ms` and `app_target` for actions, `limit` and `offset` for queries.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from phoneuse_runtime.kernel.errors import InvalidParams, UnknownAction
from phoneuse_runtime.kernel.limits import (
    MAX_APP_TARGET_CHARS,
    MAX_ID_CHARS,
    MAX_PARAM_CHARS,
    MAX_TIMEOUT_MS,
)
from phoneuse_runtime.kernel.registry import AnyActionSpec, AnyQuerySpec, Registry

log = logging.getLogger(__name__)

QUERY_PREFIX = "query_"
DEFAULT_TIMEOUT_MS = 30_000  # an action's deadline when the call names none (the CLI's `exec` too)

ACTION_OPTIONS: dict[str, dict[str, Any]] = {
    "request_id": {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_ID_CHARS,
        "description": "makes a retry safe: a call with the same request_id (and the same arguments) "
        "gets the first call's answer instead of running again; default: a new id",
    },
    "timeout_ms": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_TIMEOUT_MS,
        "description": f"the call's deadline, an approval's wait included (default {DEFAULT_TIMEOUT_MS})",
    },
    "app_target": {
        "type": "string",
        "maxLength": MAX_APP_TARGET_CHARS,
        "description": "the app the action is aimed at, e.g. com.whatsapp for SEND_MESSAGE",
    },
}
QUERY_OPTIONS: dict[str, dict[str, Any]] = {
    "limit": {"type": "integer", "minimum": 0, "description": "results per page (0: the server's default)"},
    "offset": {"type": "integer", "minimum": 0, "description": "the first result of the page (0-based)"},
    "timeout_ms": ACTION_OPTIONS["timeout_ms"],
}

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


class ArgumentError(Exception):
    """A tool call's arguments are refused before anything runs; `wire()` is `CODE: message`."""

    def __init__(self, failure: InvalidParams | UnknownAction) -> None:
        super().__init__(failure.wire())
        self.failure = failure

    def wire(self) -> str:
        return self.failure.wire()


@dataclass
class Tool:
    """One MCP tool: what tools/list shows, and how its calls become the runtime's."""

    name: str
    kind: str  # "action" or "query"
    target: str  # the action or query type
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    read_only: bool
    missing: tuple[str, ...]  # the device capabilities it needs and the device lacks
    spec: AnyActionSpec | AnyQuerySpec = field(repr=False)
    own_keys: frozenset[str] = frozenset()  # the params' (or filters') wire keys

    @property
    def supported(self) -> bool:
        return not self.missing

    def split(self, arguments: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
        """The runtime's wire params and the call's options (request_id, timeout_ms, ...) from a
        call's arguments. Raises ArgumentError for a value of the wrong JSON type."""
        props: dict[str, Any] = self.input_schema.get("properties", {})
        wire: dict[str, str] = {}
        options: dict[str, Any] = {}
        for key, value in arguments.items():
            prop = props.get(key)
            if prop is None:  # unknown keys: the runtime names the allowed ones
                wire[key] = _text(value)
                continue
            problem = _type_problem(prop, value, self.input_schema.get("$defs", {}))
            if problem:
                raise ArgumentError(InvalidParams(self._message(key, problem)))
            if key in self.own_keys:
                if value is not None:  # null: the field's default
                    wire[key] = _text(value)
            else:
                options[key] = value
        return wire, options

    def _message(self, key: str, problem: str) -> str:
        allowed = ", ".join(sorted(self.input_schema.get("properties", {})))
        return f"{key}: {problem} (allowed: {allowed})"


def _text(value: Any) -> str:
    """A JSON value as the runtime's wire text: strings as they are, true/false, numbers in JSON's
    form, lists and objects as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "NaN"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _types_of(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> set[str] | None:
    """The JSON types a property admits, or None when its schema does not say."""
    if "$ref" in prop:
        target = defs.get(str(prop["$ref"]).rsplit("/", 1)[-1], {})
        return _types_of(target, defs)
    if "type" in prop:
        kind = prop["type"]
        return set(kind) if isinstance(kind, list) else {str(kind)}
    if "enum" in prop or "const" in prop:
        values = prop.get("enum", [prop.get("const")])
        return {_json_type(v) for v in values}
    for key in ("anyOf", "oneOf"):
        if key in prop:
            found: set[str] = set()
            for option in prop[key]:
                types = _types_of(option, defs)
                if types is None:
                    return None
                found |= types
            return found
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_problem(prop: Mapping[str, Any], value: Any, defs: Mapping[str, Any]) -> str | None:
    types = _types_of(prop, defs)
    if types is None:
        return None
    kind = _json_type(value)
    # A list or an object may come as its JSON text too, as the gRPC wire carries it (and as
    # clients that flatten arguments to strings send it): the runtime decodes it as it does there.
    ok = kind in types or (kind == "integer" and "number" in types)
    ok = ok or (kind == "string" and bool(types & {"array", "object"}))
    if kind == "number" and "integer" in types and float(value).is_integer():
        ok = True  # 7.0 is an integer in JSON Schema
    if not ok:
        return f"expected {' or '.join(sorted(types))}, got a JSON {kind}"
    if kind == "array":
        items = prop.get("items")
        if items is None and "anyOf" in prop:
            items = next((o.get("items") for o in prop["anyOf"] if o.get("type") == "array"), None)
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                problem = _type_problem(items, item, defs)
                if problem:
                    return f"item {i}: {problem}"
    return None


def _with_text_limits(schema: dict[str, Any]) -> dict[str, Any]:
    """The params' schema with each string's longest length stated (the runtime's own limit)."""
    for prop in schema.get("properties", {}).values():
        if prop.get("type") == "string" and "maxLength" not in prop:
            prop["maxLength"] = MAX_PARAM_CHARS
    return schema


def _merge_defs(into: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    into.update(schema.pop("$defs", {}))
    return schema


def _action_tool(spec: AnyActionSpec, capabilities: frozenset[str]) -> Tool:
    from phoneuse_runtime.screen.settle import Settled, SettleParams

    inputs: dict[str, Any] = _with_text_limits(spec.params.model_json_schema(by_alias=True))
    own = {info.alias or key for key, info in spec.params.model_fields.items()}
    if spec.settles:
        inputs.setdefault("properties", {}).update(SettleParams.model_json_schema()["properties"])
        own.add("settle_ms")
    for key, option in ACTION_OPTIONS.items():
        if key in inputs.get("properties", {}):
            log.warning("%s has a param named %s: the MCP tool has no %s option", spec.action_type, key, key)
            continue
        inputs.setdefault("properties", {})[key] = dict(option)
    inputs.pop("title", None)
    inputs["type"] = "object"
    defs: dict[str, Any] = {}
    result = _merge_defs(defs, spec.result.model_json_schema(by_alias=True, mode="serialization"))
    if spec.settles:
        settled = _merge_defs(defs, Settled.model_json_schema(by_alias=True, mode="serialization"))
        result.setdefault("properties", {}).update(settled.get("properties", {}))
    result.pop("additionalProperties", None)
    if spec.action_type == "SCREENSHOT":  # the image travels as image content, not twice
        result.get("properties", {}).pop("image_base64", None)
        result["required"] = [k for k in result.get("required", []) if k != "image_base64"]
    missing = tuple(sorted(spec.requires - capabilities))
    return Tool(
        name=spec.action_type.lower(),
        kind="action",
        target=spec.action_type,
        title=spec.action_type.replace("_", " ").title(),
        description=_description(spec.summary, spec.notes, missing),
        input_schema=inputs,
        output_schema=_output(result, defs),
        read_only=spec.reads_only,
        missing=missing,
        spec=spec,
        own_keys=frozenset(own),
    )


def _query_tool(spec: AnyQuerySpec, capabilities: frozenset[str]) -> Tool:
    inputs: dict[str, Any] = _with_text_limits(spec.filters.model_json_schema(by_alias=True))
    own = {info.alias or key for key, info in spec.filters.model_fields.items()}
    for key, option in QUERY_OPTIONS.items():
        if key == "offset":
            own.add("offset")  # the runtime's own filter
        inputs.setdefault("properties", {})[key] = dict(option)
    inputs.pop("title", None)
    inputs["type"] = "object"
    defs: dict[str, Any] = {}
    item = _merge_defs(defs, spec.result.model_json_schema(by_alias=True, mode="serialization"))
    item.pop("additionalProperties", None)
    page = {
        "type": "object",
        "properties": {
            "results": {"type": "array", "items": {"anyOf": [item, OMITTED_SCHEMA]}},
            "total_count": {"type": "integer", "description": "every match, not just this page's"},
            "has_more": {"type": "boolean"},
            "next_offset": {
                "anyOf": [{"type": "integer"}, {"type": "null"}],
                "description": "the offset of the next page; null on the last",
            },
        },
        "required": ["results", "total_count", "has_more"],
    }
    missing = tuple(sorted(spec.requires - capabilities))
    return Tool(
        name=QUERY_PREFIX + spec.query_type.lower(),
        kind="query",
        target=spec.query_type,
        title=f"Query {spec.query_type.replace('_', ' ').lower()}",
        description=_description(spec.summary, "", missing),
        input_schema=inputs,
        output_schema=_output(page, defs),
        read_only=True,
        missing=missing,
        spec=spec,
        own_keys=frozenset(own),
    )


OMITTED_SCHEMA = {
    "type": "object",
    "properties": {
        "omitted": {"type": "string"},
        "bytes": {"type": "integer"},
        "max_bytes": {"type": "integer"},
    },
    "required": ["omitted", "bytes", "max_bytes"],
}


def _output(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """An output schema: the result's, or the marker that stands for a result too large to send."""
    schema.pop("title", None)
    out: dict[str, Any] = {"type": "object", "anyOf": [schema, OMITTED_SCHEMA]}
    if defs:
        out["$defs"] = defs
    return out


def _description(summary: str, notes: str, missing: tuple[str, ...]) -> str:
    text = summary.rstrip(".") + "."
    if notes:
        text += "\n\n" + notes.strip()
    if missing:
        text += f"\n\nUNSUPPORTED on this device: it lacks {', '.join(missing)}; a call says how to get it."
    return text


@dataclass
class ToolTable:
    """Every tool of a registry on a device with these capabilities, by name."""

    tools: dict[str, Tool]

    @classmethod
    def of(cls, registry: Registry, capabilities: frozenset[str]) -> ToolTable:
        tools: dict[str, Tool] = {}
        for spec in registry.actions.values():
            tool = _action_tool(spec, capabilities)
            tools[tool.name] = tool
        for qspec in registry.queries.values():
            tool = _query_tool(qspec, capabilities)
            if tool.name in tools:  # an action named QUERY_X: the action keeps the name
                log.warning(
                    "the query %s has no MCP tool: an action is named %s", qspec.query_type, tool.name
                )
                continue
            tools[tool.name] = tool
        return cls(dict(sorted(tools.items())))

    def get(self, name: str) -> Tool:
        tool = self.tools.get(name)
        if tool is not None:
            return tool
        close = difflib.get_close_matches(name.lower(), self.tools, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ArgumentError(UnknownAction(f"no tool {name[:64]!r}{hint} (tools/list lists them)"))

    def names(self) -> list[str]:
        return list(self.tools)
