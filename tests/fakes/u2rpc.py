"""The uiautomator2 server's JSON-RPC methods (AutomatorService, as served by u2.jar's
com.wetest.uia2 stub through jsonrpc4j), acting on the phone's state.

Results and errors are shaped as jsonrpc4j sends them: {"jsonrpc": "2.0", "id": .., "result": ..}
(void methods answer null), and exceptions as {"code": -32002 for UiObjectNotFoundException,
-32001 otherwise, "message": <exception class>, "data": <stack trace>}, which is what
uiautomator2.core._jsonrpc_call matches on ("uiautomator.UiObjectNotFoundException" in message,
"UiAutomation not connected" anywhere in the body).
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Awaitable, Callable
from typing import Any

from . import apps, interaction
from .render import render
from .state import PhoneState, RpcCall
from .ui import MASKS, UiNode, describe_selector, dump_u2, find, obj_info

NOT_FOUND = "androidx.test.uiautomator.UiObjectNotFoundException"
TRACE = (
    "\n\tat com.wetest.uia2.stub.AutomatorServiceImpl.{method}(AutomatorServiceImpl.java:712)"
    "\n\tat java.lang.reflect.Method.invoke(Native Method)"
    "\n\tat com.googlecode.jsonrpc4j.JsonRpcBasicServer.invoke(JsonRpcBasicServer.java:467)"
    "\n\tat com.googlecode.jsonrpc4j.JsonRpcBasicServer.handleObject(JsonRpcBasicServer.java:352)"
    "\n\tat com.googlecode.jsonrpc4j.JsonRpcBasicServer.handleRequest(JsonRpcBasicServer.java:251)"
    "\n\tat com.wetest.uia2.stub.AutomatorHttpServer.serve(AutomatorHttpServer.java:100)"
    "\n\tat fi.iki.elonen.NanoHTTPD$HTTPSession.execute(NanoHTTPD.java:957)"
    "\n\tat java.lang.Thread.run(Thread.java:1012)"
)
KEY_NAMES = {
    "home": 3,
    "back": 4,
    "left": 21,
    "right": 22,
    "up": 19,
    "down": 20,
    "center": 23,
    "menu": 82,
    "search": 84,
    "enter": 66,
    "delete": 67,
    "del": 67,
    "recent": 187,
    "volume_up": 24,
    "volume_down": 25,
    "volume_mute": 164,
    "camera": 27,
    "power": 26,
}


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def java_error(method: str, java_class: str, message: str, *, code: int = -32001) -> RpcError:
    return RpcError(code, java_class, f"{java_class}: {message}" + TRACE.format(method=method))


Method = Callable[[PhoneState, list[Any]], Awaitable[Any]]
METHODS: dict[str, dict[int, Method]] = {}


def rpc(name: str, *arities: int) -> Callable[[Method], Method]:
    def register(fn: Method) -> Method:
        for n in arities:
            METHODS.setdefault(name, {})[n] = fn
        return fn

    return register


async def call(state: PhoneState, request: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC request object -> the response object."""
    rid = request.get("id")
    method = request.get("method")
    params = request.get("params")
    # uiautomator2 sends `args or kwargs`: a call without arguments arrives as {} (no named
    # parameters, which jsonrpc4j matches to the zero-argument overload).
    args = list(params) if isinstance(params, list) else ([] if not params else [params])
    state.log.rpc.append(RpcCall(str(method), params))
    try:
        if not isinstance(method, str) or request.get("jsonrpc") != "2.0":
            raise RpcError(-32600, "invalid request")
        overloads = METHODS.get(method)
        if overloads is None:
            raise RpcError(-32601, "method not found")
        fn = overloads.get(len(args))
        if fn is None:
            raise RpcError(-32602, "method parameters invalid")
        left = state.faults.u2_disconnect_after_calls
        if left is not None and method != "ping":
            state.faults.u2_disconnect_after_calls = left - 1 if left > 0 else None
            state.faults.u2_not_connected = state.faults.u2_not_connected or left <= 0
        if state.faults.u2_not_connected and method != "ping":
            raise java_error(method, "java.lang.IllegalStateException", "UiAutomation not connected!")
        if state.faults.u2_latency_s:
            await asyncio.sleep(state.faults.u2_latency_s)
        return {"jsonrpc": "2.0", "id": rid, "result": await fn(state, args)}
    except RpcError as err:
        error: dict[str, Any] = {"code": err.code, "message": err.message}
        if err.data is not None:
            error["data"] = err.data
        return {"jsonrpc": "2.0", "id": rid, "error": error}


# --- selectors --------------------------------------------------------------------------------------


