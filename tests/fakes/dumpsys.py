"""`dumpsys`: the parts of each service's dump that tools parse, in the services' own formats
(mCurrentFocus=Window{hash u0 pkg/cls}, mResumedActivity: ActivityRecord{...}, mWakefulness=,
NotificationRecord(...) blocks with extras={ android.title=String (...) }, mCallState=, ...).
"""

from __future__ import annotations

import time
import zlib

from . import apps, interaction, permissions, seed
from .shell import Proc
from .state import ActivityRecord, PhoneState, Task
from .status_cmds import battery_dump
from .system import ime_ids
from .userland import command, print_canned, state_of

SERVICES = [
    "SurfaceFlinger",
    "activity",
    "alarm",
    "battery",
    "display",
    "input",
    "input_method",
    "notification",
    "package",
    "power",
    "telephony.registry",
    "window",
]


def _hash(*parts: object) -> str:
    return format(zlib.crc32(":".join(map(str, parts)).encode()) & 0xFFFFFFF, "x")


def record(rec: ActivityRecord, task: Task) -> str:
    return f"ActivityRecord{{{_hash('rec', rec.token)} u0 {rec.component} t{task.id}}}"


def _top(state: PhoneState) -> tuple[ActivityRecord, Task]:
    task = state.tasks[-1]
    return task.activities[-1], task


def window_dump(state: PhoneState) -> str:
    rec, task = _top(state)
    focus = apps.focus_window(state)
    lines = ["WINDOW MANAGER WINDOWS (dumpsys window windows)"]
    titles = ["NavigationBar0", "StatusBar", "NotificationShade", f"{rec.package}/{rec.activity}"]
    for i, title in enumerate(titles):
        lines.append(f"  Window #{i} Window{{{_hash('win', title, rec.token)} u0 {title}}}:")
        lines.append(
            f"    mDisplayId=0 rootTaskId={task.id if i == 3 else 1} mSession=Session{{{_hash(title)}}}"
        )
    lines += [
        "",
        "  mGlobalConfiguration={1.0 310mcc260mnc [en_US] ldltr sw360dp w360dp h640dp 320dpi nrml port}",
        f"  mCurrentFocus=Window{{{_hash('win', focus, rec.token)} u0 {focus}}}",
        f"  mFocusedApp={record(rec, task)}",
        f"  mInputMethodWindow=Window{{{_hash('ime')} u0 InputMethod}}" if state.keyboard_shown else "",
        f"  mScreenOnFully={str(state.screen_on).lower()}",
    ]
    return "\n".join(line for line in lines if line) + "\n"


def activities_dump(state: PhoneState) -> str:
    rec, top_task = _top(state)
    lines = [
        "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)",
        "Display #0 (activities from top to bottom):",
    ]
    for task in reversed(state.tasks):
        first = task.activities[0]
        pkg = state.packages.get(first.package)
        kind = "home" if first.activity == seed.HOME_ACT else "standard"
        lines.append(
            f"  * Task{{{_hash('task', task.id)} #{task.id} type={kind} A={pkg.uid if pkg else 1000}:{first.package} "  # noqa: E501
            f"U=0 visible={str(task is top_task).lower()} visibleRequested={str(task is top_task).lower()} "
            f"mode=fullscreen translucent=false sz={len(task.activities)}}}"
        )
        if task is top_task:
            lines.append(f"    mResumedActivity: {record(rec, task)}")
        for i, act in reversed(list(enumerate(task.activities))):
            lines.append(f"    * Hist  #{i}: {record(act, task)}")
    lines += [
        "",
        "  Resumed activities in task display areas (from top to bottom):",
        f"    Resumed: {record(rec, top_task)}",
        "",
        f"  ResumedActivity: {record(rec, top_task)}",
        f"  topResumedActivity={record(rec, top_task)}",
    ]
    return "\n".join(lines) + "\n"


def activity_top(state: PhoneState) -> str:
    rec, task = _top(state)
    pkg = state.packages.get(rec.package)
    pid = state.processes.get(rec.package, 0)
    return (
        f"TASK {pkg.uid if pkg else 1000}:{rec.package} id={task.id} userId=0\n"
        f"  ACTIVITY {rec.component} {_hash('rec', rec.token)} pid={pid}\n"
    )


