"""Actions run in a task of their own (a plain `create_task`, the same on every Python):
whichever step of the handler an outcome comes from, it is the same outcome, and a retry gets it."""

from __future__ import annotations

import asyncio

import pytest

from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec

from .conftest import ServerFactory
from .extras import Extra


class StepsParams(Params):
    steps: int = 0  # how many times the handler yields to the loop before it acts
    fail: bool = False
    cancel: bool = False  # raises CancelledError itself (it awaited a cancelled future, say)
    wait_s: float = 0.0


async def steps(ctx: ActionContext, p: StepsParams) -> ActionResult:
    for _ in range(p.steps):
        await asyncio.sleep(0)
    if p.wait_s:
        await asyncio.sleep(p.wait_s)
    if p.fail:
        raise KeyError("bug")
    if p.cancel:
        raise asyncio.CancelledError
    return ActionResult(via=f"after {p.steps} steps")


STEPS = ActionSpec("STEPS", StepsParams, steps, ActionResult, "Yield, then answer or fail")


@pytest.mark.parametrize("n", [0, 1, 5])
async def test_the_outcome_is_the_same_whatever_the_step(make_client: ServerFactory, n: int) -> None:
    client = await make_client(components=[Extra(STEPS)])
    assert (await client.ok("STEPS", {"steps": str(n)}))["via"] == f"after {n} steps"
    failed = await client.execute("STEPS", {"steps": str(n), "fail": "true"}, request_id=f"f{n}")
    assert failed.error == "INTERNAL: STEPS failed unexpectedly; see the server log"
    again = await client.execute("STEPS", {"steps": str(n), "fail": "true"}, request_id=f"f{n}")
    assert again.error == failed.error and again.duration_ms == failed.duration_ms
    cancelled = await client.execute("STEPS", {"steps": str(n), "cancel": "true"}, request_id=f"c{n}")
    assert cancelled.error == failed.error


async def test_a_suspended_action_meets_its_deadline(make_client: ServerFactory) -> None:
    client = await make_client(components=[Extra(STEPS)])
    response = await client.execute("STEPS", {"steps": "2", "wait_s": "30"}, timeout_ms=100)
    assert response.error == "TIMEOUT: STEPS did not finish within 100 ms; its device work was cancelled"
    assert not client.app.runtime._tasks  # the carried-on task is gone
