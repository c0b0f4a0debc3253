"""The fake phone's shell and userland, driven through contract.PhoneSide with in-memory streams
(no adb): the shell language, toybox and Android tools, the content providers, and adbutils'
own parsers reading our outputs."""

from __future__ import annotations

import asyncio
import hashlib
import io
import re
from typing import Any

import pytest
from PIL import Image

from tests.waiting import wait_until

from .contract import FileStat
from .memio import MemoryIO
from .phone import FakePhone
from .state import ManualClock


@pytest.fixture
def phone() -> FakePhone:
    return FakePhone()


# --- the seam ---------------------------------------------------------------------------------


async def test_banner_names_the_phone_and_the_daemon_features(phone: FakePhone) -> None:
    assert phone.banner() == (
        "device::ro.product.name=sdk_gphone64_x86_64;ro.product.model=sdk_gphone64_x86_64;"
        "ro.product.device=emu64xa;features=shell_v2,cmd"
    )


async def test_files_through_the_sync_side(phone: FakePhone) -> None:
    phone.write_file("/data/local/tmp/dir/a.txt", b"hello", 0o100644, 1_700_000_001)
    assert phone.stat("/data/local/tmp/dir/a.txt") == FileStat(0o100644, 5, 1_700_000_001)
    assert phone.read_file("/data/local/tmp/dir/a.txt") == b"hello"
    assert [name for name, _ in phone.list_dir("/data/local/tmp")] == ["dir"]
    assert phone.stat("/sdcard/Download") is not None and phone.stat("/nope") is None
    with pytest.raises(PermissionError):
        phone.list_dir("/data")
    with pytest.raises(OSError, match="Read-only"):
        phone.write_file("/system/bin/evil", b"x", 0o100755, 0)
    with pytest.raises(IsADirectoryError):
        phone.read_file("/sdcard")
    with pytest.raises(FileNotFoundError):
        phone.read_file("/data/local/tmp/missing")


async def test_run_shell_logs_the_command_and_returns_the_exit_code(phone: FakePhone) -> None:
    io_ = MemoryIO()
    assert await phone.run_shell("echo hi; false", io_) == 1
    assert bytes(io_.stdout) == b"hi\n"
    assert phone.state.log.shell == ["echo hi; false"]
    assert phone.state.log.ran("echo") == [["echo", "hi"]]


async def test_interactive_shell_runs_lines_until_exit(phone: FakePhone) -> None:
    io_ = MemoryIO(b"echo one\nexit\n")
    await phone.run_shell("", io_)
    assert b"one\n" in io_.stdout and io_.stdout.startswith(b"emu64xa:/ $ ")


# --- the shell language ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "out"),
    [
        ("echo 'a  b' \"c  $HOME\" \\$x", "a  b c  / $x\n"),
        ("X=1; echo $X ${X:-d} ${Y:-d} ${#HOME}", "1 1 d 1\n"),
        ("echo $(echo inner) `echo back`", "inner back\n"),
        ("false; echo $?; true && echo yes || echo no", "1\nyes\n"),
        ("false || echo fallback", "fallback\n"),
        ("echo -n a; echo b", "ab\n"),
        ("echo 'a\\nb'", "a\nb\n"),
        ("printf '%s-%d\\n' x 7", "x-7\n"),
        ("echo $((2 + 3 * 4))", "14\n"),
        ("A='x y'; for w in $A; do echo [$w]; done", "[x]\n[y]\n"),
        ('A="x y"; for w in "$A"; do echo [$w]; done', "[x y]\n"),
        ("if [ -d /sdcard ]; then echo dir; else echo nodir; fi", "dir\n"),
        ("i=0; while [ $i -lt 3 ]; do echo $i; i=$((i+1)); done", "0\n1\n2\n"),
        ("echo hello | grep -c ell", "1\n"),
        ("(cd /sdcard; pwd); pwd", "/storage/emulated/0\n/\n"),
        ("echo a > /data/local/tmp/f; echo b >> /data/local/tmp/f; cat /data/local/tmp/f", "a\nb\n"),
        ("ls /nope 2>&1 | head -n 1", "ls: /nope: No such file or directory\n"),
        ("ls /nope > /dev/null 2>&1; echo X4EXIT:$?", "X4EXIT:1\n"),
        ("echo # comment", "\n"),
    ],
)
async def test_shell_language(phone: FakePhone, command: str, out: str) -> None:
    result = await phone.sh(command)
    assert result.stdout == out, result.stderr


