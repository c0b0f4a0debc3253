"""The fake `termux-*` commands: each executable in bin/ calls `main()`, which acts on the state
file named by $FAKE_TERMUX_STATE (state.py) and prints what Termux:API prints.

The shapes follow the Termux:API app's sources (termux/termux-api, app/src/main/java/com/termux/
api/apis/*.java) and the scripts of termux/termux-api-package (scripts/*.in): JsonWriter output
indented by two spaces, dates as local "yyyy-MM-dd HH:mm:ss", the permission error object of
TermuxApiPermissionActivity, the order of each list, and each script's options. Only the standard
library: these run as separate processes, started by the runtime under test.
"""

from __future__ import annotations

import getopt
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tests.fakes.termux.state import ENV, locked

# The permissions TermuxApiReceiver checks before each API (its checkAndRequestPermissions calls).
PERMISSIONS = {
    "termux-sms-list": ["android.permission.READ_SMS", "android.permission.READ_CONTACTS"],
    "termux-sms-send": ["android.permission.READ_PHONE_STATE", "android.permission.SEND_SMS"],
    "termux-contact-list": ["android.permission.READ_CONTACTS"],
    "termux-call-log": ["android.permission.READ_CALL_LOG"],
    "termux-telephony-call": ["android.permission.CALL_PHONE"],
    "termux-telephony-deviceinfo": ["android.permission.READ_PHONE_STATE"],
    "termux-wifi-connectioninfo": ["android.permission.ACCESS_FINE_LOCATION"],
    # "Modify system settings": Settings.System.canWrite, checked before BrightnessAPI runs
    "termux-brightness": ["android.permission.WRITE_SETTINGS"],
}
SMS_TYPES = {"all": 0, "inbox": 1, "sent": 2, "draft": 3, "outbox": 4, "failed": 5, "queued": 6}
TYPE_NAMES = {1: "inbox", 2: "sent", 3: "draft", 4: "outbox", 5: "failed"}


