"""The owner's section's defaults: the apps the agent never drives unless the owner says otherwise.

owner/controls.py says what the list guards and how; the list itself is a setting (`owner_apps`).
"""

from __future__ import annotations

IRIS_APP = "ai.lemon.iris"  # the Iris chat app, where the owner answers approvals
SYSTEM_UI = "com.android.systemui"  # the notification shade, quick settings, the lock screen
DEFAULT_OWNER_APPS = frozenset(
    {
        IRIS_APP,
        "com.termux",  # the runtime's own Termux, its API and its start at boot
        "com.termux.api",
        "com.termux.boot",
        "com.android.settings",
        "com.google.android.permissioncontroller",
        "com.android.permissioncontroller",
        "com.google.android.packageinstaller",  # uninstalling the Iris app or Termux
        "com.android.packageinstaller",
        SYSTEM_UI,
    }
)
