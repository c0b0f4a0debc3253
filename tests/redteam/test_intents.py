"""START_INTENT at the owner's controls by what an intent reaches (issue 25: 17): app info,
device provisioning, the default dialer, the package installer, permissions, roles, a
`package:` URI, each by its action family, not a list of names. With approvals off (nothing
held), through the production factory and a real gRPC client; each asserts the call was
refused PERMISSION_DENIED and the phone's front is still the launcher (nothing of the owner's
was opened)."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.sim.device import SimDevice

from ..gateway.conftest import GatewayFactory, GatewayServer

LAUNCHER = "com.google.android.apps.nexuslauncher"

REACHING = [
    {
        "action": "android.intent.action.SHOW_APP_INFO",
        "extras": '{"android.intent.extra.PACKAGE_NAME": "ai.lemon.iris"}',
    },
    {"action": "android.app.action.PROVISION_MANAGED_DEVICE"},
    {"action": "android.app.action.SET_NEW_PASSWORD"},
    {
        "action": "android.telecom.action.CHANGE_DEFAULT_DIALER",
        "extras": '{"android.telecom.extra.CHANGE_DEFAULT_DIALER_PACKAGE_NAME": "x"}',
    },
    {"action": "android.intent.action.INSTALL_PACKAGE", "data": "content://downloads/evil.apk"},
    {"action": "android.intent.action.UNINSTALL_PACKAGE", "data": "package:ai.lemon.iris"},
    {"action": "android.intent.action.MANAGE_APP_PERMISSION"},
    {"action": "android.intent.action.REVIEW_PERMISSIONS"},
    {"action": "android.app.role.action.REQUEST_ROLE"},
    {"action": "android.content.pm.action.REQUEST_PERMISSIONS"},
    {"action": "android.provider.Telephony.ACTION_CHANGE_DEFAULT"},
    {"action": "android.intent.action.VIEW", "data": "package:ai.lemon.iris"},
    {"action": "android.settings.APPLICATION_DETAILS_SETTINGS", "data": "package:ai.lemon.iris"},
    {"action": "android.intent.action.POWER_USAGE_SUMMARY"},
    {"action": "com.android.settings.action.MANAGE_ACCESSIBILITY"},
]


@pytest.mark.parametrize("params", REACHING, ids=lambda p: p["action"].rsplit(".", 1)[-1])
async def test_an_intent_that_reaches_the_guard_is_refused(
    make_gateway: GatewayFactory, params: dict[str, str]
) -> None:
    """An agent with a valid token (approvals off) sends an intent whose action or data reaches
    a screen that changes who guards the phone: refused before anything runs, the owner's
    controls never brought to the front."""
    server: GatewayServer = await make_gateway(approvals="off")
    response = await server.grpc.execute("START_INTENT", params)
    assert response.error.startswith("PERMISSION_DENIED: START_INTENT: "), response.error
    device = server.app.runtime.device
    assert isinstance(device, SimDevice)
    assert (await device.foreground()).package == LAUNCHER


@pytest.mark.parametrize(
    "params",
    [
        {"action": "android.intent.action.VIEW", "data": "https://example.com"},
        {"action": "android.intent.action.SET_ALARM", "extras": '{"android.intent.extra.alarm.HOUR": 7}'},
    ],
    ids=lambda p: p["action"].rsplit(".", 1)[-1],
)
async def test_an_ordinary_intent_still_runs(make_gateway: GatewayFactory, params: dict[str, str]) -> None:
    """The families leave ordinary intents alone: a web page, an alarm."""
    server: GatewayServer = await make_gateway(approvals="off")
    response = await server.grpc.execute("START_INTENT", params)
    assert response.success, response.error