def _ui_object(sel: dict[str, Any]) -> bool:
    """Whether the server resolves `sel` as a UiObject (UiSelector) rather than a UiObject2
    (BySelector): with an index or instance, or a child/sibling chain (Selector.toUiObject2 and
    checkBySelectorNull in android-uiautomator-server)."""
    mask = int(sel.get("mask", 0))
    return bool(mask & (MASKS["index"] | MASKS["instance"]) or sel.get("childOrSibling"))


def _find(state: PhoneState, sel: Any, *, by_selector: bool = False) -> list[UiNode]:
    """What the server's lookup finds: a UiObject2 (BySelector) is looked for in every window
    (UiDevice.getWindowRoots), a UiObject (UiSelector) in the active window only (QueryController
    searches from getRootInActiveWindow). `by_selector`: the method tries a BySelector whatever
    the selector holds (`exist`)."""
    if not isinstance(sel, dict):
        raise RpcError(-32602, "method parameters invalid")
    if not state.screen_on:
        return []
    if _ui_object(sel) and not by_selector:
        return find([apps.active_window(state)], sel)
    return find(apps.windows(state), sel)


def _one(state: PhoneState, sel: Any, method: str) -> UiNode:
    found = _find(state, sel)
    if not found:
        raise java_error(method, NOT_FOUND, describe_selector(sel), code=-32002)
    return found[0]


async def _wait(state: PhoneState, sel: Any, timeout_ms: Any, *, gone: bool) -> bool:
    limit = max(0.0, float(timeout_ms) / 1000)
    if state.u2.max_wait_s is not None:
        limit = min(limit, state.u2.max_wait_s)
    deadline = time.monotonic() + limit
    while True:
        if bool(_find(state, sel)) != gone:
            return True
        if time.monotonic() >= deadline or not state.u2.running:
            return False
        state.u2.waiting.set()
        await asyncio.sleep(0.05)


@rpc("exist", 1)
async def exist(state: PhoneState, a: list[Any]) -> bool:
    chain = isinstance(a[0], dict) and bool(a[0].get("childOrSibling"))
    return bool(_find(state, a[0], by_selector=not chain))


@rpc("waitForExists", 2)
async def wait_for_exists(state: PhoneState, a: list[Any]) -> bool:
    return await _wait(state, a[0], a[1], gone=False)


@rpc("waitUntilGone", 2)
async def wait_until_gone(state: PhoneState, a: list[Any]) -> bool:
    return await _wait(state, a[0], a[1], gone=True)


@rpc("objInfo", 1)
async def obj_info_rpc(state: PhoneState, a: list[Any]) -> dict[str, object]:
    return obj_info(_one(state, a[0], "objInfo"))


@rpc("count", 1)
async def count(state: PhoneState, a: list[Any]) -> int:
    return len(_find(state, a[0]))


@rpc("objInfoOfAllInstances", 1)
async def all_infos(state: PhoneState, a: list[Any]) -> list[dict[str, object]]:
    return [obj_info(n) for n in _find(state, a[0])]


@rpc("click", 1, 2)
async def click_selector(state: PhoneState, a: list[Any]) -> bool:
    if isinstance(a[0], (int, float)):
        return await click_xy(state, a)
    node = _one(state, a[0], "click")
    left, top, right, bottom = node.bounds
    corner = a[1] if len(a) > 1 else "center"
    x, y = {
        "tl": (left + 5, top + 5),
        "topleft": (left + 5, top + 5),
        "br": (right - 5, bottom - 5),
        "bottomright": (right - 5, bottom - 5),
    }.get(str(corner), node.center)
    interaction.tap(state, x, y, source="u2.selector")
    return True


async def click_xy(state: PhoneState, a: list[Any]) -> bool:
    x, y = float(a[0]), float(a[1])
    if x < 0 or y < 0:
        return False
    interaction.tap(state, x, y, source="u2", duration_ms=int(a[2]) if len(a) > 2 else 100)
    return True


METHODS["click"][3] = click_xy


@rpc("longClick", 1, 2)
async def long_click(state: PhoneState, a: list[Any]) -> bool:
    node = _one(state, a[0], "longClick")
    interaction.tap(state, *node.center, source="u2.selector", duration_ms=500)
    return True


@rpc("setText", 2)
async def set_text(state: PhoneState, a: list[Any]) -> bool:
    interaction.set_field(state, _one(state, a[0], "setText"), str(a[1] or ""), method="u2.setText")
    return True


@rpc("clearTextField", 1)
async def clear_text_field(state: PhoneState, a: list[Any]) -> None:
    interaction.set_field(state, _one(state, a[0], "clearTextField"), "", method="u2.clearTextField")