async def test_unknown_commands_and_syntax_errors_fail_like_mksh(phone: FakePhone) -> None:
    assert await phone.sh("frobnicate --now") == await phone.sh("frobnicate --now")
    result = await phone.sh("frobnicate --now")
    assert (result.code, result.stderr) == (127, "/system/bin/sh: frobnicate: inaccessible or not found\n")
    result = await phone.sh("echo 'unterminated")
    assert (result.code, result.stderr) == (1, "/system/bin/sh: syntax error: no closing quote\n")
    assert "syntax error: 'fi' unexpected" in (await phone.sh("fi")).stderr
    result = await phone.sh("echo hi > /system/x")
    assert (result.code, result.stderr) == (
        1,
        "/system/bin/sh: can't create /system/x: Read-only file system\n",
    )


async def test_an_unquoted_substitution_runs_as_it_would_on_a_phone(phone: FakePhone) -> None:
    phone.fs.write("/sdcard/Download/photo.jpg", b"jpeg")
    result = await phone.sh(
        "am start -a android.intent.action.VIEW -d https://x.example/$(rm -rf /sdcard/Download)"
    )
    assert ["rm", "-rf", "/sdcard/Download"] in phone.state.log.commands
    assert not phone.fs.exists("/sdcard/Download/photo.jpg")
    assert result.code == 0
    quoted = await phone.sh("echo '$(rm -rf /sdcard)'")
    assert quoted.stdout == "$(rm -rf /sdcard)\n" and phone.fs.exists("/sdcard/Music")


async def test_globs_expand_against_the_file_system(phone: FakePhone) -> None:
    for name in ("a.txt", "b.txt", "c.png"):
        phone.fs.write(f"/data/local/tmp/{name}", b"")
    assert (
        await phone.sh("echo /data/local/tmp/*.txt")
    ).stdout == "/data/local/tmp/a.txt /data/local/tmp/b.txt\n"
    assert (await phone.sh("cd /data/local/tmp; rm *.txt; ls")).stdout == "c.png\n"
    assert (await phone.sh("echo '*.txt' nomatch*")).stdout == "*.txt nomatch*\n"


async def test_environment_prefixes_and_scripts(phone: FakePhone) -> None:
    assert (await phone.sh("CLASSPATH=/x sh_var=1 printf '%s\\n' $CLASSPATH")).stdout == "\n"
    phone.fs.write("/data/local/tmp/s.sh", b"echo from script $1\nexit 3\n", 0o100755)
    result = await phone.sh("/data/local/tmp/s.sh")
    assert (result.code, result.stdout) == (3, "from script\n")
    phone.fs.write("/data/local/tmp/noexec.sh", b"echo x\n", 0o100644)
    assert (await phone.sh("/data/local/tmp/noexec.sh")).code == 126


async def test_a_long_running_command_ends_when_the_host_goes_away(phone: FakePhone) -> None:
    io_ = MemoryIO(eof=False)
    task = asyncio.ensure_future(phone.run_shell("sleep 30", io_))
    await wait_until(lambda: bool(phone.state.log.ran("sleep")), what="the sleep under way")
    assert not task.done()
    io_.close()
    assert await asyncio.wait_for(task, 2) == 143


# --- toybox and Android tools -----------------------------------------------------------------------


