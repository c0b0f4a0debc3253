"""App actions: open and close apps, open URLs, send intents."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from phoneuse_runtime.device.base import AppInfo, ExtraValue, Intent
from phoneuse_runtime.kernel.capabilities import APPS
from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied, Unsupported
from phoneuse_runtime.kernel.limits import clip
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec
from phoneuse_runtime.owner.controls import intent_refusal, package_refusal
from phoneuse_runtime.util.names import match_name


class OpenAppParams(Params):
    package: str | None = Field(default=None, description="e.g. com.android.chrome")
    name: str | None = Field(
        default=None,
        description="the label of an app with a launcher icon, e.g. Chrome; exact or a unique prefix",
    )

    @model_validator(mode="after")
    def _one(self) -> OpenAppParams:
        if bool(self.package) == bool(self.name):
            raise ValueError("give either package or name")
        return self


class OpenAppResult(ActionResult):
    package: str
    label: str
    activity: str


def match_app(apps: list[AppInfo], name: str) -> AppInfo:
    """By label, as `names.match_name` picks (exact, else a unique prefix), among apps with a launcher icon.

    Packages without one (e.g. "Phone Services" next to "Phone") cannot be opened by name
    and would make most prefixes ambiguous. A backend that reports no launch activities at
    all gets every app considered."""
    if any(a.launch_activity for a in apps):
        apps = [a for a in apps if a.launch_activity]
    return match_name(
        apps,
        name,
        name_of=lambda a: a.label,
        kind="app",
        candidate=lambda a: {"package": a.package, "label": a.label},
        shown=lambda a: f"{a.label} ({a.package})",
        hint="apps without a launcher icon open by package",
    )


def _not_owners(ctx: ActionContext, package: str, *, what: str = "app") -> None:
    """PERMISSION_DENIED for one of the owner's controls (owner/controls.py), unless the owner asks."""
    if package and not ctx.caller.owner:
        refusal = package_refusal(ctx.settings.owner, package, what=what)
        if refusal is not None:
            raise PermissionDenied(f"{ctx.name}: {refusal}")


def _check_open_app(ctx: ActionContext, p: OpenAppParams) -> None:
    _not_owners(ctx, p.package or "")


async def open_app(ctx: ActionContext, p: OpenAppParams) -> OpenAppResult:
    apps = await ctx.device.installed_apps()
    if p.name:
        app = match_app(apps, p.name)
        _not_owners(ctx, app.package)  # known only now
    else:
        found = next((a for a in apps if a.package == p.package), None)
        if found is None:
            raise Unsupported(f"{p.package} is not installed")
        app = found
    fg = await ctx.device.launch_app(app.package)
    return OpenAppResult(
        package=fg.package, label=app.label, activity=fg.activity, via=fg.via or ctx.device.via
    )


class CloseAppParams(Params):
    package: str


class CloseAppResult(ActionResult):
    package: str
    was_running: bool


def _check_close_app(ctx: ActionContext, p: CloseAppParams) -> None:
    _not_owners(ctx, p.package)


async def close_app(ctx: ActionContext, p: CloseAppParams) -> CloseAppResult:
    was_running = await ctx.device.stop_app(p.package)
    return CloseAppResult(package=p.package, was_running=was_running, via=ctx.device.via)


class OpenUrlParams(Params):
    url: str = Field(min_length=1, description="with its scheme; surrounding whitespace is ignored")

    @field_validator("url")
    @classmethod
    def _strip(cls, value: str) -> str:
        # The scheme check ignores it (urlsplit strips it), so the intent must not carry it either.
        stripped = value.strip()
        if not stripped:
            raise ValueError("url is empty")
        return stripped


class IntentResultModel(ActionResult):
    handled_by: str = Field(description="package/activity (or receiver) that took the intent")


class OpenUrlResult(IntentResultModel):
    url: str


def _require_scheme(ctx: ActionContext, what: str, url: str) -> None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ctx.settings.url_schemes:
        allowed = ", ".join(sorted(ctx.settings.url_schemes))
        raise PermissionDenied(f"{what}scheme {scheme!r} is not allowed by this server (allowed: {allowed})")


# What an intent does, named as the action that does the same: policies judge START_INTENT
# and OPEN_URL by it, so a deny list that names MAKE_CALL is not undone by `CALL tel:...`.
_CALLS = {
    "android.intent.action.CALL",
    "android.intent.action.CALL_PRIVILEGED",
    "android.intent.action.CALL_EMERGENCY",
}
_SENDS = {"android.intent.action.SEND", "android.intent.action.SEND_MULTIPLE", "android.intent.action.SENDTO"}
_ALARMS = {
    "android.intent.action.SET_ALARM",
    "android.intent.action.SET_TIMER",
    "android.intent.action.SHOW_ALARMS",
}
_INSERTS = {
    "android.intent.action.INSERT",
    "android.intent.action.INSERT_OR_EDIT",
    "android.intent.action.EDIT",
}
_SCHEME_EFFECTS = {
    "tel": "MAKE_CALL",
    "sms": "SEND_MESSAGE",
    "smsto": "SEND_MESSAGE",
    "mms": "SEND_MESSAGE",
    "mmsto": "SEND_MESSAGE",
}


def url_effects(url: str) -> frozenset[str]:
    """tel: dials, sms:/smsto: compose a message: one tap from MAKE_CALL and SEND_MESSAGE."""
    effect = _SCHEME_EFFECTS.get(urlsplit(url.strip()).scheme.lower())
    return frozenset({effect}) if effect else frozenset()


