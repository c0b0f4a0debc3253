"""INSTALL_APP, UNINSTALL_APP, GRANT_PERMISSION, REVOKE_PERMISSION on the sim, through gRPC: each
read back from the sim's package table, each refusal with its code, before the phone is touched."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from phoneuse_runtime.config.owner import IRIS_APP
from phoneuse_runtime.config.settings import ConfigError
from tests.conftest import Client, ServerFactory
from tests.fakes.apk import build_apk
from tests.gateway.agent.test_terminal_approvals import cli

P = "android.permission."


def drop(client: Client, name: str, data: bytes) -> Path:
    """Puts `data` in the served runtime's files directory as `name`."""
    folder = client.app.runtime.settings.data_dir / "files"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return path


@pytest.fixture
async def sim(make_client: ServerFactory) -> Client:
    return await make_client(approvals="off")  # the holds: tests/gateway/agent/test_package_approvals.py


async def test_install_grant_revoke_uninstall_read_back(sim: Client) -> None:
    drop(
        sim,
        "notes.apk",
        build_apk(
            "com.example.notes",
            version_name="2.1",
            version_code=21,
            permissions=(P + "CAMERA", P + "INTERNET"),
        ),
    )
    done = await sim.ok("INSTALL_APP", {"apk": "notes.apk"})
    assert done["package"] == "com.example.notes" and done["version_name"] == "2.1"
    assert done["permissions"] == [P + "CAMERA", P + "INTERNET"]
    assert done["verified"] and not done["replaced"] and done["granted"] == [P + "INTERNET"]
    assert len(done["sha256"]) == 64 and done["via"] == "sim"
    granted = await sim.ok("GRANT_PERMISSION", {"package": "com.example.notes", "permission": P + "CAMERA"})
    assert granted == {
        "package": "com.example.notes",
        "permission": P + "CAMERA",
        "granted": True,
        "verified": True,
        "via": "sim",
    }
    revoked = await sim.ok("REVOKE_PERMISSION", {"package": "com.example.notes", "permission": P + "CAMERA"})
    assert revoked["granted"] is False and revoked["verified"]
    again = await sim.ok("INSTALL_APP", {"apk": "notes.apk"})
    assert again["replaced"]
    gone = await sim.ok("UNINSTALL_APP", {"package": "com.example.notes"})
    assert gone["verified"]
    assert await sim.fail("UNINSTALL_APP", {"package": "com.example.notes"}) == "INVALID_PARAMS"


async def test_the_phones_refusals_have_their_codes(sim: Client) -> None:
    drop(sim, "notes.apk", build_apk("com.example.notes", permissions=(P + "INTERNET",)))
    await sim.ok("INSTALL_APP", {"apk": "notes.apk"})
    change = {"package": "com.example.notes", "permission": P + "INTERNET"}
    assert await sim.fail("GRANT_PERMISSION", change) == "UNSUPPORTED"  # install-time: not changeable
    asked = {"package": "com.example.notes", "permission": P + "CAMERA"}
    assert await sim.fail("GRANT_PERMISSION", asked) == "INVALID_PARAMS"  # never requested
    unknown = {"package": "com.example.nothing", "permission": P + "CAMERA"}
    assert await sim.fail("GRANT_PERMISSION", unknown) == "INVALID_PARAMS"
    assert await sim.fail("UNINSTALL_APP", {"package": "com.google.android.apps.messaging"}) == "UNSUPPORTED"
    assert await sim.fail("INSTALL_APP", {"apk": "/sdcard/Download/x.apk"}) == "UNSUPPORTED"  # no storage


