"""What the CLI prints of text that an app, a contact or a message wrote: terminal escapes and
bidi controls reach the owner's terminal escaped, and `pair list` stays small whatever the names.
Real `serve` processes, a real websockets app, the CLI as a subprocess; bytes as captured."""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path

from websockets.sync.client import connect

from phoneuse_runtime.gateway.limits import DEVICE_NAME_CHARS
from tests.serving import EXE, ServeProcess, cli_env, run, served

__all__ = ["served"]  # the fixture, used by name

# Clear the screen, retitle the window (OSC ... BEL), hide what follows, reverse the line's
# direction, a C1 CSI (what ESC[ is, in one byte), and a DEL: none may reach the terminal raw.
HOSTILE = "\x1b[2J\x1b]0;pwned\x07Pixel\x1b[8m hidden \u202egnp.exe\x9b31m\x7f"
RAW = (b"\x1b", b"\x07", b"\xc2\x9b", b"\x7f", "\u202e".encode())


def raw_bytes(data: bytes) -> list[bytes]:
    """The dangerous characters that `data` holds as they are."""
    return [c for c in RAW if c in data]


def run_bytes(s: ServeProcess, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*EXE, *args], capture_output=True, env=cli_env(s.data_dir), timeout=60)


_PORTS: dict[int, int] = {}  # a server's pid -> its gateway's port


def gateway_port(s: ServeProcess) -> int:
    if s.proc.pid in _PORTS:
        return _PORTS[s.proc.pid]
    record = json.loads((s.data_dir / "server.json").read_text())
    if record.get("gateway"):  # recorded by the server (issue 16, finding 7)
        port = int(record["gateway"].rpartition(":")[2])
    else:  # before it was, only the log line said it
        assert s.proc.stderr is not None
        line = next(line for line in s.proc.stderr if "serving the Iris gateway on ws://" in line)
        port = int(line.rsplit(":", 1)[1].split("/")[0])
    _PORTS[s.proc.pid] = port
    return port


def ask_to_pair(s: ServeProcess, *, name: str, device_id: str = "hostile-1") -> str:
    """An app with a token of its own says hello; returns the pairing code it is shown."""
    with connect(f"ws://127.0.0.1:{gateway_port(s)}/ws") as ws:
        token = secrets.token_urlsafe(32)
        hello = {"token": token, "device_id": device_id, "device_name": name}
        ws.send(json.dumps({"v": 1, "id": 1, "type": "hello", "payload": hello}))
        answer = json.loads(ws.recv(timeout=10))
    assert answer["payload"]["code"] == "auth", answer
    message: str = answer["payload"]["message"]
    return message.split("pairing code: ")[1].split(maxsplit=1)[0].strip(".,;)")