async def test_getprop_md5sum_ls_and_id(phone: FakePhone) -> None:
    props = (await phone.sh("getprop")).stdout
    assert "[ro.build.version.sdk]: [33]\n" in props
    assert (await phone.sh("getprop ro.build.version.release")).stdout == "13\n"
    assert (await phone.sh("getprop no.such.prop")).stdout == "\n"
    data = b"the jar"
    phone.write_file("/data/local/tmp/u2.jar", data, 0o100644, 0)
    want = f"{hashlib.md5(data).hexdigest()}  /data/local/tmp/u2.jar\n"
    assert (await phone.sh("toybox md5sum /data/local/tmp/u2.jar")).stdout == want
    assert (await phone.sh("md5sum /data/local/tmp/u2.jar")).stdout == want
    assert (await phone.sh("ls /data")).stderr == "ls: /data: Permission denied\n"
    assert re.match(
        r"-rw-r--r-- 1 shell shell +7 ", (await phone.sh("ls -l /data/local/tmp")).stdout.split("\n")[1]
    )
    assert (await phone.sh("id")).stdout.startswith("uid=2000(shell) gid=2000(shell)")
    assert (await phone.sh("which input")).stdout == "/system/bin/input\n"


async def test_settings_ime_and_wm(phone: FakePhone) -> None:
    assert (await phone.sh("settings get secure default_input_method")).stdout.startswith(
        "com.google.android.inputmethod.latin/"
    )
    assert (await phone.sh("settings get system nonexistent")).stdout == "null\n"
    await phone.sh("settings put global stay_on_while_plugged_in 3")
    assert phone.state.settings["global"]["stay_on_while_plugged_in"] == "3"
    assert (
        await phone.sh("ime list -s")
    ).stdout == "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME\n"
    assert "Unknown input method" in (await phone.sh("ime set com.github.uiautomator/.AdbKeyboard")).stderr
    assert (await phone.sh("wm size")).stdout == "Physical size: 720x1280\n"


async def test_pm_lists_resolves_and_installs(phone: FakePhone) -> None:
    assert (
        await phone.sh("pm list packages -3")
    ).stdout == "package:com.spotify.music\npackage:com.whatsapp\n"
    assert "package:com.google.android.apps.messaging\n" in (await phone.sh("pm list packages")).stdout
    resolved = await phone.sh(
        "cmd package resolve-activity --brief -c android.intent.category.LAUNCHER com.whatsapp"
    )
    assert resolved.stdout == (
        "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\ncom.whatsapp/.Main\n"
    )
    assert (await phone.sh("cmd package resolve-activity --brief nope.pkg")).stdout == "No activity found\n"
    assert (await phone.sh("pm path com.whatsapp")).stdout.startswith("package:/data/app/")
    phone.fs.write("/data/local/tmp/x.apk", b"not an apk")
    failed = await phone.sh("pm install -r -t /data/local/tmp/x.apk")
    assert (failed.code, failed.stdout.startswith("Failure [INSTALL_PARSE_FAILED_NOT_APK")) == (1, True)
    assert (
        await phone.sh("pm uninstall com.android.settings")
    ).stdout == "Failure [DELETE_FAILED_INTERNAL_ERROR]\n"
    assert (await phone.sh("pm uninstall com.whatsapp")).stdout == "Success\n"
    assert "com.whatsapp" not in phone.state.packages


async def test_am_start_prints_the_intent_and_reports_failures_on_stderr(phone: FakePhone) -> None:
    result = await phone.sh("am start -a android.intent.action.VIEW -d https://example.com/a/b?q=1")
    assert (
        result.stdout == "Starting: Intent { act=android.intent.action.VIEW dat=https://example.com/... }\n"
    )
    assert phone.state.foreground().package == "com.android.chrome"
    result = await phone.sh("am start -a android.intent.action.VIEW -d geo:0,0?q=cafe")
    assert result.code == 0 and result.stderr == (
        "Error: Activity not started, unable to resolve Intent { act=android.intent.action.VIEW "
        "dat=geo:0,0?q=cafe "
        "flg=0x10000000 }\n"
    )
    result = await phone.sh("am start -n com.whatsapp/.Nope")
    assert (
        result.stderr
        == "Error type 3\nError: Activity class {com.whatsapp/com.whatsapp.Nope} does not exist.\n"
    )
    result = await phone.sh("am start -a x --ei android.intent.extra.alarm.HOUR seven")
    assert (
        result.code == 255 and 'java.lang.NumberFormatException: For input string: "seven"' in result.stderr
    )
    assert "Exception occurred while executing 'start':" in result.stderr
    result = await phone.sh("am start --bogus")
    assert "java.lang.IllegalArgumentException: Unknown option: --bogus" in result.stderr


