"""Handler specs and their discovery through entry points.

Built-in handlers and third-party plug-ins register the same way: a module listed
under the entry-point group `phoneuse_runtime.actions` (or `.queries`) exposes
`ACTIONS` (or `QUERIES`), a sequence of specs. Adding an action never edits the core.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .errors import UnknownAction
from .params import Params

if TYPE_CHECKING:
    from .config import Settings
    from .device.base import Device
    from .memory import MemoryStore

log = logging.getLogger(__name__)

ACTION_GROUP = "phoneuse_runtime.actions"
QUERY_GROUP = "phoneuse_runtime.queries"


class QueryResult(BaseModel):
    """Base of every query's result objects."""

    # Models are built on first use: a server that never sees an action keeps no validator for it.
    model_config = ConfigDict(defer_build=True)


class ActionResult(BaseModel):
    """Base of every action's result: `via` names the path the backend took."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    via: str = Field(description="the path the backend took, e.g. sim, uiautomator2, am start, termux-api")


@dataclass(frozen=True)
class ActionContext:
    """What a handler may use: the phone, the caller's app_target, settings and the memory store."""

    device: Device
    app_target: str | None
    settings: Settings
    memory: MemoryStore
    request_id: str
    deadline: float  # loop.time() at which the call times out


P = TypeVar("P", bound=Params)
R = TypeVar("R", bound=ActionResult)
Q = TypeVar("Q", bound=BaseModel)


@dataclass(frozen=True)
class ActionSpec(Generic[P, R]):
    """One action: its wire name, params model, handler and result model."""

    action_type: str
    params: type[P]
    handler: Callable[[ActionContext, P], Awaitable[R]]
    result: type[R]
    summary: str
    # Device kinds this action exists on; None means every backend.
    backends: frozenset[str] | None = None
    # Whether the action drives the phone (its screen, apps or radios) and so must not
    # interleave with another such action: those run one at a time, in arrival order, as
    # Appium queues a session's commands. Read-only and off-device actions set it False.
    exclusive: bool = True
    # Longer documentation for the generated spec, beyond the one-line summary.
    notes: str = ""


@dataclass(frozen=True)
class QueryContext:
    device: Device
    settings: Settings
    memory: MemoryStore


@dataclass(frozen=True)
class QuerySpec(Generic[P, Q]):
    """One QueryType: its filters model, a handler returning every match in order, and the result model."""

    query_type: str
    filters: type[P]
    handler: Callable[[QueryContext, P], Awaitable[Sequence[Q]]]
    result: type[Q]
    summary: str


AnyActionSpec = ActionSpec[Any, Any]
AnyQuerySpec = QuerySpec[Any, Any]


class RegistryError(Exception):
    """Two plug-ins claim the same name, or a plug-in exposes something that is not a spec."""


def _specs_of(obj: object, attr: str, kind: type) -> list[Any]:
    if isinstance(obj, kind):
        return [obj]
    found = getattr(obj, attr, obj)
    if isinstance(found, (list, tuple)) and all(isinstance(s, kind) for s in found):
        return list(found)
    raise RegistryError(f"expected {attr} (a sequence of {kind.__name__}), got {type(found).__name__}")


@dataclass
class Registry:
    """Every action and query the server knows, for one kind of device."""

    device_kind: str
    actions: dict[str, AnyActionSpec] = field(default_factory=dict)
    queries: dict[str, AnyQuerySpec] = field(default_factory=dict)
    # action_type -> backends, for actions that exist but not on this device
    elsewhere: dict[str, frozenset[str]] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    load_errors: list[str] = field(default_factory=list)

    def add_action(self, spec: AnyActionSpec, origin: str = "") -> None:
        name = spec.action_type
        if name in self.actions or name in self.elsewhere:
            raise RegistryError(f"action {name} registered twice ({self.origins.get(name)} and {origin})")
        self.origins[name] = origin
        if spec.backends is not None and self.device_kind not in spec.backends:
            self.elsewhere[name] = spec.backends
            return
        self.actions[name] = spec

    def add_query(self, spec: AnyQuerySpec, origin: str = "") -> None:
        key = f"query:{spec.query_type}"
        if spec.query_type in self.queries:
            raise RegistryError(
                f"query {spec.query_type} registered twice ({self.origins[key]} and {origin})"
            )
        self.origins[key] = origin
        self.queries[spec.query_type] = spec

    def action(self, action_type: str) -> AnyActionSpec:
        spec = self.actions.get(action_type)
        if spec is not None:
            return spec
        if action_type in self.elsewhere:
            kinds = ", ".join(sorted(self.elsewhere[action_type]))
            raise UnknownAction(
                f"{action_type} exists only on device {kinds}; this server runs {self.device_kind}"
            )
        import difflib  # only for this message; not worth its memory at idle

        close = difflib.get_close_matches(action_type.upper(), self.actions, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownAction(f"no action {action_type!r}{hint} (`phoneuse-runtime actions` lists them)")

    def load_entry_points(self, groups: Iterable[str] = (ACTION_GROUP, QUERY_GROUP)) -> None:
        """Loads every plug-in module; one that fails to import is logged and recorded, not fatal."""
        for group in groups:
            for ep in sorted(entry_points(group=group), key=lambda e: e.name):
                origin = f"{group}:{ep.name} ({ep.value})"
                try:
                    loaded = ep.load()
                except Exception as exc:
                    log.exception("plug-in %s failed to load", origin)
                    self.load_errors.append(f"{origin}: {type(exc).__name__}: {exc}")
                    continue
                if group == ACTION_GROUP:
                    for spec in _specs_of(loaded, "ACTIONS", ActionSpec):
                        self.add_action(spec, origin)
                else:
                    for qspec in _specs_of(loaded, "QUERIES", QuerySpec):
                        self.add_query(qspec, origin)


def build_registry(device_kind: str) -> Registry:
    registry = Registry(device_kind)
    registry.load_entry_points()
    return registry
