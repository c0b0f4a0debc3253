"""`am`, `pm`, `cmd` and `monkey`, with ActivityManagerShellCommand's and
PackageManagerShellCommand's outputs: "Starting: Intent { ... }" on stdout, errors such as
"Error: Activity not started, unable to resolve Intent { ... }" on stderr with exit code 0, and a
Java exception (bad option, bad number) as "Exception occurred while executing" with exit 255.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

from . import apps, interaction, permissions, seed
from .intents import CommandError, component_parts, exception, parse_intent, short_string
from .shell import Proc
from .state import PhoneState, short_component
from .userland import CMD_SERVICES, COMMANDS, command, path_of, state_of

# `pm list packages --show-versioncode`: Android 9 (P) on; before, pm refuses the option.
VERSIONCODE_SDK = 28

RECEIVER_FROM_SHELL = 0x400000


@command("am")
async def am(p: Proc) -> int:
    state = state_of(p)
    args = p.argv[1:]
    if not args:
        await p.print("Activity manager (activity) commands:\n  help\n  start-activity [-D] [-N] [-W] ...\n")
        return 0
    sub, rest = args[0], args[1:]
    try:
        if sub in ("start", "start-activity"):
            return await _start(p, state, rest)
        if sub in ("startservice", "start-service", "start-foreground-service"):
            it = parse_intent(rest, kind="service", source=f"am {sub}").intent
            await p.print(f"Starting service: {short_string(it)}\n")
            state.log.intents.append(it)
            await p.error("Error: Not found; no service started.\n")
            return 255
        if sub == "broadcast":
            it = parse_intent(rest, kind="broadcast", source="am broadcast").intent
            it.flags |= RECEIVER_FROM_SHELL
            await p.print(f"Broadcasting: {short_string(it)}\n")
            code, data = interaction.broadcast(state, it)
            await p.print(
                f"Broadcast completed: result={code}"
                + (f', data="{data}"' if data is not None else "")
                + "\n"
            )
            return 0
        if sub in ("force-stop", "kill", "stop-app"):
            names = [a for a in rest if not a.startswith("--") and not a.isdigit()]
            if names:
                apps.force_stop(state, names[-1])
            return 0
        if sub == "get-current-user":
            await p.print("0\n")
            return 0
        await p.error(f"Unknown command: {sub}\n")
        return 255
    except CommandError as exc:
        await p.error(exception(sub, exc, "activity"))
        return 255


async def _start(p: Proc, state: PhoneState, rest: list[str]) -> int:
    parsed = parse_intent(rest, source="am start")
    it, opts = parsed.intent, parsed.options
    if opts.get("--user") == "all":
        await p.error("Error: Can't start service with user 'all'\n")
        return 1
    if "-S" in opts:
        target = component_parts(it.component)[0] if it.component else None
        if target is None:
            found = apps.resolve(state, it)
            if len(found) != 1:
                await p.error(f"Error: Intent does not match any activities: {short_string(it)}\n")
                return 1
            target = found[0][0]
        await p.print(f"Stopping: {target}\n")
        apps.force_stop(state, target)
    await p.print(f"Starting: {short_string(it)}\n")
    it.flags |= apps.NEW_TASK
    result = apps.start_activity(state, it)
    out = p.print if "-W" in opts else p.error
    if result == "unresolved":
        await out(f"Error: Activity not started, unable to resolve {short_string(it)}\n")
    elif result == "no-class":
        pkg, cls = component_parts(str(it.component))
        await out(f"Error type 3\nError: Activity class {{{pkg}/{cls}}} does not exist.\n")
    elif result == "task-to-front":
        await out("Warning: Activity not started, its current task has been brought to the front\n")
    if "-W" in opts and result in ("ok", "task-to-front"):
        top = state.foreground()
        launch = "HOT" if result == "task-to-front" else "COLD"
        await p.print(
            f"Status: ok\nLaunchState: {launch}\nActivity: {top.component}\nTotalTime: 412\nWaitTime: 418\nComplete\n"  # noqa: E501
        )
    return 0


# --- pm ----------------------------------------------------------------------------------------------

_U2_APK_MD5: list[str] = []


def _u2_apk_md5() -> str:
    """md5 of the input-method APK bundled with uiautomator2, which `pm install` recognises."""
    if not _U2_APK_MD5:
        try:
            import uiautomator2

            apk = Path(uiautomator2.__file__).parent / "assets" / "app-uiautomator.apk"
            _U2_APK_MD5.append(hashlib.md5(apk.read_bytes()).hexdigest())
        except (ImportError, OSError):
            _U2_APK_MD5.append("")
    return _U2_APK_MD5[0]


def install(state: PhoneState, data: bytes) -> str:
    """`pm install` of these bytes: "Success" or "Failure [...]"."""
    digest = hashlib.md5(data).hexdigest()
    pkg = state.apk_catalog.get(digest)
    if pkg is None and digest == _u2_apk_md5():
        pkg = seed.u2_app_package()
    if pkg is None:
        reason = (
            "INSTALL_PARSE_FAILED_NO_CERTIFICATES"
            if data.startswith(b"PK")
            else "INSTALL_PARSE_FAILED_NOT_APK"
        )
        return f"Failure [{reason}: Failed parse during installPackageLI: Failed to parse /data/app/vmdl1284.tmp]"  # noqa: E501
    old = state.packages.get(pkg.name)
    if old is not None and old.system:
        return "Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Package signatures do not match the previously installed version]"  # noqa: E501
    if old is not None and pkg.version_code < old.version_code:
        return "Failure [INSTALL_FAILED_VERSION_DOWNGRADE]"
    pkg = copy.deepcopy(pkg)  # the catalog's stays as the APK says
    if old is not None:  # -r keeps the data, and what was granted
        pkg.granted |= old.granted & set(pkg.requested)
    permissions.installed(state, pkg)
    state.packages[pkg.name] = pkg
    apps.force_stop(state, pkg.name)
    return "Success"


def _list_packages(state: PhoneState, args: list[str]) -> str:
    flags = {a for a in args if a.startswith("-")}
    text = next((a for a in args if not a.startswith("-") and not a.isdigit()), "")
    out = []
    for pkg in sorted(state.packages.values(), key=lambda x: x.name):
        if ("-3" in flags and pkg.system) or ("-s" in flags and not pkg.system) or text not in pkg.name:
            continue
        if ("-d" in flags and pkg.enabled) or ("-e" in flags and not pkg.enabled):
            continue
        line = f"package:{pkg.apk_path}={pkg.name}" if "-f" in flags else f"package:{pkg.name}"
        if "--show-versioncode" in flags:
            line += f" versionCode:{pkg.version_code}"
        out.append(line + (f" uid:{pkg.uid}" if "-U" in flags else "") + "\n")
    return "".join(out)


@command("pm")
async def pm(p: Proc) -> int:
    state = state_of(p)
    args = p.argv[1:]
    sub = args[0] if args else ""
    rest = args[1:]
    try:
        if sub == "list" and rest[:1] == ["packages"]:
            if "--show-versioncode" in rest and state.sdk < VERSIONCODE_SDK:
                await p.error("Error: Unknown option: --show-versioncode\n")
                return 255
            await p.print(_list_packages(state, rest[1:]))
            return 0
        if sub == "path":
            pkg = state.packages.get(rest[-1] if rest else "")
            if pkg is None:
                return 1
            await p.print(f"package:{pkg.apk_path}\n")
            return 0
        if sub == "install":
            paths = [a for a in rest if not a.startswith("-")]
            try:
                data = state.files.read(path_of(p, paths[-1])) if paths else b""
            except OSError:
                await p.error(
                    f"Error: Can't open file: {paths[-1]}\nException occurred while executing 'install':\n"
                )
                return 255
            result = (
                install(state, data) if paths else "Error: must either specify a package size or an APK file"
            )
            await p.print(result + "\n")
            return 0 if result == "Success" else 1
        if sub == "uninstall":
            name = rest[-1] if rest else ""
            pkg = state.packages.get(name)
            if pkg is None and "--user" in rest:  # PackageManagerShellCommand.runUninstall, per user
                await p.print(f"Failure [not installed for {rest[rest.index('--user') + 1]}]\n")
                return 1
            if pkg is None or pkg.system:
                await p.print("Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
                return 1
            apps.force_stop(state, name)
            del state.packages[name]
            await p.print("Success\n")
            return 0
        if sub == "clear":
            await p.print("Success\n" if rest and rest[-1] in state.packages else "Failed\n")
            return 0
        if sub in ("grant", "revoke"):
            named = [a for a in rest if not a.startswith("-")]
            if len(named) < 2:
                raise CommandError("java.lang.IllegalArgumentException", "Unknown package: null")
            permissions.change(state, named[-2], named[-1], grant=sub == "grant")
            return 0
        if sub in ("enable", "disable", "disable-user"):
            pkg = state.packages.get(rest[-1] if rest else "")
            if pkg is None:
                raise CommandError(
                    "java.lang.IllegalArgumentException", f"Unknown package: {rest[-1] if rest else ''}"
                )
            pkg.enabled = sub == "enable"
            if not pkg.enabled:
                apps.force_stop(state, pkg.name)
            word = {"enable": "enabled", "disable": "disabled", "disable-user": "disabled-user"}[sub]
            await p.print(f"Package {pkg.name} new state: {word}\n")
            return 0
        if sub in ("resolve-activity", "query-activities"):
            parsed = parse_intent(rest, source=f"pm {sub}")
            found = apps.resolve(state, parsed.intent)
            if parsed.intent.component:
                pkg_name, cls = component_parts(parsed.intent.component)
                app = state.packages.get(pkg_name)
                found = [(pkg_name, cls)] if app is not None and cls in app.activities else []
            if not found:
                await p.print("No activity found\n" if sub == "resolve-activity" else "No activities found\n")
                return 0
            if sub == "query-activities":
                found_text = "".join(f"{short_component(n, c)}\n" for n, c in found)
                await p.print(f"{len(found)} activities found:\n{found_text}")
                return 0
            if len(found) > 1:
                found = [("android", "com.android.internal.app.ResolverActivity")]
            await p.print("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n")
            await p.print(short_component(*found[0]) + "\n")
            return 0
        if sub == "dump":
            from .dumpsys import package_dump

            await p.print(package_dump(state, rest[-1] if rest else ""))
            return 0
        await p.error(f"Unknown command: {sub}\n")
        return 255
    except CommandError as exc:
        await p.error(exception(sub, exc, "package"))
        return 255


@command("cmd")
async def cmd(p: Proc) -> int:
    state = state_of(p)
    args = p.argv[1:]
    service = args[0] if args else ""
    aliases = {"package": "pm", "activity": "am", "input": "input", "settings": "settings"}
    if service in aliases:
        return await COMMANDS[aliases[service]](
            Proc([aliases[service], *args[1:]], p.env, p.cwd, p.streams, p.io, p.shell)
        )
    if service in CMD_SERVICES:
        return await CMD_SERVICES[service](p)
    if service == "statusbar":
        verb = args[1] if len(args) > 1 else ""
        if verb in ("expand-notifications", "expand-settings"):
            state.shade_open = True
        elif verb == "collapse":
            state.shade_open = False
        return 0
    if service == "":
        await p.error(
            "cmd: No service specified; use -l to list all running services. Use -w to start and wait for a service.\n"  # noqa: E501
        )
        return 20
    await p.error(f"cmd: Can't find service: {service}\n")
    return 20


@command("monkey")
async def monkey(p: Proc) -> int:
    state = state_of(p)
    args = p.argv[1:]
    echo = "".join(f"  bash arg: {a}\n" for a in args)
    packages = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-p"]
    await p.print(echo)
    launchable = [name for name in packages if name in state.packages and state.packages[name].launcher]
    if not launchable:
        await p.error("** No activities found to run, monkey aborted.\n")
        return 251
    apps.launch_package(state, launchable[0], source="monkey")
    await p.print(f"Events injected: {args[-1] if args and args[-1].isdigit() else 1}\n")
    await p.print("## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n")
    return 0
