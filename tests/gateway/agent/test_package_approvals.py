"""INSTALL_APP and the other `owner_actions` wait for the owner (issue 27): held under approvals
"paired" even with nothing paired (the terminal's `approvals` answers), answered in the Iris app,
never under "off"; the approval names the APK, its package and the permissions it asks for; the
owner's own apps are refused before anything is held."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from phoneuse_runtime.cli.doctor import approvals_check
from phoneuse_runtime.config.owner import IRIS_APP
from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.rpc import protocol_pb2 as pb
from tests.fakes.apk import build_apk

from ..conftest import GatewayFactory, GatewayServer, IrisClient
from .test_terminal_approvals import cli

P = "android.permission."
NOTES = "com.example.notes"
PERMS = (P + "CAMERA", P + "READ_CONTACTS", P + "INTERNET")


def drop(server: GatewayServer, name: str, package: str = NOTES) -> None:
    folder = server.data_dir / "files"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(build_apk(package, version_name="3.2", version_code=32, permissions=PERMS))


def install(server: GatewayServer, apk: str = "notes.apk") -> asyncio.Future[pb.ActionResponse]:
    return asyncio.ensure_future(server.grpc.execute("INSTALL_APP", {"apk": apk}, timeout_ms=20_000))


def names_everything(text: str) -> bool:
    return "notes.apk" in text and NOTES in text and "3.2" in text and all(p in text for p in PERMS)


async def installed(server: GatewayServer) -> bool:
    device = server.app.runtime.device
    assert isinstance(device, SimDevice)
    return await device.package_state(NOTES) is not None


async def test_the_iris_app_approves_an_install_that_names_apk_package_and_permissions(
    server: GatewayServer, app: IrisClient
) -> None:
    drop(server, "notes.apk")
    call = install(server)
    picker = (await app.next("picker.approval"))["payload"]
    assert picker["action"] == "INSTALL_APP" and picker["command"] == "INSTALL_APP apk=notes.apk"
    assert picker["target"] == "apk=notes.apk"  # the thing installed is the call's target, never cut
    assert names_everything(picker["reason"]), picker["reason"]
    assert "sha256" in picker["reason"] and NOTES in picker["description"]
    assert not call.done() and not await installed(server)
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "approve"})
    response = await call
    assert response.success, response.error
    assert json.loads(response.result_json)["package"] == NOTES and await installed(server)


async def test_the_iris_app_denies_a_revoke(server: GatewayServer, app: IrisClient) -> None:
    call = asyncio.ensure_future(
        server.grpc.execute(
            "REVOKE_PERMISSION",
            {"package": "com.whatsapp", "permission": P + "READ_CONTACTS"},
            timeout_ms=20_000,
        )
    )
    picker = (await app.next("picker.approval"))["payload"]
    assert picker["target"] == f"package=com.whatsapp permission={P}READ_CONTACTS"
    await app.send_frame("picker.select", {"picker_id": picker["picker_id"], "value": "deny"})
    assert (await call).error.startswith("DENIED: ")


async def test_with_nothing_paired_the_terminal_answers_an_install(make_gateway: GatewayFactory) -> None:
    server = await make_gateway()  # approvals = "paired", and nothing is
    drop(server, "notes.apk")
    sms = await server.grpc.execute("SEND_MESSAGE", {"to": "+15551234", "body": "hi"})
    assert sms.success, sms.error  # the approval_actions are not held while nothing is paired...
    call = install(server)
    while True:  # ...the owner's are: the hold is announced on the bus, then stored for the terminal
        code, out, _ = await cli(server.data_dir, "approvals", "list", "--json")
        assert code == 0
        rows = json.loads(out)
        if rows:
            break
    assert rows[0]["action"] == "INSTALL_APP" and names_everything(rows[0]["reason"])
    code, out, _ = await cli(server.data_dir, "approvals", "list")
    assert code == 0 and names_everything(out), out
    assert not await installed(server)
    code, out, err = await cli(server.data_dir, "approvals", "approve", rows[0]["approval_id"])
    assert code == 0, err
    response = await call
    assert response.success, response.error
    assert await installed(server)


async def test_approvals_off_holds_nothing(make_gateway: GatewayFactory) -> None:
    server = await make_gateway(approvals="off")
    drop(server, "notes.apk")
    response = await install(server)
    assert response.success, response.error


async def test_the_owners_apps_are_refused_before_any_hold(server: GatewayServer, app: IrisClient) -> None:
    drop(server, "iris.apk", IRIS_APP)
    response = await install(server, "iris.apk")
    assert response.error.startswith("PERMISSION_DENIED: ") and IRIS_APP in response.error
    for action, params in (
        ("UNINSTALL_APP", {"package": IRIS_APP}),
        (
            "GRANT_PERMISSION",
            {"package": "com.google.android.permissioncontroller", "permission": P + "CAMERA"},
        ),
        ("REVOKE_PERMISSION", {"package": IRIS_APP, "permission": P + "POST_NOTIFICATIONS"}),
    ):
        response = await server.grpc.execute(action, params)
        assert response.error.startswith("PERMISSION_DENIED: "), (action, response.error)
    assert server.app.runtime.approvals.pending() == []
    malformed = server.data_dir / "files" / "bad.apk"
    malformed.write_bytes(b"PK\x03\x04 not really")
    assert (await install(server, "bad.apk")).error.startswith("INVALID_PARAMS: ")
    assert server.app.runtime.approvals.pending() == []


def test_doctor_says_the_owners_actions_wait_with_nothing_paired_or_no_gateway(tmp_path: Path) -> None:
    unpaired = approvals_check(Settings(data_dir=tmp_path))
    assert "nothing is held" in unpaired.detail and "INSTALL_APP" in unpaired.detail
    alone = approvals_check(Settings(data_dir=tmp_path, gateway=False))
    assert alone.status == "ok" and "INSTALL_APP" in alone.detail and "SEND_MESSAGE" not in alone.detail
    assert approvals_check(Settings(data_dir=tmp_path, approvals="off")).status == "warn"
