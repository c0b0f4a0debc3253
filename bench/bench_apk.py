"""What INSTALL_APP's approval costs before the hold (issue 27): reading an APK's binary manifest
(util/apk.py) against hashing the whole APK (the sha256 the approval names), for APKs of 1, 16 and
64 MB; and what the event loop feels meanwhile: its longest stall while the description is made
in the loop (before) and on a thread (now, `asyncio.to_thread`). Prints figures, asserts nothing.

    python bench/bench_apk.py
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phoneuse_runtime.util.apk import file_sha256, read_apk
from tests.fakes.apk import manifest_xml

PERMS = tuple(f"android.permission.P{i}" for i in range(40))


def apk_of(size_mb: int, folder: Path) -> Path:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as apk:
        apk.writestr("AndroidManifest.xml", manifest_xml("com.example.big", permissions=PERMS))
        apk.writestr("classes.dex", os.urandom(size_mb * 1024 * 1024))
    path = folder / f"big-{size_mb}.apk"
    path.write_bytes(out.getvalue())
    return path


def describe(path: Path) -> str:
    manifest = read_apk(path)
    return f"{manifest.package} {file_sha256(path)}"


async def longest_stall(work: object, threaded: bool) -> float:
    """The loop's longest gap between 1 ms ticks while `work` runs."""
    stalls: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            stalls.append(now - last)
            last = now

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    if threaded:
        await asyncio.to_thread(work)  # type: ignore[arg-type]
    else:
        work()  # type: ignore[operator]
    await asyncio.sleep(0.01)
    done.set()
    await tick
    return max(stalls) * 1000


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("size    manifest ms   sha256 ms   loop stall in loop ms   on a thread ms   ratio")
        for size in (1, 16, 64):
            path = apk_of(size, folder)
            t0 = time.perf_counter()
            for _ in range(20):
                read_apk(path)
            manifest_ms = (time.perf_counter() - t0) / 20 * 1000
            t0 = time.perf_counter()
            file_sha256(path)
            hash_ms = (time.perf_counter() - t0) * 1000
            before = await longest_stall(lambda p=path: describe(p), threaded=False)
            after = await longest_stall(lambda p=path: describe(p), threaded=True)
            print(
                f"{size:>3} MB  {manifest_ms:>10.2f}  {hash_ms:>10.1f}  {before:>22.1f}  {after:>15.1f}"
                f"   {before / max(after, 0.001):>5.1f}x"
            )


if __name__ == "__main__":
    asyncio.run(main())
