"""Selector translation for the uiautomator2 server, its answers as nodes, and error translation."""

from __future__ import annotations

import re

import adbutils

from phoneuse_runtime.device.adb.errors import RpcError, rpc_failure, translate
from phoneuse_runtime.device.adb.ui import node_from_info, u2_selector
from phoneuse_runtime.kernel.errors import DeviceUnavailable, ElementNotFound, PermissionDenied
from phoneuse_runtime.screen.selector import Selector


def _java_regex(pattern: str) -> re.Pattern[str]:
    """The Java regexes u2_selector writes, for Python: \\Q...\\E quoting becomes re.escape."""
    return re.compile(re.sub(r"\\Q(.*?)\\E", lambda m: re.escape(m.group(1)), pattern))


def test_selector_fields_and_masks() -> None:
    sel = u2_selector(Selector(text="Send", description="d", index=2))
    assert sel["text"] == "Send" and sel["description"] == "d" and sel["instance"] == 2
    assert sel["mask"] == 0x01 | 0x40 | 0x01000000
    full = u2_selector(Selector(resource_id="com.x:id/send", class_name="android.widget.Button"))
    assert full["resourceId"] == "com.x:id/send" and full["className"] == "android.widget.Button"


def test_short_resource_ids_and_class_names_match_as_the_runtime_does() -> None:
    sel = u2_selector(Selector(resource_id="send.btn", class_name="EditText"))
    rid, cls = _java_regex(sel["resourceIdMatches"]), _java_regex(sel["classNameMatches"])
    assert rid.match("com.x:id/send.btn") and rid.match("send.btn")
    assert not rid.match("com.x:id/sendXbtn") and not rid.match("com.x:id/resend.btn")
    assert cls.match("android.widget.EditText") and cls.match("EditText")
    assert not cls.match("android.widget.AutoEditText")


def test_obj_info_as_a_node_taps_the_visible_part() -> None:
    node = node_from_info(
        {
            "bounds": {"left": 0, "top": 2300, "right": 1080, "bottom": 2600},
            "visibleBounds": {"left": 0, "top": 2300, "right": 1080, "bottom": 2400},
            "className": "android.widget.Button",
            "resourceName": "com.x:id/send",
            "text": "Send",
            "contentDescription": None,
            "clickable": True,
            "enabled": True,
            "focused": False,
        }
    )
    assert node.bounds == (0, 2300, 1080, 2400)
    assert node.center == (540, 2350)
    assert (node.text, node.resource_id, node.description) == ("Send", "com.x:id/send", "")
    assert node.clickable


def test_rpc_errors_by_the_java_exception_they_name() -> None:
    not_found = "androidx.test.uiautomator.UiObjectNotFoundException: x"
    assert rpc_failure("objInfo", not_found, "").kind == "not_found"
    dead = "java.lang.IllegalStateException: UiAutomation not connected!"
    assert rpc_failure("click", dead, "").kind == "dead"
    inject = "java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS permission"
    assert rpc_failure("click", "x", inject).kind == "inject_permission"
    assert rpc_failure("click", "java.lang.NullPointerException", "").kind == "failed"


def test_translation_in_one_place() -> None:
    assert isinstance(translate(RpcError("objInfo", "not_found", "x"), "finding"), ElementNotFound)
    assert isinstance(translate(RpcError("click", "inject_permission", "x"), "tapping"), PermissionDenied)
    gone = translate(adbutils.AdbError("device 'X' not found"), "tapping")
    assert isinstance(gone, DeviceUnavailable) and "device 'X' not found" in gone.message
    assert isinstance(translate(EOFError(), "reading"), DeviceUnavailable)
    assert isinstance(translate(TimeoutError(), "reading"), DeviceUnavailable)  # outside a call
