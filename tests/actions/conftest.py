"""Helpers for the action tests: read the screen through DUMP_UI and APP_STATE, and the sim's stores."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from phoneuse_runtime.device.sim.catalog import (
    CALENDAR,
    CHROME,
    CLOCK,
    CONTACTS,
    DIALER,
    LAUNCHER,
    MESSAGES,
    SETTINGS,
    SYSTEMUI,
    WHATSAPP,
)
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import Client

# The sim's own package names, re-exported for the tests.
__all__ = [
    "CALENDAR",
    "CHROME",
    "CLOCK",
    "CONTACTS",
    "DIALER",
    "LAUNCHER",
    "MESSAGES",
    "SETTINGS",
    "SYSTEMUI",
    "WHATSAPP",
]

URL_BAR = CHROME + ":id/url_bar"


SETTLED = frozenset({"settle", "ui_fingerprint", "changes"})


def own(result: dict[str, Any]) -> dict[str, Any]:
    """An action's own result, without what settling added (test_settle.py tests that)."""
    return {k: v for k, v in result.items() if k not in SETTLED}


def sim(client: Client) -> SimDevice:
    """The production SimDevice behind the server, for reading stores no query exposes."""
    device = client.app.runtime.device
    assert isinstance(device, SimDevice)
    return device


async def elements(client: Client, **match: Any) -> list[dict[str, Any]]:
    """The DUMP_UI elements whose keys equal every given value (`class_` means `class`)."""
    wanted = {("class" if k == "class_" else k): v for k, v in match.items()}
    dump = await client.ok("DUMP_UI", {"format": "json"})
    found: list[dict[str, Any]] = [e for e in dump["elements"] if all(e[k] == v for k, v in wanted.items())]
    return found


async def texts(client: Client, resource_id: str) -> list[str]:
    return [e["text"] for e in await elements(client, resource_id=resource_id)]


async def one(client: Client, **match: Any) -> dict[str, Any]:
    found = await elements(client, **match)
    assert len(found) == 1, (match, found)
    return found[0]


def center(element: dict[str, Any]) -> tuple[int, int]:
    left, top, right, bottom = element["bounds"]
    return (left + right) // 2, (top + bottom) // 2


async def front(client: Client) -> tuple[str, str]:
    """(package, activity) of the foreground app, from APP_STATE."""
    states, _, _ = await client.query(pb.APP_STATE, {})
    assert states[0]["foreground"] is True
    return states[0]["package"], states[0]["activity"]


async def failure(
    client: Client, action: str, params: dict[str, str] | None = None, **kw: Any
) -> tuple[str, str, dict[str, Any]]:
    """Executes an action that must fail: (code, message, result_json)."""
    response = await client.execute(action, params, **kw)
    assert not response.success, response.result_json
    code, sep, message = response.error.partition(": ")
    assert sep and message, response.error
    details: dict[str, Any] = json.loads(response.result_json)
    return code, message, details


def first_look(monkeypatch: pytest.MonkeyPatch, client: Client) -> asyncio.Event:
    """Set once something has read the screen: the call under test has looked at least once.

    Lets a test make an element appear strictly after the first look, without sleeping."""
    device = sim(client)
    looked = asyncio.Event()
    original = device.dump_hierarchy

    async def spy() -> str:
        xml = await original()
        looked.set()
        return xml

    monkeypatch.setattr(device, "dump_hierarchy", spy)
    return looked


def _node(
    index: int, cls: str, bounds: str, *, pkg: str = "com.example.bank", children: str = "", **a: str
) -> str:
    attrs = {
        "index": str(index),
        "text": a.get("text", ""),
        "resource-id": a.get("rid", ""),
        "class": cls,
        "package": pkg,
        "content-desc": a.get("desc", ""),
        "checkable": "false",
        "checked": "false",
        "clickable": a.get("clickable", "false"),
        "enabled": "true",
        "focusable": a.get("clickable", "false"),
        "focused": a.get("focused", "false"),
        "scrollable": "false",
        "long-clickable": a.get("long_clickable", "false"),
        "password": a.get("password", "false"),
        "selected": "false",
        "bounds": bounds,
    }
    head = "<node " + " ".join(f'{k}="{v}"' for k, v in attrs.items())
    return f"{head}>{children}</node>" if children else f"{head} />"


# A login screen as `uiautomator dump` writes it on Android 14: the app's window, then the status bar's.
LOGIN_XML = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
    '<hierarchy rotation="0">'
    + _node(
        0,
        "android.widget.FrameLayout",
        "[0,0][1080,2400]",
        children=_node(
            0,
            "android.widget.LinearLayout",
            "[0,128][1080,2400]",
            rid="com.example.bank:id/login_root",
            children=(
                _node(
                    0,
                    "android.widget.TextView",
                    "[64,300][1016,420]",
                    text="Welcome back",
                    rid="com.example.bank:id/title",
                )
                + _node(
                    1,
                    "android.widget.EditText",
                    "[64,520][1016,680]",
                    text="Email or username",
                    rid="com.example.bank:id/username",
                    clickable="true",
                    long_clickable="true",
                )
                + _node(
                    2,
                    "android.widget.EditText",
                    "[64,720][1016,880]",
                    text="Password",
                    rid="com.example.bank:id/password",
                    clickable="true",
                    long_clickable="true",
                    password="true",
                )
                + _node(
                    3,
                    "android.widget.Button",
                    "[64,960][1016,1100]",
                    text="Sign in",
                    rid="com.example.bank:id/sign_in",
                    clickable="true",
                )
                + _node(
                    4,
                    "android.widget.TextView",
                    "[64,1140][1016,1220]",
                    text="Forgot password?",
                    rid="com.example.bank:id/forgot",
                    clickable="true",
                )
            ),
        ),
    )
    + _node(
        1,
        "android.widget.FrameLayout",
        "[0,0][1080,128]",
        pkg="com.android.systemui",
        rid="com.android.systemui:id/status_bar",
        children=_node(
            0,
            "android.widget.TextView",
            "[64,36][220,96]",
            pkg="com.android.systemui",
            text="9:41",
            rid="com.android.systemui:id/clock",
        ),
    )
    + "</hierarchy>"
)
