"""Handler specs and their discovery through entry points.

Built-in handlers and third-party plug-ins register the same way: a module listed
under the entry-point group `phoneuse_runtime.actions` (or `.queries`) exposes
`ACTIONS` (or `QUERIES`), a sequence of specs. Adding an action never edits the core.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from phoneuse_runtime.kernel.context import ActionContext, QueryContext
from phoneuse_runtime.kernel.errors import UnknownAction
from phoneuse_runtime.kernel.events import CORE_EVENTS, EventPayload, event_type_of
from phoneuse_runtime.kernel.limits import fit_json
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.screen.settle import Run, settling

if TYPE_CHECKING:
    from phoneuse_runtime.kernel.policies import Policy

__all__ = [
    "ActionContext",
    "ActionResult",
    "ActionSpec",
    "QueryContext",
    "QueryResult",
    "QuerySpec",
    "Registry",
]

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
    # The device capabilities (phoneuse_runtime.kernel.capabilities) the action needs; on a device
    # that lacks one it answers UNSUPPORTED, with a hint, before its handler runs.
    requires: frozenset[str] = frozenset()
    # Whether the action drives the phone (its screen, apps or radios) and so must not
    # interleave with another such action: those run one at a time, in arrival order, as
    # Appium queues a session's commands. None means: when it requires a device capability.
    # Looking (DUMP_UI), waiting (WAIT_FOR) and component-only actions run alongside.
    exclusive: bool | None = None
    # Longer documentation for the generated spec, beyond the one-line summary.
    notes: str = ""
    # The other actions whose effect a call with these params has (START_INTENT with CALL
    # tel:... places a call, as MAKE_CALL does): policies judge a call by all of them.
    effects: Callable[[P], frozenset[str]] | None = None
    # Refusals that need no person, run once the params are valid and before the policies (so
    # before any hold): raise a RuntimeFailure (PERMISSION_DENIED for SHELL without
    # --allow-shell, a URL scheme the server does not allow, an intent aimed at the owner's
    # controls). A check that must read the phone is a coroutine function (SEND_MESSAGE's
    # recipient, resolved from the contacts: a name two contacts match is INVALID_PARAMS before
    # anyone is asked). It may read but never act: the call has no turn on the phone yet.
    check: Callable[[ActionContext, P], Awaitable[None] | None] | None = None
    # What the owner reads about the call beyond its params, run after `check` (so it may read
    # the phone, never act): INSTALL_APP's APK, its package and permissions. A hold's reason
    # carries it (every approver shows the reason) and the handler finds it in `ctx.about`.
    describe: Callable[[ActionContext, P], Awaitable[str]] | None = None
    # Whether the action drives the screen (taps, types, keys), or a function of its params that
    # says (PRESS_KEY HOME only leaves): for every caller but the owner it is refused while one of
    # the owner's controls is in front (owner/controls.py), and held while a package in
    # `approve_ui_in` is.
    drives_ui: bool | Callable[[P], bool] = False
    # Whether the call, after its handler, waits for the screen to stop changing and reports what
    # changed (settle.py): it then takes `settle_ms` besides its params, and its result gains
    # `settle`, `ui_fingerprint` and `changes`.
    settles: bool = False
    # Whether the action only reads (the screen, the phone's state) and changes nothing: front ends
    # that say so to their clients (MCP's tool annotations) tell reads from changes by it.
    reads_only: bool = False

    def drives_ui_with(self, params: P) -> bool:
        return self.drives_ui if isinstance(self.drives_ui, bool) else self.drives_ui(params)

    @functools.cached_property  # asked on every call of the action
    def takes_turns(self) -> bool:
        return bool(self.requires) if self.exclusive is None else self.exclusive

    @functools.cached_property
    def own_effect(self) -> frozenset[str]:
        """The action's own name, the effect every call of it has (one set, not one per call)."""
        return frozenset({self.action_type})

    @functools.cached_property
    def run(self) -> Run:
        """What the runtime runs for a call, in its turn: (context, params, settle_ms) to the
        result's JSON, fitted (limits.fit_json). The handler, and where the spec `settles` the
        settling around it (screen/settle.py: `settling`; settle_ms 0 skips it)."""
        if self.settles:
            return settling(self.handler, result_json)
        handler = self.handler

        async def run(ctx: ActionContext, params: Any, settle_ms: int) -> str:
            return fit_json(result_json(await handler(ctx, params)))

        return run

    def effects_of(self, params: P) -> frozenset[str]:
        """What a call with these params does: the action itself, and the `effects` it names."""
        if self.effects is None:
            return self.own_effect
        return self.effects(params) | self.own_effect