def power_dump(state: PhoneState) -> str:
    on = state.screen_on
    return (
        "POWER MANAGER (dumpsys power)\n\nPower Manager State:\n"
        f"  mDirty=0x0\n  mWakefulness={'Awake' if on else 'Asleep'}\n  mWakefulnessChanging=false\n"
        "  mIsPowered=true\n  mPlugType=2\n  mStayOn=false\n"
        f"  mHoldingWakeLockSuspendBlocker=false\n  mHoldingDisplaySuspendBlocker={str(on).lower()}\n"
        f"\nDisplay Power: state={'ON' if on else 'OFF'}\n"
    )


def display_dump(state: PhoneState) -> str:
    w, h = state.screen_size
    return (
        "DISPLAY MANAGER (dumpsys display)\n  mOnlyCore=false\n  mSafeMode=false\n"
        f"  mViewports=[DisplayViewport{{type=INTERNAL, valid=true, isActive=true, displayId=0, "
        f"uniqueId='local:4619827259835644672', physicalPort=0, orientation={state.rotation}, "
        f"logicalFrame=Rect(0, 0 - {w}, {h}), physicalFrame=Rect(0, 0 - {w}, {h}), deviceWidth={w}, deviceHeight={h}}}]\n"  # noqa: E501
        f"Display States: size=1\n  Display Id=0\n  Display State={'ON' if state.screen_on else 'OFF'}\n"
    )


def telephony_dump(state: PhoneState) -> str:
    call = state.call
    code = 0 if call is None else (1 if call.state == "ringing" else 2)
    incoming = call.number if call is not None and call.state == "ringing" else ""
    return (
        "last known state:\n  Phone Id=0\n"
        f"    mCallState={code}\n    mRingingCallState={1 if code == 1 else 0}\n"
        f"    mForegroundCallState={1 if code == 2 else 0}\n    mBackgroundCallState=0\n"
        f"    mCallIncomingNumber={incoming}\n"
        "    mServiceState={mVoiceRegState=0(IN_SERVICE), mDataRegState=0(IN_SERVICE), "
        "mOperatorAlphaLong=T-Mobile}\n    mDataConnectionState=2\n"
    )


def notification_dump(state: PhoneState, *, redact: bool) -> str:
    lines = ["Current Notification Manager state:", "  Notification List:"]
    for note in state.notifications:
        text_value = "" if redact else f" ({note.text})"
        title_value = "" if redact else f" ({note.title})"
        lines += [
            f"    NotificationRecord(0x{_hash('n', note.key):0>8}: pkg={note.package} user=UserHandle{{0}} "
            f"id={note.id} tag={note.tag} importance=4 key={note.key}: Notification(channel={note.channel} "
            f"shortcut=null contentView=null vibrate=null sound=null defaults=0x0 flags=0x{note.flags:x} "
            "color=0x00000000 vis=PRIVATE))",
            f"      uid={note.uid} userId=0",
            f"      opPkg={note.package}",
            f"      icon=Icon(typ=RESOURCE pkg={note.package} id=0x7f080123)",
            f"      flags=0x{note.flags:x}",
            "      pri=0",
            f"      key={note.key}",
            "      seen=false",
            f"      groupKey=0|{note.package}|g:default",
            "      fullscreenIntent=null",
            f"      contentIntent=PendingIntent{{{_hash('pi', note.key)}: PendingIntentRecord{{{_hash('pr', note.key)} "  # noqa: E501
            f"{note.package} startActivity}}}}",
            "      deleteIntent=null",
            "      number=0",
            "      groupAlertBehavior=0",
            f"      when={note.when}",
            "      tickerText=null",
            "      contentView=null",
            "      extras={",
            f"          android.title=String{title_value}",
            f"          android.text=String{text_value}",
            f"          android.appInfo=ApplicationInfo (ApplicationInfo{{{_hash('ai', note.package)} {note.package}}})",  # noqa: E501
            "          android.showWhen=Boolean (true)",
            "      }",
            f"      mCreationTimeMs={note.when}",
            f"      mUpdateTimeMs={note.when}",
            f"      mInterruptionTimeMs={note.when}",
        ]
    return "\n".join(lines) + "\n"


def input_method_dump(state: PhoneState) -> str:
    current = interaction.current_ime(state)
    rec, _ = _top(state)
    return (
        "Current Input Method Manager state:\n"
        f"  Input Methods: mMethodMapUpdateCount={len(ime_ids(state, enabled_only=False))}\n"
        f"  mCurMethodId={current}\n  mCurId={current}\n"
        f"  mCurFocusedWindow=Window{{{_hash('win', rec.token)} u0 {rec.package}/{rec.activity}}}\n"
        f"  mInputShown={str(state.keyboard_shown).lower()}\n"
        f"  mShowRequested={str(state.keyboard_shown).lower()}\n"
    )


