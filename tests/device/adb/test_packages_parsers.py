"""device/adb/packages.py on what `pm` and `dumpsys package PKG` print on several Android versions,
written from AOSP's PackageManagerShellCommand / Pm.java (Android 5-6), PermissionManagerService
and PackageManagerService's dump (ComputerEngine.dumpPackagesLPr / Settings.dumpPackageLPr)."""

from __future__ import annotations

import pytest

from phoneuse_runtime.device.adb.packages import listed, parse_package_dump, permission_failure, pm_failure
from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied, Unsupported

P = "android.permission."

ANDROID_14 = """Activity Resolver Table:
  Non-Data Actions:
      android.intent.action.MAIN:
        5d2c8b1 com.example.notes/.MainActivity filter 8e3f1a2
          Action: "android.intent.action.MAIN"
          Category: "android.intent.category.LAUNCHER"

Key Set Manager:
  [com.example.notes]
      Signing KeySets: 61

Packages:
  Package [com.example.notes] (c1a9e0f):
    appId=10312
    pkg=Package{9a2b1c4 com.example.notes}
    codePath=/data/app/~~Zq3w==/com.example.notes-Xk2==
    versionCode=21 minSdk=26 targetSdk=34
    minExtensionVersions=[]
    versionName=2.1 beta
    splits=[base]
    apkSigningVersion=2
    flags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]
    privateFlags=[ PRIVATE_FLAG_ACTIVITIES_RESIZE_MODE_RESIZEABLE_VIA_SDK_VERSION ]
    timeStamp=2024-05-01 10:00:00
    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]
    declared permissions:
      com.example.notes.permission.C2D_MESSAGE: prot=signature, INSTALLED
    requested permissions:
      android.permission.CAMERA
      android.permission.INTERNET
      android.permission.POST_NOTIFICATIONS
    install permissions:
      android.permission.INTERNET: granted=true
    User 0: ceDataInode=123 installed=true hidden=false suspended=false distractionFlags=0 stopped=false notLaunched=false enabled=0 instant=false virtual=false quarantined=false
      gids=[3003]
      runtime permissions:
        android.permission.POST_NOTIFICATIONS: granted=false, flags=[ USER_SENSITIVE_WHEN_GRANTED|USER_SENSITIVE_WHEN_DENIED]
        android.permission.CAMERA: granted=true, flags=[ USER_SET|USER_SENSITIVE_WHEN_GRANTED|USER_SENSITIVE_WHEN_DENIED]
      disabledComponents:
        com.example.notes.LegacyReceiver

Queries:
  system apps queryable: false
"""  # noqa: E501

ANDROID_8 = """Packages:
  Package [com.android.chrome] (8b7c6d5):
    userId=10061
    pkg=Package{2a3b4c5 com.android.chrome}
    codePath=/data/app/com.android.chrome-1
    versionCode=336206853 minSdk=24 targetSdk=26
    versionName=66.0.3359.158
    pkgFlags=[ SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]
    requested permissions:
      android.permission.ACCESS_FINE_LOCATION
      android.permission.RECORD_AUDIO
      android.permission.INTERNET
    install permissions:
      android.permission.INTERNET: granted=true
    User 0: ceDataInode=401 installed=true hidden=false suspended=false stopped=false notLaunched=false enabled=0 instant=false
      gids=[3003]
      runtime permissions:
        android.permission.ACCESS_FINE_LOCATION: granted=false, flags=[ USER_SET ]
        android.permission.RECORD_AUDIO: granted=true, flags=[ USER_SET ]

Hidden system packages:
  Package [com.android.chrome] (1f2e3d4):
    userId=10061
    versionCode=297305000 minSdk=24 targetSdk=26
    versionName=60.0.3112.107
    pkgFlags=[ SYSTEM HAS_CODE ]
"""  # noqa: E501

ANDROID_5 = """Packages:
  Package [com.example.notes] (2f3a4b5c):
    userId=10052 gids=[3003]
    pkg=Package{1a2b3c4 com.example.notes}
    codePath=/data/app/com.example.notes-1
    versionCode=21 targetSdk=21
    versionName=2.1
    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]
    User 0:  installed=true hidden=false stopped=false notLaunched=false enabled=0
    grantedPermissions:
      android.permission.CAMERA
      android.permission.INTERNET
"""


def test_android_14_runtime_and_install_permissions() -> None:
    state = parse_package_dump(ANDROID_14, "com.example.notes")
    assert state is not None
    assert (state.version_name, state.version_code, state.system) == ("2.1 beta", 21, False)
    assert state.granted == {P + "INTERNET", P + "CAMERA"}
    assert state.denied == {P + "POST_NOTIFICATIONS"}