def test_pair_list_shows_an_app_named_device_escaped(served: ServeProcess) -> None:
    """An app names its device with terminal escapes, for pair list to write them to the owner's terminal."""
    code = ask_to_pair(served, name=HOSTILE)
    table = run_bytes(served, "pair", "list")
    assert table.returncode == 0, table.stderr
    assert code.encode() in table.stdout
    assert raw_bytes(table.stdout) == [], table.stdout
    assert b"\\x1b[2J\\x1b]0;pwned\\x07Pixel" in table.stdout  # shown, escaped (and clipped)
    listed = run_bytes(served, "pair", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert raw_bytes(listed.stdout) == [], listed.stdout
    [row] = json.loads(listed.stdout)
    assert row["name"].startswith("\x1b[2J\x1b]0;pwned")  # the JSON still holds the name itself
    approved = run_bytes(served, "pair", "approve", code)
    assert approved.returncode == 0, approved.stderr
    assert raw_bytes(approved.stdout) == [], approved.stdout
    assert b"Pixel\\x1b[8m hidden \\u202egnp.exe\\x9b31m\\x7f" in approved.stdout  # the whole name


def test_pair_list_stays_small_with_very_long_names(served: ServeProcess) -> None:
    # 10 apps ask with names as long as the gateway takes (longer ones are refused at hello).
    """An app with very long names makes pair list print gigabytes."""
    for i in range(10):
        ask_to_pair(served, name=f"{i}" + "N" * (DEVICE_NAME_CHARS - 1), device_id=f"long-{i}")
    table = run_bytes(served, "pair", "list")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.decode().splitlines()
    assert len(lines) == 11  # the header, 10 rows
    assert "…" in lines[1]  # cut in the table, so no column grows with a name
    assert max(len(line) for line in lines) < 200, max(len(line) for line in lines)
    assert len(table.stdout) < 3_000, len(table.stdout)


def test_pair_new_with_a_very_long_name_still_gives_a_qr_code(served: ServeProcess) -> None:
    """Hostile input: a very long device name for pair new, to break its QR code."""
    made = run(served, "pair", "new", "--name", "N" * 20_000)  # a command line holds 128 KiB
    assert made.returncode == 0, made.stderr
    assert "\u2580" in made.stdout and "Traceback" not in made.stderr
    table = run_bytes(served, "pair", "list")
    assert "…".encode() in table.stdout and len(table.stdout) < 1_000  # the name, cut, says so


def test_exec_and_query_print_what_the_phone_holds_escaped(served: ServeProcess) -> None:
    """A contact or a message holds terminal escapes, for exec and query to print to the owner's terminal."""
    added = run_bytes(served, "exec", "ADD_CONTACT", f"name={HOSTILE}", "phone=+1 555 0142")
    assert added.returncode == 0, added.stderr
    assert raw_bytes(added.stdout) == []
    found = run_bytes(served, "query", "CONTACTS", "name=pixel")
    assert found.returncode == 0, found.stderr
    assert raw_bytes(found.stdout) == [], found.stdout
    assert [c["name"] for c in json.loads(found.stdout)["results"]] == [HOSTILE]  # still JSON, whole
    # Readable text stays as it is: only controls, format and bidi characters are escaped.
    readable = "Zoë 👩‍💻 王小明 محمد"
    run(served, "exec", "ADD_CONTACT", f"name={readable}", "phone=+1 555 0143", check=True)
    shown = run_bytes(served, "query", "CONTACTS", "name=zoë")
    assert readable.encode() in shown.stdout, shown.stdout


def test_memory_export_and_stats_print_stored_text_escaped(served: ServeProcess) -> None:
    """Text stored in the memory holds terminal escapes, for memory export and stats to print."""
    remembered = run(served, "exec", "REMEMBER", f"kind=k{HOSTILE}", f"name={HOSTILE}", f"text={HOSTILE}")
    assert remembered.returncode == 0, remembered.stderr
    exported = run_bytes(served, "memory", "export")
    assert exported.returncode == 0, exported.stderr
    assert raw_bytes(exported.stdout) == [], exported.stdout
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert any(record.get("name") == HOSTILE for record in lines)  # the same JSON values
    for args in (("stats",), ("stats", "--json")):
        stats = run_bytes(served, "memory", *args)
        assert stats.returncode == 0, stats.stderr
        assert raw_bytes(stats.stdout) == [], stats.stdout


def test_a_bad_key_value_and_a_server_error_are_echoed_escaped(served: ServeProcess) -> None:
    """Hostile input echoed in a CLI error (a bad key=value, a server error) writes escapes."""
    bad = run_bytes(served, "exec", "SET_CLIPBOARD", HOSTILE)  # no '='
    assert bad.returncode != 0, bad
    assert raw_bytes(bad.stderr) == [], bad.stderr
    unknown = run_bytes(served, "query", "CONTACTS", f"{HOSTILE}=1")
    assert unknown.returncode == 2 and b"INVALID_ARGUMENT" in unknown.stderr, unknown
    assert raw_bytes(unknown.stderr) == [], unknown.stderr


def test_a_missing_pairing_code_is_echoed_escaped(tmp_path: Path) -> None:
    """A pairing code with terminal escapes, echoed in pair approve's error."""
    done = subprocess.run(
        [*EXE, "pair", "deny", HOSTILE, "--data-dir", str(tmp_path)], capture_output=True, timeout=60
    )
    assert done.returncode == 3, done
    assert done.stderr.startswith(b"NOT_FOUND: ")
    assert raw_bytes(done.stderr) == [], done.stderr
