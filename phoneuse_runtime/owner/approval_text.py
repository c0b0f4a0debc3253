"""What the owner reads before answering an approval: what the call does and to whom, first.

An approval shown in the order the params arrived, cut at a length, can hide its recipient: a
padded `body` sent first pushed `to` past the cut. So the text is always laid out as the action,
then its target (`to`, number, URL, package, component, intent action, data, APK, permission,
the app it runs in), never cut, then the rest, cut to fit; every value with its control, format
and bidi characters stripped (a right-to-left override could make `+1900...` read as something
else). The Iris app's `picker.approval` and the terminal's `approvals list` both show it, and
the frame carries the whole call beside it (`params`), one tap away; the MCP client's user,
where the owner made them an approver (`mcp_client_is_owner`), reads the same line and every
param (`prompt`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

from phoneuse_runtime.kernel.limits import shorten

# The params that say to whom or to what a call is aimed, in the order they are shown.
TARGET_KEYS = (
    "to",
    "number",
    "url",
    "package",
    "component",
    "action",
    "data",
    "command",
    "name",
    "apk",  # INSTALL_APP's APK, and the permission granted or revoked (issue 27)
    "permission",
)
PREVIEW_CHARS = 200  # the whole line; its head (action and target) is never cut


def stripped(text: str) -> str:
    """`text` without control, format, bidi or separator characters (ZWJ stays, for emoji);
    a line break or tab becomes a space, so a value cannot fake a second line."""
    if text.isprintable():
        return text
    out = []
    for char in text:
        category = unicodedata.category(char)
        if char in "\n\r\t\v\f\u2028\u2029\x85":
            out.append(" ")
        elif category in ("Cc", "Cf", "Zl", "Zp") and char != "\u200d":
            continue
        else:
            out.append(char)
    return "".join(out)


def _pair(key: str, value: str) -> str:
    return f"{stripped(key)}={stripped(value)}"


def target(params: Mapping[str, str], app_target: str | None = None) -> str:
    """The call's target, as `key=value` pairs in TARGET_KEYS order (and `in APP`), never cut."""
    parts = [_pair(key, params[key]) for key in TARGET_KEYS if params.get(key)]
    if app_target:
        parts.append(f"in {stripped(app_target)}")
    return " ".join(parts)


def call_line(
    name: str, params: Mapping[str, str], app_target: str | None = None, *, limit: int = PREVIEW_CHARS
) -> str:
    """`SEND_MESSAGE to=+1555 in com.whatsapp body=hi`: the action and its target whole, then
    the other params (in key order), cut so the line stays within `limit` where it can."""
    head = " ".join(part for part in (stripped(name), target(params, app_target)) if part)
    rest = " ".join(_pair(key, value) for key, value in sorted(params.items()) if key not in TARGET_KEYS)
    if not rest:
        return head
    room = limit - len(head) - 1
    if room < 2:
        return f"{head} …" if rest else head
    return f"{head} {shorten(rest, room)}"


def full_params(params: Mapping[str, str]) -> dict[str, str]:
    """Every param, uncut, in the same order (target first), stripped as `call_line` strips."""
    ordered = [key for key in TARGET_KEYS if key in params] + sorted(
        k for k in params if k not in TARGET_KEYS
    )
    return {stripped(key): stripped(params[key]) for key in ordered}


def prompt(name: str, params: Mapping[str, str], app_target: str | None, *, who: str, reason: str) -> str:
    """The whole question, for a front end that shows one text (MCP's elicitation): the call
    line (as the Iris app's `command`), the reason, then every param uncut, target first."""
    every = " ".join(_pair(key, value) for key, value in full_params(params).items())
    return (
        f"{stripped(who)} asks to run {call_line(name, params, app_target)}\n"
        f"Held because: {stripped(reason)}\n"
        f"Every param: {every}\n"
        "Approve it?"
    )