async def test_am_extras_keep_their_types_and_an_unquoted_space_splits(phone: FakePhone) -> None:
    await phone.sh(
        "am start -a android.intent.action.SENDTO -d smsto:5551234 --es sms_body 'hi there' --ei n 0x10 "
        "--el t 1700000000000 --ez b true --esa list a,b\\\\,c --eia ints 1,2"
    )
    it = phone.state.log.intents[-1]
    assert it.extras == {
        "sms_body": "hi there",
        "n": 16,
        "t": 1700000000000,
        "b": True,
        "list": ["a", "b,c"],
        "ints": [1, 2],
    }
    assert it.extra_types == {"sms_body": "s", "n": "i", "t": "l", "b": "z", "list": "sa", "ints": "ia"}
    result = await phone.sh(
        "am start -a android.intent.action.SENDTO -d smsto:5551234 --es sms_body hi there"
    )
    assert phone.state.log.intents[-1].package == "there"
    assert "unable to resolve Intent" in result.stderr and "pkg=there" in result.stderr


async def test_monkey_launches_or_aborts(phone: FakePhone) -> None:
    result = await phone.sh("monkey -p com.whatsapp -c android.intent.category.LAUNCHER 1")
    assert "Events injected: 1" in result.stdout and phone.state.foreground().package == "com.whatsapp"
    result = await phone.sh("monkey -p no.such.app -c android.intent.category.LAUNCHER 1")
    assert (result.code, result.stderr) == (251, "** No activities found to run, monkey aborted.\n")


async def test_input_text_types_ascii_only(phone: FakePhone) -> None:
    await phone.sh("monkey -p com.google.android.keep -c android.intent.category.LAUNCHER 1")
    assert (await phone.sh("input text 'hello%sworld'")).code == 0
    assert phone.state.focused_text() == "hello world"
    result = await phone.sh("input text 'caf\u00e9'")
    assert result.code == 255
    assert "java.lang.NullPointerException: Attempt to get length of null array" in result.stderr
    assert phone.state.focused_text() == "hello world"
    assert phone.state.log.texts[-1].ok is False
    await phone.sh("input keyevent KEYCODE_DEL 67")
    assert phone.state.focused_text() == "hello wor"


async def test_screencap_and_uiautomator_dump(phone: FakePhone) -> None:
    png = (await phone.sh("screencap -p")).raw
    assert Image.open(io.BytesIO(png)).size == (720, 1280)
    assert (await phone.sh("screencap /sdcard/s.png")).code == 0 and phone.fs.read(
        "/sdcard/s.png"
    ).startswith(b"\x89PNG")
    result = await phone.sh("uiautomator dump")
    assert result.stdout == "UI hierchary dumped to: /sdcard/window_dump.xml\n"
    xml = phone.fs.read("/sdcard/window_dump.xml").decode()
    assert xml.startswith(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node "
    )
    assert 'content-desc="Messages"' in xml and "\n" not in xml
    tty = await phone.sh("uiautomator dump /dev/tty")
    assert tty.stdout.startswith("<?xml") and tty.stdout.endswith("UI hierchary dumped to: /dev/tty\n")


