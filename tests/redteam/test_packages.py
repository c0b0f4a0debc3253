"""The agent, with a valid token, goes for the owner's apps through the package manager (issue 27):
uninstalling the Iris app or Termux, replacing the Iris app with an APK of its own (from the files
directory, from the phone's storage, or swapped in after the owner read an approval for another
app), granting permissions to the permission controller or an owner's app, revoking the Iris app's.
Through the real server: on the fake phone behind the real adb server, where each test checks that
`pm` never heard of it and the owner's packages are as they were; on the sim behind a gateway with
a paired Iris app, where nothing is even offered for approval."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from phoneuse_runtime.config.owner import IRIS_APP
from phoneuse_runtime.device.sim.device import SimDevice
from tests.fakes.apk import build_apk, catalog_apk
from tests.fakes.fs import SHARED
from tests.fakes.state import Package

from ..device.adb.conftest import AdbServe, Served
from ..gateway.conftest import GatewayServer, IrisClient

P = "android.permission."
OWNERS = (IRIS_APP, "com.termux", "com.termux.api", "com.termux.boot")
CONTROLLERS = ("com.google.android.permissioncontroller", "com.android.permissioncontroller")


async def owners_phone(serve_adb: AdbServe) -> Served:
    """The fake phone with the owner's apps on it, the Iris app holding its notifications."""
    s = await serve_adb()
    for i, name in enumerate((*OWNERS, *CONTROLLERS)):
        s.state.packages[name] = Package(
            name=name,
            label=name,
            system=name in CONTROLLERS,
            uid=10400 + i,
            version_code=7,
            requested=[P + "POST_NOTIFICATIONS", P + "CAMERA"],
            granted={P + "POST_NOTIFICATIONS"},
        )
    return s


def untouched(s: Served, before: int) -> None:
    heard = [c for c in s.state.log.shell[before:] if "pm " in c or "dumpsys package" in c]
    assert heard == [], heard
    for name in (*OWNERS, *CONTROLLERS):
        pkg = s.state.packages[name]
        assert pkg.version_code == 7 and pkg.granted == {P + "POST_NOTIFICATIONS"}, name


def files(s: Served) -> Path:
    folder = s.client.app.runtime.settings.data_dir / "files"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.parametrize("package", OWNERS)
async def test_uninstalling_an_owners_app(serve_adb: AdbServe, package: str) -> None:
    s = await owners_phone(serve_adb)
    before = len(s.state.log.shell)
    response = await s.client.execute("UNINSTALL_APP", {"package": package})
    assert response.error.startswith("PERMISSION_DENIED: UNINSTALL_APP: ") and package in response.error
    untouched(s, before)


async def test_replacing_the_iris_app_from_the_files_directory_or_the_phone(serve_adb: AdbServe) -> None:
    s = await owners_phone(serve_adb)
    iris = catalog_apk(s.state, IRIS_APP, version_code=99, permissions=(P + "READ_SMS",))
    folder = files(s)
    (folder / "update.apk").write_bytes(iris)  # named as anything: its manifest says what it is
    before = len(s.state.log.shell)
    response = await s.client.execute("INSTALL_APP", {"apk": "update.apk"})
    assert response.error.startswith("PERMISSION_DENIED: ") and IRIS_APP in response.error
    untouched(s, before)
    s.state.files.write(f"{SHARED}/Download/update.apk", iris)
    # An APK on the phone is copied off it and read before any hold: refused, nobody asked.
    before = len(s.state.log.shell)
    response = await s.client.execute("INSTALL_APP", {"apk": "/sdcard/Download/update.apk"})
    assert response.error.startswith("PERMISSION_DENIED: ") and IRIS_APP in response.error
    assert not s.client.app.runtime.approvals.pending()
    assert not [c for c in s.state.log.shell[before:] if "pm install" in c]
    assert s.state.packages[IRIS_APP].version_code == 7


@pytest.mark.parametrize("package", [*CONTROLLERS, IRIS_APP, "com.termux"])
async def test_granting_to_the_permission_controller_or_an_owners_app(
    serve_adb: AdbServe, package: str
) -> None:
    s = await owners_phone(serve_adb)
    before = len(s.state.log.shell)
    response = await s.client.execute("GRANT_PERMISSION", {"package": package, "permission": P + "CAMERA"})
    assert response.error.startswith("PERMISSION_DENIED: GRANT_PERMISSION: "), response.error
    untouched(s, before)


@pytest.mark.parametrize("permission", [P + "POST_NOTIFICATIONS", P + "CAMERA"])
async def test_revoking_the_iris_apps_permissions(serve_adb: AdbServe, permission: str) -> None:
    """Without its notifications the owner would never see an approval come in."""
    s = await owners_phone(serve_adb)
    before = len(s.state.log.shell)
    response = await s.client.execute("REVOKE_PERMISSION", {"package": IRIS_APP, "permission": permission})
    assert response.error.startswith("PERMISSION_DENIED: REVOKE_PERMISSION: ") and IRIS_APP in response.error
    untouched(s, before)


async def test_an_apk_swapped_for_the_iris_app_after_the_owner_read_the_approval(
    server: GatewayServer, app: IrisClient
) -> None:
    """The agent asks to install a harmless APK, and once the owner has read it, writes the Iris
    app's over it: the owner's approve installs nothing."""
    folder = server.data_dir / "files"
    folder.mkdir(parents=True, exist_ok=True)
    apk = folder / "notes.apk"
    apk.write_bytes(build_apk("com.example.notes"))
    call = asyncio.ensure_future(server.grpc.execute("INSTALL_APP", {"apk": "notes.apk"}, timeout_ms=20_000))
    picker = (await app.next("picker.approval"))["payload"]
    assert "com.example.notes" in picker["reason"] and IRIS_APP not in picker["reason"]
    apk.write_bytes(build_apk(IRIS_APP, version_code=99))
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "approve"})
    response = await call
    assert response.error.startswith("PERMISSION_DENIED: ") and IRIS_APP in response.error
    apk.write_bytes(build_apk("com.example.other"))  # any other swap: the bytes are not those approved
    call = asyncio.ensure_future(server.grpc.execute("INSTALL_APP", {"apk": "notes.apk"}, timeout_ms=20_000))
    picker = (await app.next("picker.approval"))["payload"]
    apk.write_bytes(build_apk("com.example.notes", version_code=2, permissions=(P + "READ_SMS",)))
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "approve"})
    assert (await call).error.startswith("CONFLICT: ")
    device = server.app.runtime.device
    assert isinstance(device, SimDevice)
    for package in (IRIS_APP, "com.example.notes", "com.example.other"):
        assert await device.package_state(package) is None