async def test_bad_names_and_malformed_apks_are_invalid_params(sim: Client) -> None:
    assert await sim.fail("INSTALL_APP", {"apk": "missing.apk"}) == "INVALID_PARAMS"
    drop(sim, "text.apk", b"not a zip at all")
    assert await sim.fail("INSTALL_APP", {"apk": "text.apk"}) == "INVALID_PARAMS"
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("AndroidManifest.xml", '<manifest package="com.x.y"/>')  # text, never built so
    drop(sim, "plain.apk", out.getvalue())
    assert await sim.fail("INSTALL_APP", {"apk": "plain.apk"}) == "INVALID_PARAMS"
    drop(sim, "cut.apk", build_apk("com.example.cut")[:-40])
    assert await sim.fail("INSTALL_APP", {"apk": "cut.apk"}) == "INVALID_PARAMS"
    assert await sim.fail("UNINSTALL_APP", {"package": "not a package"}) == "INVALID_PARAMS"
    assert (
        await sim.fail("GRANT_PERMISSION", {"package": "com.x.y", "permission": "CAMERA; reboot"})
        == "INVALID_PARAMS"
    )


async def test_path_rules_are_permission_denied_naming_the_rule(sim: Client) -> None:
    real = drop(sim, "real.apk", build_apk("com.example.real"))
    os.symlink(real, real.parent / "link.apk")
    for apk in (
        "../real.apk",
        "sub/real.apk",
        "link.apk",
        "/data/data/com.whatsapp/x.apk",
        "/sdcard/../data/x.apk",
        "/sdcard//x.apk",
        "/etc/x.apk",
    ):
        response = await sim.execute("INSTALL_APP", {"apk": apk})
        assert not response.success and response.error.startswith("PERMISSION_DENIED: "), (
            apk,
            response.error,
        )
    response = await sim.execute("INSTALL_APP", {"apk": "link.apk"})
    assert "symlink" in response.error


async def test_the_owners_apps_are_refused_before_the_phone_is_touched(sim: Client) -> None:
    drop(sim, "iris.apk", build_apk(IRIS_APP, version_code=999))
    response = await sim.execute("INSTALL_APP", {"apk": "iris.apk"})
    assert response.error.startswith("PERMISSION_DENIED: ") and IRIS_APP in response.error
    for package in (IRIS_APP, "com.termux", "com.android.settings"):
        assert await sim.fail("UNINSTALL_APP", {"package": package}) == "PERMISSION_DENIED"
    for package in ("com.google.android.permissioncontroller", "com.android.permissioncontroller", IRIS_APP):
        for action in ("GRANT_PERMISSION", "REVOKE_PERMISSION"):
            assert (
                await sim.fail(action, {"package": package, "permission": P + "CAMERA"})
                == "PERMISSION_DENIED"
            )


async def test_without_the_gateway_the_terminal_holds_the_owners_actions(make_client: ServerFactory) -> None:
    client = await make_client()  # gateway off, approvals "paired": the owner_actions are held all the same
    drop(client, "notes.apk", build_apk("com.example.notes", permissions=(P + "CAMERA",)))
    call = asyncio.ensure_future(client.execute("INSTALL_APP", {"apk": "notes.apk"}, timeout_ms=20_000))
    while True:  # the terminal's store lists the hold once the call reaches the policy
        code, out, _ = await cli(client.app.runtime.settings.data_dir, "approvals", "list", "--json")
        assert code == 0
        if rows := json.loads(out):
            break
    assert rows[0]["action"] == "INSTALL_APP"
    assert "com.example.notes" in rows[0]["reason"] and P + "CAMERA" in rows[0]["reason"]
    code, _, err = await cli(
        client.app.runtime.settings.data_dir, "approvals", "approve", rows[0]["approval_id"]
    )
    assert code == 0, err
    response = await call
    assert response.success, response.error
    sms = await client.execute("SEND_MESSAGE", {"to": "+15551234", "body": "hi"})
    assert sms.success, sms.error  # only the owner's actions: the rest is the gateway's to hold


async def test_a_misspelt_owner_action_is_a_config_error(make_client: ServerFactory) -> None:
    with pytest.raises(ConfigError, match="owner_actions names no action or query: 'INSTAL_APP'"):
        await make_client(owner_actions=frozenset({"INSTAL_APP"}))