async def test_dumpsys_formats(phone: FakePhone) -> None:
    await phone.sh("monkey -p com.whatsapp -c android.intent.category.LAUNCHER 1")
    window = (await phone.sh("dumpsys window windows")).stdout
    assert re.search(r"mCurrentFocus=Window\{\w+ u0 com\.whatsapp/com\.whatsapp\.Main\}", window)
    assert re.search(r"mFocusedApp=ActivityRecord\{\w+ u0 com\.whatsapp/\.Main t\d+\}", window)
    acts = (await phone.sh("dumpsys activity activities")).stdout
    assert re.search(r"mResumedActivity: ActivityRecord\{\w+ u0 com\.whatsapp/\.Main t\d+\}", acts)
    assert "topResumedActivity=ActivityRecord{" in acts
    power = (await phone.sh("dumpsys power")).stdout
    assert "mWakefulness=Awake" in power and "Display Power: state=ON" in power
    assert "mCallState=0" in (await phone.sh("dumpsys telephony.registry")).stdout
    assert "level: 100" in (await phone.sh("dumpsys battery")).stdout
    assert (await phone.sh("dumpsys nosuch")).stderr == "Can't find service: nosuch\n"


async def test_notifications_are_redacted_unless_asked(phone: FakePhone) -> None:
    phone.state.receive_sms("+15550001", "Dinner at 8?")
    plain = (await phone.sh("dumpsys notification")).stdout
    assert "android.text=String\n" in plain and "Dinner" not in plain
    full = (await phone.sh("dumpsys notification --noredact")).stdout
    assert "NotificationRecord(0x" in full and "pkg=com.google.android.apps.messaging" in full
    assert "android.title=String (+15550001)" in full and "android.text=String (Dinner at 8?)" in full
    assert re.search(r"\n      when=\d{13}\n", full)


# --- content providers ---------------------------------------------------------------------------------


async def test_content_query_sms(phone: FakePhone) -> None:
    clock = phone.state.clock = ManualClock()
    phone.state.receive_sms("+15551234", "first")
    clock.advance(60)
    phone.state.receive_sms("+15559999", "second, with comma")
    query = "content query --uri content://sms/inbox --projection _id:address:body:date:type"
    assert (await phone.sh(query)).stdout == (
        "Row: 0 _id=2, address=+15559999, body=second, with comma, date=1700000060000, type=1\n"
        "Row: 1 _id=1, address=+15551234, body=first, date=1700000000000, type=1\n"
    )
    where = await phone.sh(query + " --where \"address='+15551234'\" --sort '_id ASC'")
    assert where.stdout == "Row: 0 _id=1, address=+15551234, body=first, date=1700000000000, type=1\n"
    assert (await phone.sh("content query --uri content://sms/sent")).stdout == "No result found.\n"
    injected = await phone.sh(query + " --where \"address='x') OR (1=1\"")
    assert injected.stdout.count("Row:") == 2
    bad = await phone.sh(query + " --where 'address ='")
    assert bad.code == 0 and bad.stderr.startswith(
        "Error while accessing provider:sms\nandroid.database.sqlite.SQLiteException:"
    )
    assert (
        "while compiling: SELECT _id, address, body, date, type FROM sms WHERE (type=1) AND (address =)"
        in bad.stderr
    )


async def test_permission_denial_and_dropped_sms_writes(phone: FakePhone) -> None:
    phone.state.faults.denied_providers.add("sms")
    denied = await phone.sh("content query --uri content://sms/inbox")
    assert denied.code == 0 and denied.stdout == ""
    assert denied.stderr.startswith(
        "Error while accessing provider:sms\njava.lang.SecurityException: Permission Denial: reading "
        "com.android.providers.telephony.SmsProvider uri content://sms/inbox from pid="
    )
    phone.state.faults.denied_providers.clear()
    inserted = await phone.sh("content insert --uri content://sms/sent --bind address:s:1 --bind body:s:fake")
    assert (inserted.code, inserted.stdout, inserted.stderr, phone.state.sms) == (0, "", "", [])
    unknown = await phone.sh("content query --uri content://nope/x")
    assert "java.lang.IllegalStateException: Could not find provider: nope" in unknown.stderr


