"""INSTALL_APP, UNINSTALL_APP, GRANT_PERMISSION, REVOKE_PERMISSION through the real adb server
against the fake phone: the APK pushed over sync to /data/local/tmp and `pm install -r`, `pm
uninstall`, `pm grant|revoke`, each read back with `pm list packages` and `dumpsys package`; the
phone's refusals (pm's own texts) with their codes; the owner's apps refused before the phone hears
a word of it."""

from __future__ import annotations

import asyncio

import pytest

from phoneuse_runtime.config.owner import IRIS_APP
from tests.device.adb.conftest import AdbServe, Served
from tests.fakes.apk import build_apk, catalog_apk
from tests.fakes.fs import SHARED, Node
from tests.fakes.phone import FakePhone
from tests.waiting import wait_until

P = "android.permission."
V1 = ("cmd",)
V2 = ("shell_v2", "cmd")
FEATURES = pytest.mark.parametrize("features", [V1, V2], ids=["shell_v1", "shell_v2"])
NOTES = "com.example.notes"


def drop(s: Served, name: str, data: bytes) -> None:
    folder = s.client.app.runtime.settings.data_dir / "files"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def shell_log(s: Served) -> list[str]:
    return [c for c in s.state.log.shell if "pm " in c or "dumpsys package" in c]


@FEATURES
async def test_install_grant_revoke_uninstall_on_the_phone(
    serve_adb: AdbServe, features: tuple[str, ...]
) -> None:
    s = await serve_adb(features=features, approvals="off")
    c = s.client
    apk = catalog_apk(
        s.state, NOTES, version_name="2.1", version_code=21, permissions=(P + "CAMERA", P + "INTERNET")
    )
    drop(s, "notes.apk", apk)
    done = await c.ok("INSTALL_APP", {"apk": "notes.apk"}, timeout_ms=20_000)
    assert done["package"] == NOTES and done["verified"] and not done["replaced"]
    assert done["via"] == "pm install" and done["granted"] == [P + "INTERNET"]
    pkg = s.state.packages[NOTES]
    assert pkg.version_code == 21 and pkg.granted == {P + "INTERNET"}
    installs = [cmd for cmd in s.state.log.shell if "pm install" in cmd]
    assert len(installs) == 1 and "/data/local/tmp/phoneuse-" in installs[0] and " -r " in installs[0]
    assert not [p for p, _ in s.state.files.list("/data/local/tmp") if p.startswith("phoneuse-")]  # removed
    granted = await c.ok("GRANT_PERMISSION", {"package": NOTES, "permission": P + "CAMERA"})
    assert granted["granted"] and granted["verified"] and granted["via"] == "pm grant"
    assert P + "CAMERA" in s.state.packages[NOTES].granted
    again = await c.ok("INSTALL_APP", {"apk": "notes.apk"}, timeout_ms=20_000)
    assert again["replaced"] and P + "CAMERA" in again["granted"]  # -r keeps what was granted
    revoked = await c.ok("REVOKE_PERMISSION", {"package": NOTES, "permission": P + "CAMERA"})
    assert not revoked["granted"] and revoked["verified"]
    assert P + "CAMERA" not in s.state.packages[NOTES].granted
    gone = await c.ok("UNINSTALL_APP", {"package": NOTES})
    assert gone["verified"] and gone["via"] == "pm uninstall" and NOTES not in s.state.packages


async def test_an_apk_on_the_phone_is_read_and_installed_from_a_copy(serve_adb: AdbServe) -> None:
    s = await serve_adb(approvals="off")  # held: tests/gateway/agent/test_package_approvals.py
    apk = catalog_apk(s.state, NOTES, permissions=(P + "RECORD_AUDIO",))
    s.state.files.write(f"{SHARED}/Download/notes.apk", apk)
    done = await s.client.ok("INSTALL_APP", {"apk": "/sdcard/Download/notes.apk"}, timeout_ms=20_000)
    assert done["package"] == NOTES and done["verified"] and done["permissions"] == [P + "RECORD_AUDIO"]
    assert await s.client.fail("INSTALL_APP", {"apk": "/sdcard/Download/none.apk"}) == "INVALID_PARAMS"
    iris = catalog_apk(s.state, IRIS_APP, version_code=99)
    s.state.files.write(f"{SHARED}/Download/iris.apk", iris)
    before = len(shell_log(s))
    response = await s.client.execute("INSTALL_APP", {"apk": "/storage/emulated/0/Download/iris.apk"})
    assert response.error.startswith("PERMISSION_DENIED: ") and IRIS_APP in response.error
    assert not [cmd for cmd in shell_log(s)[before:] if "pm install" in cmd]  # read, refused, never installed