def package_dump(state: PhoneState, name: str) -> str:
    pkg = state.packages.get(name)
    if pkg is None:
        return ""
    flags = "SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA" if pkg.system else "HAS_CODE ALLOW_CLEAR_USER_DATA"
    above, in_user = permissions.dump_lines(pkg)
    launcher = ""
    if pkg.launcher:
        launcher = (
            "Activity Resolver Table:\n  Non-Data Actions:\n      android.intent.action.MAIN:\n"
            f"        {_hash('act', pkg.name)} {pkg.name}/{pkg.launcher.removeprefix(pkg.name)} filter {_hash('f', pkg.name)}\n"  # noqa: E501
            '          Action: "android.intent.action.MAIN"\n'
            '          Category: "android.intent.category.LAUNCHER"\n\n'
        )
    return (
        f"{launcher}Packages:\n  Package [{pkg.name}] ({_hash('pkg', pkg.name)}):\n    userId={pkg.uid}\n"
        f"    pkg=Package{{{_hash('p', pkg.name)} {pkg.name}}}\n    codePath={pkg.apk_path.rsplit('/', 1)[0]}\n"  # noqa: E501
        f"    versionCode={pkg.version_code} minSdk=26 targetSdk={pkg.target_sdk}\n"
        f"    versionName={pkg.version_name}\n"
        f"    signatures=PackageSignatures{{{_hash('s', pkg.name)} version:3, signatures:[{_hash('sig', pkg.name)}], "  # noqa: E501
        "past signatures:[]}\n"
        f"    pkgFlags=[ {flags} ]\n"
        "    timeStamp=2023-11-14 22:13:20\n    firstInstallTime=2023-11-14 22:13:20\n"
        "    lastUpdateTime=2023-11-14 22:13:20\n"
        f"{above}"
        "    User 0: ceDataInode=0 installed=true hidden=false suspended=false distractionFlags=0 stopped=false "  # noqa: E501
        f"notLaunched=false enabled={0 if pkg.enabled else 3} instant=false virtual=false\n"
        f"{in_user}"
    )


def alarm_dump(state: PhoneState) -> str:
    now = state.clock.now()
    best: float | None = None
    for alarm in state.alarms:
        if not alarm.enabled:
            continue
        t = time.localtime(now)
        candidate = time.mktime((t.tm_year, t.tm_mon, t.tm_mday, alarm.hour, alarm.minutes, 0, 0, 0, -1))
        candidate += 86400 if candidate <= now else 0
        best = candidate if best is None else min(best, candidate)
    lines = [
        "Current Alarm Manager state:",
        f"  nowRTC={int(now * 1000)}",
        "  Next alarm clock information: ",
    ]
    if best is not None:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(best))
        lines.append(f"    user:0 pendingSend:false time:{int(best * 1000)} = {stamp}")
    return "\n".join(lines) + "\n"


@command("dumpsys")
async def dumpsys(p: Proc) -> int:
    if await print_canned(p):
        return 0
    state = state_of(p)
    args = p.argv[1:]
    if not args:
        await p.print("Currently running services:\n" + "".join(f"  {s}\n" for s in SERVICES))
        return 0
    service, rest = args[0], args[1:]
    if service == "window":
        from .power_cmds import policy_dump  # here: power_cmds extends this module's dumpsys

        await p.print(policy_dump(state) if rest[:1] == ["policy"] else window_dump(state))
    elif service == "activity":
        sub = rest[0] if rest else "activities"
        await p.print(activity_top(state) if sub == "top" else activities_dump(state))
    elif service == "power":
        await p.print(power_dump(state))
    elif service == "battery":
        await p.print(battery_dump(state))
    elif service == "display":
        await p.print(display_dump(state))
    elif service == "telephony.registry":
        await p.print(telephony_dump(state))
    elif service == "notification":
        await p.print(notification_dump(state, redact="--noredact" not in rest))
    elif service == "input_method":
        await p.print(input_method_dump(state))
    elif service == "package":
        names = [a for a in rest if not a.startswith("-")]
        await p.print(package_dump(state, names[0]) if names else "Packages:\n")
    elif service == "SurfaceFlinger":
        await p.print(
            'Display 4619827259835644672 (HWC display 0): port=0 pnpId=GGL displayName="EMU_display_0"\n'
        )
    elif service == "alarm":
        await p.print(alarm_dump(state))
    elif service in SERVICES:
        await p.print(f"{service.upper()} (dumpsys {service})\n")
    else:
        await p.error(f"Can't find service: {service}\n")
    return 0