def intent_effects(p: StartIntentParams) -> frozenset[str]:
    found = set(url_effects(p.data)) if p.data else set()
    action = p.action.strip()
    if action in _CALLS:
        found.add("MAKE_CALL")
    if action in _SENDS:
        found.add("SEND_MESSAGE")
    if action in _ALARMS:
        found.add("SET_ALARM")
    if action in _INSERTS:
        target = f"{p.data} {p.mime}".lower()
        if "calendar" in target or "/event" in target:
            found.add("CREATE_EVENT")
        if "contact" in target:
            found.add("ADD_CONTACT")
    return frozenset(found)


def _open_url_effects(p: OpenUrlParams) -> frozenset[str]:
    return url_effects(p.url)


def _check_open_url(ctx: ActionContext, p: OpenUrlParams) -> None:
    """Before any hold: a URL with no scheme or one the server does not allow, or opened in one
    of the owner's controls."""
    if not urlsplit(p.url).scheme:
        raise InvalidParams(f"url {clip(p.url)} has no scheme; e.g. https://example.com")
    _require_scheme(ctx, "", p.url)
    _not_owners(ctx, ctx.app_target or "", what="app_target")


async def open_url(ctx: ActionContext, p: OpenUrlParams) -> OpenUrlResult:
    intent = Intent(action="android.intent.action.VIEW", data=p.url, package=ctx.app_target or "")
    result = await ctx.device.start_intent(intent)
    return OpenUrlResult(url=p.url, handled_by=result.handled_by, via=result.via)


def _extra(key: str, value: Any) -> ExtraValue:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InvalidParams(
        f"extras.{key}: {type(value).__name__} is not an extra type; "
        "use string, integer, number, bool or a list of strings"
    )


class StartIntentParams(Params):
    kind: Literal["activity", "broadcast", "service"] = "activity"
    action: str = ""
    data: str = ""
    package: str = ""
    component: str = Field(default="", description="package/.Activity")
    mime: str = ""
    categories: list[str] = Field(default_factory=list)
    extras: dict[str, Any] = Field(
        default_factory=dict,
        description="JSON object; a value's JSON type picks the extra type: string, int (long past 32 bits), "
        "float, bool, list of strings",
    )

    @field_validator("extras")
    @classmethod
    def _extras(cls, value: dict[str, Any]) -> dict[str, Any]:
        return {k: _extra(k, v) for k, v in value.items()}

    @model_validator(mode="after")
    def _something(self) -> StartIntentParams:
        if not (self.action or self.data or self.component or self.package):
            raise ValueError("give at least one of action, data, component, package")
        return self


class StartIntentResult(IntentResultModel):
    kind: str


def _check_start_intent(ctx: ActionContext, p: StartIntentParams) -> None:
    """Before any hold: data with a scheme is a URL, held to the same list as OPEN_URL; an intent
    aimed at the owner's controls (their packages, a settings screen) is refused."""
    if not ctx.caller.owner:
        refusal = intent_refusal(
            ctx.settings.owner,
            action=p.action,
            package=p.package or ctx.app_target or "",
            component=p.component,
            data=p.data,
        )
        if refusal is not None:
            raise PermissionDenied(f"{ctx.name}: {refusal}")
    if urlsplit(p.data).scheme:
        _require_scheme(ctx, "data ", p.data)


async def start_intent(ctx: ActionContext, p: StartIntentParams) -> StartIntentResult:
    intent = Intent(
        kind=p.kind,
        action=p.action,
        data=p.data,
        package=p.package or ctx.app_target or "",
        component=p.component,
        mime=p.mime,
        categories=list(p.categories),
        extras=dict(p.extras),
    )
    result = await ctx.device.start_intent(intent)
    return StartIntentResult(kind=p.kind, handled_by=result.handled_by, via=result.via)


ACTIONS = (
    ActionSpec(
        "OPEN_APP",
        OpenAppParams,
        open_app,
        OpenAppResult,
        "Bring an app to the front by package or name",
        requires=frozenset({APPS}),
        check=_check_open_app,
        settles=True,
    ),
    ActionSpec(
        "CLOSE_APP",
        CloseAppParams,
        close_app,
        CloseAppResult,
        "Force-stop an app",
        requires=frozenset({APPS}),
        check=_check_close_app,
        settles=True,
    ),
    ActionSpec(
        "OPEN_URL",
        OpenUrlParams,
        open_url,
        OpenUrlResult,
        "Open a URL (schemes allowed by config)",
        requires=frozenset({APPS}),
        check=_check_open_url,
        effects=_open_url_effects,
        notes="Policies judge it by its effect too: `tel:` as MAKE_CALL, `sms:`/`smsto:` as SEND_MESSAGE.",
        settles=True,
    ),
    ActionSpec(
        "START_INTENT",
        StartIntentParams,
        start_intent,
        StartIntentResult,
        "Send an Android intent to an activity, broadcast receiver or service",
        requires=frozenset({APPS}),
        check=_check_start_intent,
        effects=intent_effects,
        notes=(
            "`data` with a scheme is held to `url_schemes`, as OPEN_URL's url is. Policies judge an "
            "intent by its effect too: CALL (or any `tel:` data) as MAKE_CALL; SEND, SENDTO or "
            "`sms:`/`smsto:` data as SEND_MESSAGE; SET_ALARM or SET_TIMER as SET_ALARM; INSERT or EDIT "
            "of a calendar event as CREATE_EVENT, of a contact as ADD_CONTACT."
        ),
        settles=True,
    ),
)