async def test_content_bindings_need_escaped_colons_on_android_12(phone: FakePhone) -> None:
    base = (
        "content insert --uri content://com.android.calendar/events --bind calendar_id:i:1 "
        "--bind dtstart:l:1700000000000 --bind dtend:l:1700003600000 --bind eventTimezone:s:UTC "
    )
    bad = await phone.sh(base + "--bind title:s:'Meet at 10:30'")
    assert bad.code == 0 and "[ERROR] Binding not well formed: title:s:Meet at 10:30" in bad.stdout
    assert phone.state.events == []
    good = await phone.sh(base + "--bind title:s:'Meet at 10\\:30'")
    assert (good.stdout, good.stderr) == ("", "")
    assert phone.state.events[-1].title == "Meet at 10:30"
    phone.state.props["ro.build.version.sdk"] = "30"
    await phone.sh(base + "--bind title:s:'Old 10:30'")
    assert phone.state.events[-1].title == "Old 10:30"


async def test_calendar_provider_rules(phone: FakePhone) -> None:
    missing_tz = await phone.sh(
        "content insert --uri content://com.android.calendar/events --bind calendar_id:i:1 "
        "--bind dtstart:l:1 "
        "--bind dtend:l:2"
    )
    assert (
        "java.lang.IllegalArgumentException: Event values must include an eventTimezone" in missing_tz.stderr
    )
    calendars = await phone.sh(
        "content query --uri content://com.android.calendar/calendars "
        "--projection _id:calendar_displayName:calendar_access_level:visible:isPrimary"
    )
    assert calendars.stdout == (
        "Row: 0 _id=1, calendar_displayName=pixel.user@gmail.com, calendar_access_level=700, visible=1, "
        "isPrimary=1\n"
        "Row: 1 _id=2, calendar_displayName=Holidays in United States, calendar_access_level=200, visible=1, "
        "isPrimary=0\n"
    )
    await phone.sh(
        "content insert --uri content://com.android.calendar/events --bind calendar_id:i:1 "
        "--bind title:s:Dentist "
        "--bind dtstart:l:1700000000000 --bind dtend:l:1700003600000 --bind eventTimezone:s:UTC"
    )
    await phone.sh("content delete --uri content://com.android.calendar/events/1")
    rows = await phone.sh(
        "content query --uri content://com.android.calendar/events --projection _id:title:deleted"
    )
    assert rows.stdout == "Row: 0 _id=1, title=Dentist, deleted=1\n"


async def test_contacts_insert_and_views(phone: FakePhone) -> None:
    await phone.sh(
        "content insert --uri content://com.android.contacts/raw_contacts "
        "--bind account_type:n: --bind account_name:n:"
    )
    raw = (
        await phone.sh("content query --uri content://com.android.contacts/raw_contacts --projection _id")
    ).stdout
    assert raw == "Row: 0 _id=1\n"
    name = "vnd.android.cursor.item/name"
    phone_mime = "vnd.android.cursor.item/phone_v2"
    insert = "content insert --uri content://com.android.contacts/data --bind raw_contact_id:i:1"
    await phone.sh(f"{insert} --bind mimetype:s:{name} --bind data1:s:'Ada Lovelace'")
    await phone.sh(f"{insert} --bind mimetype:s:{phone_mime} --bind data1:s:+15551234 --bind data2:i:2")
    phones = await phone.sh(
        "content query --uri content://com.android.contacts/data/phones --projection display_name:data1:data2"
    )
    assert phones.stdout == "Row: 0 display_name=Ada Lovelace, data1=+15551234, data2=2\n"
    contacts = await phone.sh(
        "content query --uri content://com.android.contacts/contacts "
        "--projection _id:display_name:has_phone_number"
    )
    assert contacts.stdout == "Row: 0 _id=1, display_name=Ada Lovelace, has_phone_number=1\n"
    no_id = await phone.sh(
        f"content insert --uri content://com.android.contacts/data --bind mimetype:s:{name}"
    )
    assert "raw_contact_id is required" in no_id.stderr


# --- adbutils' own parsers over our outputs ----------------------------------------------------------------