def _print_json(value: object) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _date(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def _digits(number: str) -> str:
    return "".join(c for c in number if c.isdigit())


def _hang() -> None:
    # What a command does when no Termux:API app answers its broadcast: wait forever.
    while True:
        time.sleep(3600)


def _usage_error(name: str, message: str) -> None:
    print(f"{name}: {message}")
    sys.exit(1)


def main() -> None:
    name = Path(sys.argv[0]).name
    path = Path(os.environ[ENV])
    with locked(path) as state:
        state["runs"].append([name, *sys.argv[1:]])
        # "*": the Termux:API app is missing, so every termux-* command waits (getprop does not).
        hang = name in state["hang"] or ("*" in state["hang"] and name.startswith("termux-"))
        denied = [p for p in PERMISSIONS.get(name, []) if p in state["denied"]]
        no_access = name == "termux-notification-list" and not state["notification_access"]
        printed = state.get("printed", {}).get(name)
    if printed is not None:
        sys.stdout.write(printed)
        return
    if hang or no_access:
        _hang()
    if denied:
        plural = "s" if len(denied) > 1 else ""
        _print_json(
            {
                "error": f"Please grant the following permission{plural} to use this command: "
                + " ,".join(denied)
            }
        )
        return
    COMMANDS[name](name, sys.argv[1:], path)


def sms_list(name: str, argv: list[str], path: Path) -> None:
    try:
        opts, _ = getopt.getopt(argv, "hqvcdf:l:no:t:")
    except getopt.GetoptError as exc:
        _usage_error(name, str(exc))
    limit, offset, kind, address = 10, 0, "all", None
    for opt, value in opts:
        if opt == "-l":
            limit = int(value)
        elif opt == "-o":
            offset = int(value)
        elif opt == "-t":
            kind = value
        elif opt == "-f":
            address = value
    if kind not in SMS_TYPES:
        print(f"{name}: Unsupported message type '{kind}'.", file=sys.stderr)
        sys.exit(1)
    type_column = SMS_TYPES[kind]
    with locked(path) as state:
        rows = list(state["sms"])
        # PhoneLookup matches numbers loosely; the digits are close enough for the fake.
        names = {_digits(c["number"]): c["name"] for c in state["contacts"] if c.get("number")}
    if address is None and type_column in (1, 2, 3, 4):  # Sms.Inbox/Sent/Draft/Outbox URIs
        rows = [r for r in rows if SMS_TYPES[r["type"]] == type_column]
    if address is not None:
        rows = [r for r in rows if r["address"] == address]
    rows.sort(key=lambda r: r["date_ms"], reverse=True)  # "date DESC LIMIT l OFFSET o"
    rows = rows[offset : offset + limit]
    out = []
    for r in reversed(rows):  # the API prints the latest last
        box = TYPE_NAMES.get(SMS_TYPES[r["type"]], "")
        item: dict[str, Any] = {"threadid": r["threadid"], "type": box, "read": r["read"]}
        sender = names.get(_digits(r["address"]))
        if sender is not None:
            item["sender"] = sender if box == "inbox" else "You"
        item.update(address=r["address"], number=r["address"], received=_date(r["date_ms"]), body=r["body"])
        item["_id"] = r["_id"]
        out.append(item)
    _print_json(out)


def sms_send(name: str, argv: list[str], path: Path) -> None:
    try:
        opts, rest = getopt.getopt(argv, "hn:s:")
    except getopt.GetoptError as exc:
        _usage_error(name, str(exc))
    recipients = [v for o, v in opts if o == "-n"]
    if not recipients:
        _usage_error(name, "no recipient number given")
    body = " ".join(rest) + "\n" if rest else sys.stdin.read()  # `echo "$@"` adds a newline
    numbers = recipients[-1].split(",")  # --esa recipients: a comma-separated array
    with locked(path) as state:
        state["sent_log"].append({"numbers": numbers, "body": body})
        outcome = state["sms_send"]
        if outcome == "silent":
            return  # exit 0, nothing printed, nothing stored: the phone did not send it
        for number in numbers:
            new_id = max((m["_id"] for m in state["sms"]), default=0) + 1
            state["sms"].append(
                {
                    "_id": new_id,
                    "threadid": 5,
                    "type": "failed" if outcome == "failed" else "sent",
                    "read": True,
                    "address": number,
                    # WithStringInput trims its input by default (trimInput()).
                    "body": body.strip(),
                    "date_ms": int(time.time() * 1000),
                }
            )


def contact_list(name: str, argv: list[str], path: Path) -> None:
    if argv:
        _usage_error(name, "too many arguments")
    with locked(path) as state:
        contacts = [c for c in state["contacts"] if c.get("number")]
    contacts.sort(key=lambda c: c["name"])
    _print_json([{"name": c["name"], "number": c["number"]} for c in contacts])


def _duration(seconds: int) -> str:
    hours, mins, secs = seconds // 3600, (seconds % 3600) // 60, seconds % 60
    return (f"{hours:02d}:" if hours else "") + f"{mins:02d}:{secs:02d}"


def call_log(name: str, argv: list[str], path: Path) -> None:
    try:
        opts, _ = getopt.getopt(argv, "hl:o:")
    except getopt.GetoptError as exc:
        _usage_error(name, str(exc))
    limit, offset = 10, 0
    for opt, value in opts:
        if not value.isdigit():
            print(f"ERROR: The {opt} value '{value}' is not a positive number.", file=sys.stderr)
            sys.exit(1)
        if opt == "-l":
            limit = int(value)
        elif opt == "-o":
            offset = int(value)
    with locked(path) as state:
        rows = sorted(state["calls"], key=lambda r: r["date_ms"], reverse=True)[offset : offset + limit]
    _print_json(
        [
            {
                "name": r["name"] or "UNKNOWN_CALLER",
                "phone_number": r["phone_number"],
                "type": r["type"],
                "date": _date(r["date_ms"]),
                "duration": _duration(r["duration_s"]),
                "sim_id": r["sim_id"],
            }
            for r in reversed(rows)  # cur.moveToLast() then moveToPrevious(): oldest first
        ]
    )


def telephony_call(name: str, argv: list[str], path: Path) -> None:
    if len(argv) != 1:
        print(f"{name}: No single number to call specified.", file=sys.stderr)
        sys.exit(1)
    with locked(path) as state:
        state["dialed"].append(argv[0])


def telephony_deviceinfo(name: str, argv: list[str], path: Path) -> None:
    with locked(path) as state:
        _print_json(state["telephony"])


def notification_list(name: str, argv: list[str], path: Path) -> None:
    with locked(path) as state:
        notes = list(state["notifications"])
    out = []
    for n in notes:
        item = {k: v for k, v in n.items() if k != "when_ms"}
        item["when"] = _date(n["when_ms"])
        out.append(item)
    _print_json(out)


def clipboard_get(name: str, argv: list[str], path: Path) -> None:
    with locked(path) as state:
        sys.stdout.write(state["clipboard"])  # the text itself, no newline added


def clipboard_set(name: str, argv: list[str], path: Path) -> None:
    text = " ".join(argv) if argv else sys.stdin.read()  # not trimmed (trimInput() false)
    with locked(path) as state:
        state["clipboard"] = text


def battery_status(name: str, argv: list[str], path: Path) -> None:
    with locked(path) as state:
        _print_json(state["battery"])


def wifi_connectioninfo(name: str, argv: list[str], path: Path) -> None:
    """WifiAPI.onReceiveWifiConnectionInfo: the SSID with its quotes removed; without the
    location permission Android hides it as <unknown ssid>."""
    with locked(path) as state:
        wifi = state["wifi"]
    if wifi is None:
        _print_json({"API_ERROR": "No current connection"})
        return
    _print_json(
        {
            "bssid": "02:00:00:00:00:00",
            "frequency_mhz": 5180,
            "ip": "192.168.1.42",
            "link_speed_mbps": 866,
            "mac_address": "02:00:00:00:00:00",
            "network_id": 0,
            "rssi": -50,
            "ssid": wifi["ssid"],
            "ssid_hidden": False,
            "supplicant_state": wifi["supplicant_state"],
        }
    )


def open_url(name: str, argv: list[str], path: Path) -> None:
    if len(argv) != 1:
        _usage_error(name, "usage: termux-open-url url")
    with locked(path) as state:
        state["opened_urls"].append(argv[0])


def toast(name: str, argv: list[str], path: Path) -> None:
    text = " ".join(argv) if argv else sys.stdin.read()
    with locked(path) as state:
        state["toasts"].append(text)


# --- the phone's settings (issue 27): VolumeAPI, BrightnessAPI, WifiAPI.onReceiveWifiEnable ---------
VOLUME_STREAMS = ("alarm", "music", "notification", "ring", "system", "call")  # streamMap's order


def volume(name: str, argv: list[str], path: Path) -> None:
    with locked(path) as state:
        if not argv:
            _print_json(
                [
                    {"stream": s, "volume": state["volumes"][s][0], "max_volume": state["volumes"][s][1]}
                    for s in VOLUME_STREAMS
                ]
            )
            return
        if len(argv) != 2 or not argv[1].isdigit():
            print(f"Usage: {name} stream volume")
            sys.exit(1)
        if argv[0] not in VOLUME_STREAMS:
            print(f"ERROR: Unknown stream: {argv[0]}")
            return
        level, top = int(argv[1]), state["volumes"][argv[0]][1]
        state["volumes"][argv[0]][0] = max(0, min(level, top))  # setStreamVolume, clamped


def brightness(name: str, argv: list[str], path: Path) -> None:
    with locked(path) as state:
        if not argv:
            print(state["brightness"])
        elif argv == ["auto"]:
            state["brightness_auto"] = True
            print("setting brightness  auto to true")
            print(state["brightness"])
        elif len(argv) == 1 and argv[0].isdigit():
            state["brightness_auto"] = False
            state["brightness"] = max(0, min(int(argv[0]), 255))
            print("setting brightness  auto to false")
            print(f"setting brightness to {state['brightness']}")
        else:
            print("ERROR: Arg must be a number between 0 - 255 or auto!")
            print(f"Usage: {name} brightness")


def wifi_enable(name: str, argv: list[str], path: Path) -> None:
    if argv not in (["true"], ["false"]):
        print(f"Usage: {name} [true | false]")
        sys.exit(1)
    with locked(path) as state:
        sdk = int(state["props"].get("ro.build.version.sdk", "34"))
        if sdk < 29:  # setWifiEnabled does nothing for an app from Android 10 on, and says nothing
            state["wifi_enabled"] = argv == ["true"]


def getprop(name: str, argv: list[str], path: Path) -> None:
    with locked(path) as state:
        props = state["props"]
    if argv:
        print(props.get(argv[0], ""))
        return
    for key in sorted(props):
        print(f"[{key}]: [{props[key]}]")


COMMANDS = {
    "termux-sms-list": sms_list,
    "termux-sms-send": sms_send,
    "termux-contact-list": contact_list,
    "termux-call-log": call_log,
    "termux-telephony-call": telephony_call,
    "termux-telephony-deviceinfo": telephony_deviceinfo,
    "termux-notification-list": notification_list,
    "termux-clipboard-get": clipboard_get,
    "termux-clipboard-set": clipboard_set,
    "termux-battery-status": battery_status,
    "termux-wifi-connectioninfo": wifi_connectioninfo,
    "termux-open-url": open_url,
    "termux-toast": toast,
    "termux-volume": volume,
    "termux-brightness": brightness,
    "termux-wifi-enable": wifi_enable,
    "getprop": getprop,
}