def test_android_8_an_updated_system_app_is_read_from_its_installed_block() -> None:
    state = parse_package_dump(ANDROID_8, "com.android.chrome")
    assert state is not None
    assert (state.version_name, state.version_code, state.system) == ("66.0.3359.158", 336206853, True)
    assert state.granted == {P + "INTERNET", P + "RECORD_AUDIO"} and state.denied == {
        P + "ACCESS_FINE_LOCATION"
    }


def test_android_5_granted_permissions_by_name() -> None:
    state = parse_package_dump(ANDROID_5, "com.example.notes")
    assert (
        state is not None and state.granted == {P + "CAMERA", P + "INTERNET"} and state.denied == frozenset()
    )


def test_a_package_not_in_the_dump() -> None:
    assert parse_package_dump(ANDROID_14, "com.example.other") is None
    assert parse_package_dump("", "com.example.notes") is None


def test_listed_reads_pm_list_exactly() -> None:
    out = "package:com.example.notes\npackage:com.example.notes.pro\n"
    assert listed(out, "com.example.notes") and not listed(out, "com.example")


@pytest.mark.parametrize(
    ("output", "kind", "said"),
    [
        ("Success\n", None, ""),
        ("\tpkg: /data/local/tmp/phoneuse-1.apk\nSuccess\n", None, ""),  # Android 5-6's Pm.java
        ("Failure [INSTALL_FAILED_VERSION_DOWNGRADE]\n", Unsupported, "INSTALL_FAILED_VERSION_DOWNGRADE"),
        (
            "Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Package com.x signatures do not match previously "
            "installed version; ignoring!]\n",
            Unsupported,
            "signatures do not match",
        ),
        ("Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE]\n", Unsupported, "INSUFFICIENT_STORAGE"),
        (
            "Failure [INSTALL_PARSE_FAILED_NO_CERTIFICATES: Failed collecting certificates for "
            "/data/app/vmdl1.tmp/base.apk]\n",
            InvalidParams,
            "cannot read this APK",
        ),
        ("Failure [INSTALL_FAILED_INVALID_APK]\n", InvalidParams, "INVALID_APK"),
        ("Failure [not installed for 0]\n", InvalidParams, "not installed"),
        ("Failure [DELETE_FAILED_INTERNAL_ERROR]\n", Unsupported, "system app"),
        ("Failure [DELETE_FAILED_DEVICE_POLICY_MANAGER]\n", Unsupported, "DEVICE_POLICY_MANAGER"),
        (
            "\nException occurred while executing 'install':\njava.lang.IllegalArgumentException: Error: "
            "Can't open file: /sdcard/x.apk\n\tat com.android.server.pm.PackageManagerShellCommand\n",
            Unsupported,
            "Can't open file",
        ),
    ],
)
def test_pm_install_and_uninstall_answers(output: str, kind: type[Exception] | None, said: str) -> None:
    failure = pm_failure(output, what="pm install")
    if kind is None:
        assert failure is None
    else:
        assert isinstance(failure, kind) and said in str(failure)


SHELL_EXCEPTION = "\nException occurred while executing 'grant':\n{}\n\tat com.android.server.pm.PackageManagerShellCommand.runGrantRevokePermission(PackageManagerShellCommand.java:2731)\n"  # noqa: E501


@pytest.mark.parametrize(
    ("output", "kind", "said"),
    [
        (
            "java.lang.SecurityException: Permission android.permission.INTERNET requested by com.x is not a "
            "changeable permission type",
            Unsupported,
            "install-time permission",
        ),  # Android 12+
        (
            "java.lang.SecurityException: Permission android.permission.INTERNET is not a changeable "
            "permission type",
            Unsupported,
            "install-time permission",
        ),  # Android 6-11
        (
            "java.lang.SecurityException: Package com.x has not requested permission "
            "android.permission.CAMERA",
            InvalidParams,
            "has not requested",
        ),
        ("java.lang.IllegalArgumentException: Unknown package: com.x", InvalidParams, "Unknown package"),
        (
            "java.lang.IllegalArgumentException: Unknown permission: android.permission.FOO",
            InvalidParams,
            "Unknown",
        ),
        (
            "java.lang.SecurityException: Non-System UID cannot revoke system fixed permission "
            "android.permission.READ_SMS for package com.android.messaging",
            PermissionDenied,
            "system fixed",
        ),
    ],
)
def test_pm_grant_and_revoke_refusals(output: str, kind: type[Exception], said: str) -> None:
    failure = permission_failure(255, SHELL_EXCEPTION.format(output), what="pm grant")
    assert isinstance(failure, kind) and said in str(failure)


def test_pm_grant_on_android_6_prints_operation_not_allowed() -> None:
    # Pm.java (Android 6): "Operation not allowed: " + e.toString() on stderr, exit 1.
    out = "Operation not allowed: java.lang.SecurityException: Package com.x has not requested permission android.permission.CAMERA"  # noqa: E501
    assert isinstance(permission_failure(1, out, what="pm grant"), InvalidParams)
    assert permission_failure(0, "", what="pm grant") is None