@rpc("getText", 1)
async def get_text(state: PhoneState, a: list[Any]) -> str | None:
    return _one(state, a[0], "getText").a11y_text or None


@rpc("dragTo", 3, 4)
async def drag_to(state: PhoneState, a: list[Any]) -> bool:
    node = _one(state, a[0], "dragTo")
    x1, y1 = node.center
    x2, y2 = (a[1], a[2]) if len(a) == 4 else _one(state, a[1], "dragTo").center
    interaction.swipe(state, x1, y1, float(x2), float(y2), int(a[-1]) * 5, source="u2.drag")
    return True


# --- gestures and keys ------------------------------------------------------------------------------


@rpc("swipe", 3, 4, 5)
async def swipe(state: PhoneState, a: list[Any]) -> bool:
    if len(a) == 5:
        interaction.swipe(
            state, float(a[0]), float(a[1]), float(a[2]), float(a[3]), int(a[4]) * 5, source="u2"
        )
        return True
    node = _one(state, a[0], "swipe")
    left, top, right, bottom = node.bounds
    cx, cy = node.center
    end = {"up": (cx, top), "down": (cx, bottom - 1), "left": (left, cy), "right": (right - 1, cy)}.get(
        str(a[1])
    )
    if end is None:
        raise java_error("swipe", "java.lang.IllegalArgumentException", f"Unknown direction: {a[1]}")
    interaction.swipe(state, cx, cy, end[0], end[1], int(a[-1]) * 5, source="u2.selector")
    return True


@rpc("drag", 5)
async def drag(state: PhoneState, a: list[Any]) -> bool:
    interaction.swipe(
        state, float(a[0]), float(a[1]), float(a[2]), float(a[3]), int(a[4]) * 5, source="u2.drag"
    )
    return True