def result_json(result: BaseModel) -> str:
    """`result.model_dump_json(by_alias=True)`. Through the model's serializer itself where the
    model does not dump itself its own way: the method's wrapper costs as much again as the
    serializing, and this runs on every Execute."""
    model = type(result)
    if model.model_dump_json is not BaseModel.model_dump_json:
        return result.model_dump_json(by_alias=True)
    return model.__pydantic_serializer__.to_json(result, by_alias=True).decode()


@dataclass(frozen=True)
class QuerySpec(Generic[P, Q]):
    """One QueryType: its filters model, a handler returning every match in order, and the result model."""

    query_type: str
    filters: type[P]
    handler: Callable[[QueryContext, P], Awaitable[Sequence[Q]]]
    result: type[Q]
    summary: str
    requires: frozenset[str] = frozenset()


AnyActionSpec = ActionSpec[Any, Any]
AnyQuerySpec = QuerySpec[Any, Any]


@dataclass(frozen=True)
class Contribution:
    """What a component adds to the app. Its event payloads are documented in the spec."""

    actions: Sequence[AnyActionSpec] = ()
    queries: Sequence[AnyQuerySpec] = ()
    events: Sequence[type[EventPayload]] = ()
    policies: Sequence[Policy] = ()
    # Policies that never ask a person (the lease's CONFLICT): they run before every policy
    # that may hold a call, so no refusal waits for an answer, and again once a hold has ended.
    refusals: Sequence[Policy] = ()


class Contributor(Protocol):
    """Whatever adds to the registry while the app is assembled (every `Component` does)."""

    name: str

    def contribution(self) -> Contribution:
        """Called once, while the app is assembled, before the component starts."""
        ...


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
    """Every action, query and event type the app serves, wherever it came from."""

    actions: dict[str, AnyActionSpec] = field(default_factory=dict)
    queries: dict[str, AnyQuerySpec] = field(default_factory=dict)
    events: dict[str, type[EventPayload]] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    load_errors: list[str] = field(default_factory=list)
    # The components' policies in the order they were added: the app's chain runs them after the
    # configuration's lists, and the spec documents them.
    policies: list[Policy] = field(default_factory=list)
    refusals: list[Policy] = field(default_factory=list)  # Contribution.refusals, in their order

    def _claim(self, key: str, origin: str) -> None:
        if key in self.origins:
            raise RegistryError(f"{key} registered twice ({self.origins[key]} and {origin})")
        self.origins[key] = origin

    def add_action(self, spec: AnyActionSpec, origin: str = "") -> None:
        # Actions and queries share one namespace: a policy's list names either.
        self._claim(spec.action_type, origin)
        self.actions[spec.action_type] = spec

    def add_query(self, spec: AnyQuerySpec, origin: str = "") -> None:
        self._claim(spec.query_type, origin)
        self.queries[spec.query_type] = spec

    def add_event(self, payload: type[EventPayload], origin: str = "") -> None:
        name = event_type_of(payload)
        self._claim(f"event {name}", origin)
        self.events[name] = payload

    def add(self, contribution: Contribution, origin: str) -> None:
        for spec in contribution.actions:
            self.add_action(spec, origin)
        for qspec in contribution.queries:
            self.add_query(qspec, origin)
        for payload in contribution.events:
            self.add_event(payload, origin)
        self.policies.extend(contribution.policies)
        self.refusals.extend(contribution.refusals)

    def action(self, action_type: str) -> AnyActionSpec:
        spec = self.actions.get(action_type)
        if spec is not None:
            return spec
        import difflib  # only for this message; not worth its memory at idle

        close = difflib.get_close_matches(action_type.upper(), self.actions, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownAction(f"no action {action_type!r}{hint} (`phoneuse-runtime actions` lists them)")

    def unknown_event(self, event_type: str) -> str:
        """Why `event_type` cannot be subscribed to: it names none of the known ones."""
        import difflib

        close = difflib.get_close_matches(event_type.upper(), self.events, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        return f"no event type {event_type!r}{hint} (known: {', '.join(sorted(self.events))})"

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


def build_registry(components: Iterable[Contributor] = ()) -> Registry:
    """The core's event types, every plug-in (built-ins included), then each component's share."""
    registry = Registry()
    for payload in CORE_EVENTS:
        registry.add_event(payload, "phoneuse_runtime")
    registry.load_entry_points()
    for component in components:
        registry.add(component.contribution(), f"component {component.name}")
    return registry
