"""The event sink's spool: what it has not had acked yet, on disk while NATS is unreachable.

`DATA_DIR/nats-spool.jsonl` (0600, in the private data dir), one JSON object a line: an event
`{"id", "subject", "data"}` (data: the message body as text), or an ack mark `{"acked": ID}`
saying that every event up to that one is in the stream. The sink starts spooling when it
finds NATS unreachable (it writes its whole buffer, then each event it accepts), marks what
gets acked, and removes the file once its buffer is empty. A runtime killed meanwhile finds
the file at its next start and publishes what it holds first, with the events' own ids (a
re-publish within the stream's duplicate window is stored once).

Writes are appends of a line (no fsync: the file survives the process being killed, not the
machine losing power). The file is rewritten from the buffer when it holds more than twice the
buffer's bound, so an outage does not grow it without end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from phoneuse_runtime.util.files import PRIVATE_FILE, private_dir

log = logging.getLogger(__name__)

SPOOL_FILE = "nats-spool.jsonl"


@dataclass(frozen=True, slots=True)
class Pending:
    """One event for JetStream: its dedup id, subject and body."""

    msg_id: str
    subject: str
    data: bytes


def _line(item: Pending) -> bytes:
    text = json.dumps(
        {"id": item.msg_id, "subject": item.subject, "data": item.data.decode()}, ensure_ascii=False
    )
    return text.encode() + b"\n"


class Spool:
    def __init__(self, path: Path, *, bound: int) -> None:
        self.path = path
        self.bound = bound
        self.lines = 0  # lines in the file now
        self.broken = False  # a write failed: no more spooling this run
        self._fd: int | None = None
        self._pending: list[bytes] = []
        self._flush_soon: asyncio.Handle | None = None

    @property
    def active(self) -> bool:
        return self._fd is not None

    def load(self) -> list[Pending]:
        """What an earlier run left unacked: the newest `bound` events after the last ack mark.
        A line cut short (a kill mid-write) or not of the spool's shape is skipped."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.warning("cannot read the event spool %s: %s", self.path, exc)
            return []
        items: list[Pending] = []
        for line in raw.splitlines():
            try:
                entry = json.loads(line)
                if "acked" in entry:
                    acked = str(entry["acked"])
                    at = next((i for i, item in enumerate(items) if item.msg_id == acked), None)
                    if at is not None:
                        del items[: at + 1]
                    continue
                items.append(Pending(str(entry["id"]), str(entry["subject"]), str(entry["data"]).encode()))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
        return items[-self.bound :]

    def begin(self, items: Iterable[Pending]) -> None:
        """Starts (or restarts) the file with `items`: the buffer as it is."""
        if self.broken:
            return
        try:
            self._begin(items)
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        """A disk that is full or read-only: the buffer stays in memory alone, said once."""
        self.broken = True
        log.warning(
            "cannot write the event spool %s (%s): events are buffered in memory only", self.path, exc
        )
        with contextlib.suppress(OSError):
            self.close()

    def _begin(self, items: Iterable[Pending]) -> None:
        self._drop_pending()  # lines for events that are in `items` too
        self.close()
        private_dir(self.path.parent)
        data = b"".join(_line(item) for item in items)
        # Written beside it and renamed over it: a kill meanwhile leaves the old file whole.
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self.lines = data.count(b"\n")

    def append(self, items: Iterable[Pending]) -> None:
        self._queue(b"".join(_line(item) for item in items))

    def acked(self, msg_id: str) -> None:
        self._queue(json.dumps({"acked": msg_id}).encode() + b"\n")

    def _queue(self, data: bytes) -> None:
        """Lines are written once per turn of the event loop, together (one write for a burst
        of events), or at once outside a loop."""
        if self._fd is None or not data:
            return
        self._pending.append(data)
        self.lines += data.count(b"\n")
        if self._flush_soon is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._flush_soon = loop.call_soon(self.flush)

    def flush(self) -> None:
        if self._flush_soon is not None:
            self._flush_soon.cancel()
            self._flush_soon = None
        data, self._pending = b"".join(self._pending), []
        if self._fd is None or not data:
            return
        try:
            os.write(self._fd, data)
        except OSError as exc:
            self._fail(exc)

    def too_long(self) -> bool:
        return self.lines > 2 * self.bound

    def _drop_pending(self) -> None:
        if self._flush_soon is not None:
            self._flush_soon.cancel()
            self._flush_soon = None
        self._pending = []

    def close(self) -> None:
        self.flush()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def clear(self) -> None:
        """Everything is acked: the file goes."""
        self._drop_pending()
        self.close()
        with contextlib.suppress(OSError):
            self.path.unlink()
        self.lines = 0
