"""The attached face's answers through the approval store (mcp/holds.py's StoreHolds) against a
real store file: the server announces a hold while its row is still being written, so an answer
that comes at once waits for the row (it was lost before: the call then waited for its timeout);
an answer for another call under the id, or for a hold that ended, is too late."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.mcp.holds import REQUESTED, RESOLVED, FaceHold, StoreHolds, TooLate
from phoneuse_runtime.owner import approval_store as store

APPROVAL = "a" * 32
DIGEST = "d" * 64
CALLER = {"frontend": "mcp", "principal": "agent"}


def announce(holds: StoreHolds, *, digest: str = DIGEST) -> FaceHold:
    """The server's APPROVAL_REQUESTED for a SEND_MESSAGE of the face's, as the face hears it."""
    payload = {
        "approval_id": APPROVAL,
        "kind": "action",
        "name": "SEND_MESSAGE",
        "request_id": "r1",
        "params": {"to": "+14155550101", "body": "hi"},
        "app_target": None,
        "digest": digest,
        "caller": CALLER,
        "reason": "the owner approves messages",
        "deadline_ms": now_ms() + 60_000,
    }
    holds.heard(REQUESTED, json.dumps(payload))
    hold = holds.pending(APPROVAL)
    assert hold is not None
    return hold


def write_row(data_dir: Path, *, digest: str = DIGEST) -> None:
    """The row the server's TerminalAnswers writes for the hold."""
    conn = store.connect(store.store_path(data_dir))
    try:
        row = (APPROVAL, digest, "SEND_MESSAGE", "SEND_MESSAGE to=+14155550101 body=hi", "{}", "mcp:agent")
        conn.execute(store.INSERT, (*row, "the owner approves messages", now_ms(), now_ms() + 60_000))
    finally:
        conn.close()


def answer_in_store(data_dir: Path) -> str | None:
    conn = store.connect(store.store_path(data_dir))
    try:
        row = conn.execute("SELECT answer FROM holds WHERE approval_id = ?", (APPROVAL,)).fetchone()
        return None if row is None or row[0] is None else str(row[0])
    finally:
        conn.close()


@pytest.fixture
async def one_thread() -> None:
    """The loop's threads as one, in order: the answer's first look at the store runs before the
    row is written (as when the user answers before the server's thread writes it)."""
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=1))


@pytest.mark.usefixtures("one_thread")
async def test_an_answer_that_comes_before_the_row_waits_for_it(tmp_path: Path) -> None:
    holds = StoreHolds(None, (), tmp_path)  # type: ignore[arg-type]  # no stream: its events are given here
    hold = announce(holds)
    answering = asyncio.get_running_loop().create_task(holds.answer(hold, approved=True, by="the user"))
    await asyncio.sleep(0)  # the answer's first look at the store is queued first
    await asyncio.to_thread(write_row, tmp_path)
    await asyncio.wait_for(answering, 10)
    assert answer_in_store(tmp_path) == store.APPROVE


@pytest.mark.usefixtures("one_thread")
async def test_an_answer_for_a_hold_that_ended_is_too_late(tmp_path: Path) -> None:
    holds = StoreHolds(None, (), tmp_path)  # type: ignore[arg-type]
    hold = announce(holds)
    holds.heard(RESOLVED, json.dumps({"approval_id": APPROVAL, "caller": CALLER}))
    with pytest.raises(TooLate):
        await asyncio.wait_for(holds.answer(hold, approved=True, by="the user"), 10)


async def test_an_answer_for_another_call_under_the_id_is_too_late(tmp_path: Path) -> None:
    holds = StoreHolds(None, (), tmp_path)  # type: ignore[arg-type]
    hold = announce(holds)
    await asyncio.to_thread(write_row, tmp_path, digest="e" * 64)  # not the call the user was shown
    with pytest.raises(TooLate):
        await asyncio.wait_for(holds.answer(hold, approved=True, by="the user"), 10)
    assert answer_in_store(tmp_path) is None


async def test_a_hold_of_another_caller_is_not_kept(tmp_path: Path) -> None:
    holds = StoreHolds(None, (), tmp_path)  # type: ignore[arg-type]
    payload = {"approval_id": APPROVAL, "caller": {"frontend": "grpc", "principal": "agent"}}
    holds.heard(REQUESTED, json.dumps(payload))
    assert holds.pending(APPROVAL) is None