class HostDevice:
    """Enough of an adbutils device (shell v1 semantics: stderr merged, trailing whitespace
    stripped) for adbutils' ShellExtension/ScreenshotExtesion parsers to run against a FakePhone."""

    def __init__(self, phone: FakePhone, loop: asyncio.AbstractEventLoop) -> None:
        self.phone, self.loop = phone, loop

    def shell(
        self,
        cmdargs: Any,
        stream: bool = False,
        timeout: Any = None,
        encoding: Any = "utf-8",
        rstrip: bool = True,
    ) -> Any:
        from adbutils._utils import list2cmdline

        command = list2cmdline(cmdargs) if isinstance(cmdargs, (list, tuple)) else cmdargs
        result = asyncio.run_coroutine_threadsafe(self.phone.sh(command), self.loop).result(10)
        if encoding is None:
            return result.raw
        out = result.stdout + result.stderr
        return out.rstrip() if rstrip else out


def adbutils_device(phone: FakePhone) -> Any:
    from adbutils.screenshot import ScreenshotExtesion
    from adbutils.shell import ShellExtension

    cls = type("Dev", (HostDevice, ShellExtension, ScreenshotExtesion), {"sync": None, "framebuffer": None})
    return cls(phone, asyncio.get_running_loop())


async def test_adbutils_parses_what_the_phone_prints(phone: FakePhone) -> None:
    dev = adbutils_device(phone)
    assert tuple(await asyncio.to_thread(dev.window_size)) == (720, 1280)
    current = await asyncio.to_thread(dev.app_current)
    assert (current.package, current.activity) == (
        "com.google.android.apps.nexuslauncher",
        "com.google.android.apps.nexuslauncher.NexusLauncherActivity",
    )
    assert (await asyncio.to_thread(dev.battery)).level == 100
    assert await asyncio.to_thread(dev.is_screen_on) is True
    assert "com.whatsapp" in await asyncio.to_thread(dev.list_packages, ["-3"])
    info = await asyncio.to_thread(dev.app_info, "com.whatsapp")
    assert (info.version_name, info.version_code) == ("2.23.25.83", 232583000)
    assert await asyncio.to_thread(dev.getprop, "ro.build.version.sdk") == "33"
    image = await asyncio.to_thread(dev.screenshot)
    assert image.size == (720, 1280)
    await asyncio.to_thread(dev.app_start, "com.spotify.music")
    assert phone.state.foreground().package == "com.spotify.music"
    await asyncio.to_thread(dev.app_stop, "com.spotify.music")
    assert "com.spotify.music" not in phone.state.processes
    await asyncio.to_thread(dev.keyevent, "HOME")
    assert phone.state.log.keys[-1].code == 3


async def test_sh_env_and_nohup(phone: FakePhone) -> None:
    assert (await phone.sh("sh -c 'echo $0 inner; exit 4'")).code == 4
    assert (await phone.sh("sh -c 'echo in-sub'")).stdout == "in-sub\n"
    assert (await phone.sh("env FOO=bar sh -c 'echo $FOO'")).stdout == "bar\n"
    assert "USER=shell\n" in (await phone.sh("env")).stdout


async def test_a_detached_u2_server_outlives_its_adb_stream(phone: FakePhone) -> None:
    phone.fs.write("/data/local/tmp/u2.jar", b"jar")
    io_ = MemoryIO()
    command = "CLASSPATH=/data/local/tmp/u2.jar nohup app_process / com.wetest.uia2.Main -p 9008"
    command += " >/dev/null 2>&1 &"
    assert await asyncio.wait_for(phone.run_shell(command, io_), 1) == 0
    await wait_until(lambda: phone.state.u2.running, what="the detached server running")
    io_.close()
    # The stream's end has been seen by the phone once another command has run after it.
    listed = (await phone.sh("ps -A")).stdout
    assert phone.state.u2.running and "app_process" in listed, listed
    await phone.sh(f"kill {phone.state.u2.pid}")
    assert not phone.state.u2.running
