"""The packages' actions on `--device termux`: through the phone's own adb (an app's own `pm` may
not install or grant), against the fake adbd behind the real adb server; without it, UNSUPPORTED
saying how to turn it on."""

from __future__ import annotations

from tests.device.termux.conftest import ServeOwnAdb, TermuxServe
from tests.fakes.apk import catalog_apk
from tests.fakes.phone import FakePhone

P = "android.permission."
NOTES = "com.example.notes"


async def test_install_grant_uninstall_through_the_phones_own_adb(serve_own_adb: ServeOwnAdb) -> None:
    phone = FakePhone()
    served = await serve_own_adb(phone, approvals="off")
    client = served.client
    files = client.app.runtime.settings.data_dir / "files"
    files.mkdir(parents=True)
    (files / "notes.apk").write_bytes(catalog_apk(phone.state, NOTES, permissions=(P + "CAMERA",)))
    done = await client.ok("INSTALL_APP", {"apk": "notes.apk"}, timeout_ms=20_000)
    assert done["verified"] and done["via"] == "pm install" and NOTES in phone.state.packages
    granted = await client.ok("GRANT_PERMISSION", {"package": NOTES, "permission": P + "CAMERA"})
    assert granted["verified"] and P + "CAMERA" in phone.state.packages[NOTES].granted
    gone = await client.ok("UNINSTALL_APP", {"package": NOTES})
    assert gone["verified"] and NOTES not in phone.state.packages


async def test_without_its_own_adb_termux_says_how_to_get_it(serve_termux: TermuxServe) -> None:
    client = await serve_termux(self_adb="off", approvals="off")
    response = await client.execute("UNINSTALL_APP", {"package": NOTES})
    assert response.error.startswith("UNSUPPORTED: ") and "the phone's own adb" in response.error
    response = await client.execute("GRANT_PERMISSION", {"package": NOTES, "permission": P + "CAMERA"})
    assert response.error.startswith("UNSUPPORTED: ") and "self_adb" in response.error
    # The owner's apps are refused first, whatever the backend can do.
    response = await client.execute("UNINSTALL_APP", {"package": "com.termux"})
    assert response.error.startswith("PERMISSION_DENIED: ")