@rpc("swipePoints", 2)
async def swipe_points(state: PhoneState, a: list[Any]) -> bool:
    pts = [float(v) for v in a[0]]
    if len(pts) >= 4:
        interaction.swipe(
            state, pts[0], pts[1], pts[-2], pts[-1], int(a[1]) * 5 * (len(pts) // 2), source="u2.points"
        )
    return True


@rpc("injectInputEvent", 4)
async def inject(state: PhoneState, a: list[Any]) -> bool:
    action, x, y = int(a[0]), float(a[1]), float(a[2])
    if action == 0:
        state.u2.touch_down = (x, y, time.monotonic())
    elif action == 1 and state.u2.touch_down is not None:
        x0, y0, t0 = state.u2.touch_down
        state.u2.touch_down = None
        held = int((time.monotonic() - t0) * 1000)
        if abs(x - x0) + abs(y - y0) < 10:
            interaction.tap(state, x, y, source="u2.touch", duration_ms=held)
        else:
            interaction.swipe(state, x0, y0, x, y, held, source="u2.touch")
    return action in (0, 1, 2)


@rpc("pressKey", 1)
async def press_key(state: PhoneState, a: list[Any]) -> bool:
    code = KEY_NAMES.get(str(a[0]).lower())
    if code is None:
        return False
    interaction.press_key(state, code, source="u2")
    return True


@rpc("pressKeyCode", 1, 2)
async def press_key_code(state: PhoneState, a: list[Any]) -> bool:
    interaction.press_key(state, int(a[0]), source="u2", meta=int(a[1]) if len(a) > 1 else 0)
    return True


@rpc("wakeUp", 0)
async def wake_up(state: PhoneState, a: list[Any]) -> None:
    if not state.screen_on:
        interaction.press_key(state, 224, source="u2")


@rpc("sleep", 0)
async def sleep(state: PhoneState, a: list[Any]) -> None:
    if state.screen_on:
        interaction.press_key(state, 223, source="u2")


@rpc("isScreenOn", 0)
async def is_screen_on(state: PhoneState, a: list[Any]) -> bool:
    return state.screen_on


@rpc("openNotification", 0)
async def open_notification(state: PhoneState, a: list[Any]) -> bool:
    state.shade_open = True
    return True


METHODS["openQuickSettings"] = METHODS["openNotification"]


# --- screen, device and clipboard ---------------------------------------------------------------------


@rpc("dumpWindowHierarchy", 1, 2, 3)
async def dump(state: PhoneState, a: list[Any]) -> str:
    if "rpc:dumpWindowHierarchy" in state.printed:
        return state.printed["rpc:dumpWindowHierarchy"]
    wins = apps.windows(state) if state.screen_on else []
    if len(a) == 3 and a[2]:
        wins = [apps.active_window(state)] if state.screen_on else []
    return dump_u2(
        wins, rotation=state.rotation, compressed=bool(a[0]), max_depth=int(a[1]) if len(a) > 1 else 50
    )


@rpc("takeScreenshot", 2, 3)
async def screenshot(state: PhoneState, a: list[Any]) -> str | None:
    if state.faults.u2_screenshot_null:
        return None
    if len(a) == 3:
        path = f"/data/user/0/com.wetest.uia2/files/{a[0]}"
        return path
    data = render(state, "JPEG", quality=int(a[1]), scale=float(a[0]))
    return base64.b64encode(data).decode()


@rpc("deviceInfo", 0)
async def device_info(state: PhoneState, a: list[Any]) -> dict[str, object]:
    # As UiDevice reports them: the display's size as it is turned now (wm size keeps the natural).
    w, h = state.screen_size[::-1] if state.rotation % 2 else state.screen_size
    dp = 160 / state.density
    return {
        "currentPackageName": "com.android.systemui" if state.locked else state.foreground().package,
        "displayHeight": h,
        "displayRotation": state.rotation,
        "displaySizeDpX": int(w * dp),
        "displaySizeDpY": int(h * dp),
        "displayWidth": w,
        "productName": state.props.get("ro.product.name", ""),
        "screenOn": state.screen_on,
        "sdkInt": state.sdk,
        "naturalOrientation": state.rotation in (0, 2),
    }


@rpc("setClipboard", 2)
async def set_clipboard(state: PhoneState, a: list[Any]) -> None:
    state.clipboard = None if a[1] is None else str(a[1])


@rpc("getClipboard", 0)
async def get_clipboard(state: PhoneState, a: list[Any]) -> str | None:
    return None if state.faults.clipboard_unreadable else state.clipboard


@rpc("pasteClipboard", 0)
async def paste_clipboard(state: PhoneState, a: list[Any]) -> bool:
    interaction.paste(state)
    return True


@rpc("clearInputText", 0)
async def clear_input_text(state: PhoneState, a: list[Any]) -> None:
    rec = state.foreground()
    if rec.focus is not None:
        rec.fields[rec.focus] = ""


@rpc("freezeRotation", 1)
async def freeze_rotation(state: PhoneState, a: list[Any]) -> None:
    state.settings.setdefault("system", {})["accelerometer_rotation"] = "0" if a[0] else "1"


@rpc("setOrientation", 1)
async def set_orientation(state: PhoneState, a: list[Any]) -> None:
    state.rotation = {
        "natural": 0,
        "n": 0,
        "left": 1,
        "l": 1,
        "upsidedown": 2,
        "u": 2,
        "right": 3,
        "r": 3,
    }.get(str(a[0]), 0)


async def _true(state: PhoneState, a: list[Any]) -> bool:
    return True


async def _none(state: PhoneState, a: list[Any]) -> None:
    return None


async def _false(state: PhoneState, a: list[Any]) -> bool:
    return False


async def _pong(state: PhoneState, a: list[Any]) -> str:
    return "pong"


for _name, _arity, _fn in [
    ("ping", 0, _pong),
    ("getLastToast", 0, _none),
    ("getLastToast", 1, _none),
    ("clearLastToast", 0, _true),
    ("makeToast", 2, _true),
    ("getLastTraversedText", 0, _none),
    ("clearLastTraversedText", 0, _none),
    ("waitForIdle", 1, _none),
    ("waitForWindowUpdate", 2, _false),
    ("setToastListener", 1, _none),
    ("scrollForward", 3, _false),
    ("scrollBackward", 3, _false),
    ("scrollToBeginning", 4, _false),
    ("scrollToEnd", 4, _false),
    ("flingForward", 2, _false),
    ("flingBackward", 2, _false),
    ("flingToBeginning", 3, _false),
    ("flingToEnd", 3, _false),
    ("pinchIn", 3, _true),
    ("pinchOut", 3, _true),
    ("gesture", 6, _true),
    ("hasAnyWatcherTriggered", 0, _false),
    ("runWatchers", 0, _none),
]:
    METHODS.setdefault(_name, {})[_arity] = _fn


@rpc("scrollTo", 3)
async def scroll_to(state: PhoneState, a: list[Any]) -> bool:
    return bool(_find(state, a[1]))


@rpc("getConfigurator", 0)
async def get_configurator(state: PhoneState, a: list[Any]) -> dict[str, int]:
    return {
        "actionAcknowledgmentTimeout": 500,
        "keyInjectionDelay": 0,
        "scrollAcknowledgmentTimeout": 200,
        "waitForIdleTimeout": 0,
        "waitForSelectorTimeout": 0,
    }
