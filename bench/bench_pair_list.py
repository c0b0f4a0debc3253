"""`pair list` over a big pairing store: its time and its output's size, table and --json.

Fills a fresh data dir with ROWS pairings (issued on the store, as `pair new` does) whose names
are NAME_CHARS long and hold terminal escapes, then runs `phoneuse-runtime pair list` (and
`--json`) as a subprocess and prints the wall time and the bytes written. Before issue 16 the
table padded every row to the longest name: 58 rows of 1 MB names printed 11 GB.

    python bench/bench_pair_list.py [ROWS] [NAME_CHARS]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import child_env

from phoneuse_runtime.gateway.db import connect, db_path
from phoneuse_runtime.gateway.pairing import PairingStore


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    name_chars = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        conn = connect(db_path(data_dir))
        PairingStore.create_tables(conn)
        store = PairingStore(conn)
        name = ("\x1b[2J\x1b]0;pwned\x07\u202e" + "N" * name_chars)[:name_chars]
        for i in range(rows):
            store.issue(f"{i}{name}")
        conn.close()
        size = sum(f.stat().st_size for f in data_dir.glob("gateway.sqlite3*"))
        env = {k: v for k, v in child_env().items() if not k.startswith("PHONEUSE_")}
        print(f"{rows} pairings, names of {name_chars} characters; store {size / 1e6:.1f} MB")
        for args in ((), ("--json",)):
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "phoneuse_runtime", "pair", "list", *args, "--data-dir", tmp],
                capture_output=True,
                env=env,
                check=True,
                cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            )
            took = time.monotonic() - started
            raw = sum(done.stdout.count(c) for c in (b"\x1b", b"\x07", "\u202e".encode()))
            label = " ".join(("pair list", *args))
            print(f"{label:<17} {took:6.2f} s  {len(done.stdout) / 1e6:8.2f} MB  raw escapes: {raw}")


if __name__ == "__main__":
    main()