async def test_the_phones_refusals_in_pms_words(serve_adb: AdbServe) -> None:
    s = await serve_adb(approvals="off")  # held: tests/gateway/agent/test_package_approvals.py
    c = s.client
    drop(s, "notes.apk", catalog_apk(s.state, NOTES, version_code=5, permissions=(P + "INTERNET",)))
    await c.ok("INSTALL_APP", {"apk": "notes.apk"}, timeout_ms=20_000)
    response = await c.execute("GRANT_PERMISSION", {"package": NOTES, "permission": P + "INTERNET"})
    assert response.error.startswith("UNSUPPORTED: ") and "not a changeable permission type" in response.error
    response = await c.execute("GRANT_PERMISSION", {"package": NOTES, "permission": P + "CAMERA"})
    assert response.error.startswith("INVALID_PARAMS: ") and "has not requested permission" in response.error
    response = await c.execute(
        "REVOKE_PERMISSION", {"package": "com.example.none", "permission": P + "CAMERA"}
    )
    assert response.error.startswith("INVALID_PARAMS: ") and "Unknown package" in response.error
    drop(s, "old.apk", catalog_apk(s.state, NOTES, version_code=4))
    response = await c.execute("INSTALL_APP", {"apk": "old.apk"}, timeout_ms=20_000)
    assert response.error.startswith("UNSUPPORTED: ") and "INSTALL_FAILED_VERSION_DOWNGRADE" in response.error
    drop(s, "unknown.apk", build_apk("com.example.unsigned"))  # a zip the phone will not take
    response = await c.execute("INSTALL_APP", {"apk": "unknown.apk"}, timeout_ms=20_000)
    assert response.error.startswith("INVALID_PARAMS: ") and "INSTALL_PARSE_FAILED" in response.error
    response = await c.execute("UNINSTALL_APP", {"package": "com.android.chrome"})  # a system app
    assert response.error.startswith("UNSUPPORTED: ") and "DELETE_FAILED_INTERNAL_ERROR" in response.error
    assert await c.fail("UNINSTALL_APP", {"package": "com.example.none"}) == "INVALID_PARAMS"


async def test_the_owners_apps_never_reach_the_phone(serve_adb: AdbServe) -> None:
    s = await serve_adb(approvals="off")  # held: tests/gateway/agent/test_package_approvals.py
    c = s.client
    drop(s, "iris.apk", catalog_apk(s.state, IRIS_APP, version_code=999))
    before = len(shell_log(s))
    assert await c.fail("INSTALL_APP", {"apk": "iris.apk"}) == "PERMISSION_DENIED"
    assert await c.fail("UNINSTALL_APP", {"package": "com.termux"}) == "PERMISSION_DENIED"
    for package in ("com.google.android.permissioncontroller", IRIS_APP):
        assert (
            await c.fail("GRANT_PERMISSION", {"package": package, "permission": P + "CAMERA"})
            == "PERMISSION_DENIED"
        )
        assert (
            await c.fail("REVOKE_PERMISSION", {"package": package, "permission": P + "CAMERA"})
            == "PERMISSION_DENIED"
        )
    assert shell_log(s)[before:] == []


@pytest.mark.parametrize("sdk", ["29", "34"], ids=["android-10", "android-14"])
async def test_an_install_time_permission_is_unsupported_in_either_android_s_words(
    serve_adb: AdbServe, sdk: str
) -> None:
    """Android 12 added "requested by PKG" to the text; both are read as the same refusal."""
    phone = FakePhone()
    phone.state.props["ro.build.version.sdk"] = sdk
    s = await serve_adb(phone, approvals="off")
    drop(s, "notes.apk", catalog_apk(s.state, NOTES, permissions=(P + "INTERNET",)))
    await s.client.ok("INSTALL_APP", {"apk": "notes.apk"}, timeout_ms=20_000)
    response = await s.client.execute("REVOKE_PERMISSION", {"package": NOTES, "permission": P + "INTERNET"})
    assert response.error.startswith("UNSUPPORTED: ") and "install-time permission" in response.error
    assert ("requested by" in response.error) == (sdk == "34")
    assert P + "INTERNET" in s.state.packages[NOTES].granted


async def test_a_symlink_on_the_phone_is_refused_naming_the_rule(serve_adb: AdbServe) -> None:
    s = await serve_adb(approvals="off")
    apk = catalog_apk(s.state, NOTES)
    s.state.files.write("/data/local/tmp/private.apk", apk)
    # A link in shared storage to a file elsewhere (as `ln -s` leaves it): sync's STAT shows the link.
    s.state.files.nodes[f"{SHARED}/Download/link.apk"] = Node(0o120777, b"/data/local/tmp/private.apk")
    response = await s.client.execute("INSTALL_APP", {"apk": "/sdcard/Download/link.apk"})
    assert response.error.startswith("PERMISSION_DENIED: ") and "symlink" in response.error
    assert NOTES not in s.state.packages


async def test_an_apk_on_the_phone_is_read_before_the_hold_and_the_owner_is_asked_about_it(
    serve_adb: AdbServe,
) -> None:
    """The owner's question about an APK on the phone names its package, version and permissions
    (the APK copied off the phone and read before the hold); one swapped for another after the
    question is CONFLICT, nothing installed."""
    s = await serve_adb(approvals="always")
    s.state.files.write(
        f"{SHARED}/Download/notes.apk", catalog_apk(s.state, NOTES, permissions=(P + "RECORD_AUDIO",))
    )
    approvals = s.client.app.runtime.approvals
    call = asyncio.ensure_future(
        s.client.execute("INSTALL_APP", {"apk": "/sdcard/Download/notes.apk"}, timeout_ms=20_000)
    )
    await wait_until(lambda: bool(approvals.pending()), within_s=10)
    [hold] = approvals.pending()
    assert NOTES in hold.reason and P + "RECORD_AUDIO" in hold.reason, hold.reason
    # Swapped while the owner reads: another APK in its place.
    s.state.files.write(
        f"{SHARED}/Download/notes.apk",
        catalog_apk(s.state, NOTES, version_code=2, permissions=(P + "CAMERA",)),
    )
    approvals.answer(hold.approval_id, approved=True, by="owner")
    response = await call
    assert response.error.startswith("CONFLICT: "), response.error
    assert not [cmd for cmd in shell_log(s) if "pm install" in cmd]
