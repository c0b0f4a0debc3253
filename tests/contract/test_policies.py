"""The policy chain: the configuration's lists, then the components' policies, then the app's own;
every Execute and Query passes it, after validation and before the handler, and it sees the caller."""

from __future__ import annotations

from dataclasses import dataclass

from phoneuse_runtime.kernel.errors import Denied
from phoneuse_runtime.kernel.policies import PolicyCall

from ..extras import Extra
from .frontend import FrontEndFactory, ok, refused, sim


@dataclass(frozen=True)
class Seen:
    policy: str
    frontend: str
    principal: str
    kind: str
    name: str
    request_id: str
    app_target: str | None
    wire_params: dict[str, str]
    params: str  # the typed params' class: validated before any policy runs


class Recorder:
    """Allows everything and records what it was shown."""

    def __init__(self, name: str, log: list[Seen]) -> None:
        self.name = name
        self.log = log

    async def check(self, call: PolicyCall) -> None:
        self.log.append(
            Seen(
                self.name,
                call.caller.frontend,
                call.caller.principal,
                call.kind,
                call.name,
                call.request_id,
                call.app_target,
                dict(call.wire_params),
                type(call.params).__name__,
            )
        )


class DenyClipboardFor:
    name = "no-clipboard-for"

    def __init__(self, principal: str) -> None:
        self.principal = principal

    async def check(self, call: PolicyCall) -> None:
        if call.name == "SET_CLIPBOARD" and call.caller.principal == self.principal:
            raise Denied(f"{call.caller} may not set the clipboard")


async def test_deny_list_is_denied(make_frontend: FrontEndFactory) -> None:
    frontend = await make_frontend(deny_actions=frozenset({"SET_CLIPBOARD"}))
    answer = await frontend.execute("SET_CLIPBOARD", {"text": "secret"})
    assert answer.error == "DENIED: SET_CLIPBOARD is on this server's deny list"
    assert await sim(frontend).get_clipboard() == ""


async def test_allow_list_denies_everything_else(make_frontend: FrontEndFactory) -> None:
    frontend = await make_frontend(allow_actions=frozenset({"DUMP_UI", "MEMORY"}))
    assert (await frontend.execute("DUMP_UI")).success
    answer = await frontend.execute("SET_CLIPBOARD", {"text": "x"})
    assert answer.error == "DENIED: SET_CLIPBOARD is not on this server's allow list"
    assert (await frontend.query("MEMORY")).total_count == 0
    refusal = await refused(frontend.query("CONTACTS"))
    assert refusal.error == "DENIED: CONTACTS is not on this server's allow list"


async def test_deny_list_names_queries_too(make_frontend: FrontEndFactory) -> None:
    frontend = await make_frontend(deny_actions=frozenset({"CONTACTS"}))
    refusal = await refused(frontend.query("CONTACTS", {"name": "Ana"}))
    assert refusal.error == "DENIED: CONTACTS is on this server's deny list"
    assert (await frontend.query("APP_STATE")).total_count >= 1


async def test_params_and_filters_are_validated_before_policies(make_frontend: FrontEndFactory) -> None:
    frontend = await make_frontend(deny_actions=frozenset({"SET_CLIPBOARD", "CONTACTS"}))
    answer = await frontend.execute("SET_CLIPBOARD", {"bogus": "1"})
    assert answer.error == "INVALID_PARAMS: unknown param(s) bogus; allowed: text"
    refusal = await refused(frontend.query("CONTACTS", {"colour": "red"}))
    assert (
        refusal.error == "INVALID_PARAMS: unknown param(s) colour; allowed: email, id, name, offset, phone, q"
    )
    unknown = await frontend.execute("SET_CLIPBOARDS", {"text": "x"})
    assert unknown.code == "UNKNOWN_ACTION"


async def test_policies_see_the_caller_and_the_call(make_frontend: FrontEndFactory) -> None:
    log: list[Seen] = []
    frontend = await make_frontend(policies=[Recorder("mine", log)])
    await ok(frontend, "SET_CLIPBOARD", {"text": "hi"}, request_id="p-1", app_target="com.example.notes")
    await ok(frontend, "DUMP_UI", request_id="p-2", principal="other")
    await frontend.query("CONTACTS", {"name": "Ana", "offset": "1"}, limit=5, principal="other")
    kind = frontend.kind
    assert log == [
        Seen(
            "mine",
            kind,
            "agent",
            "action",
            "SET_CLIPBOARD",
            "p-1",
            "com.example.notes",
            {"text": "hi"},
            "SetClipboardParams",
        ),
        Seen("mine", kind, "other", "action", "DUMP_UI", "p-2", None, {}, "DumpUiParams"),
        Seen(
            "mine",
            kind,
            "other",
            "query",
            "CONTACTS",
            "",
            None,
            {"name": "Ana", "offset": "1"},
            "ContactFilters",
        ),
    ]


class Meddler:
    """A policy that tries to change the call it judges, and to reach the runtime's record of it."""

    name = "meddler"

    def __init__(self) -> None:
        self.refused: list[str] = []

    async def check(self, call: PolicyCall) -> None:
        def params() -> None:
            call.wire_params["text"] = "changed"  # type: ignore[index]

        def name() -> None:
            call.name = "SHELL"  # type: ignore[misc]

        for what, attempt in (
            ("params", params),
            ("name", name),
            ("task", lambda: getattr(call, "task")),  # noqa: B009
            ("phase", lambda: getattr(call, "phase")),  # noqa: B009
            ("outcome", lambda: getattr(call, "outcome")),  # noqa: B009
        ):
            try:
                attempt()
            except (TypeError, AttributeError):
                self.refused.append(what)


async def test_a_policy_sees_the_call_read_only(make_frontend: FrontEndFactory) -> None:
    meddler = Meddler()
    frontend = await make_frontend(policies=[meddler])
    await ok(frontend, "SET_CLIPBOARD", {"text": "as sent"})
    assert meddler.refused == ["params", "name", "task", "phase", "outcome"]
    assert await sim(frontend).get_clipboard() == "as sent"
    await frontend.query("CONTACTS", {"name": "Ana"}, limit=5)
    assert meddler.refused[5:] == ["params", "name", "task", "phase", "outcome"]


async def test_a_policy_may_deny_by_caller(make_frontend: FrontEndFactory) -> None:
    frontend = await make_frontend(policies=[DenyClipboardFor("other")])
    assert (await frontend.execute("SET_CLIPBOARD", {"text": "mine"})).success
    theirs = await frontend.execute("SET_CLIPBOARD", {"text": "theirs"}, principal="other")
    assert theirs.error == f"DENIED: {frontend.kind}:other may not set the clipboard"
    assert await sim(frontend).get_clipboard() == "mine"


async def test_the_chain_runs_lists_then_components_then_the_apps_own(make_frontend: FrontEndFactory) -> None:
    log: list[Seen] = []
    frontend = await make_frontend(
        deny_actions=frozenset({"PRESS_KEY"}),
        components=[Extra(name="plugin", policies=[Recorder("component", log)])],
        policies=[Recorder("app", log)],
    )
    assert (await frontend.execute("PRESS_KEY", {"key": "HOME"})).code == "DENIED"
    assert log == []  # the deny list ended the chain
    await ok(frontend, "DUMP_UI", request_id="order")
    assert [seen.policy for seen in log] == ["component", "app"]
