"""SHELL: the escape hatch, refused unless the server runs with --allow-shell."""

from __future__ import annotations

import asyncio

from pydantic import Field

from phoneuse_runtime.kernel.capabilities import SHELL
from phoneuse_runtime.kernel.errors import PermissionDenied
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec

MAX_OUTPUT_CHARS = 1_000_000


class ShellParams(Params):
    command: str = Field(min_length=1)


class ShellActionResult(ActionResult):
    exit_code: int
    stdout: str
    stderr: str
    truncated: bool


def _allowed(ctx: ActionContext, p: ShellParams) -> None:
    """Before any hold: a SHELL the server never runs is not put to the owner."""
    if not ctx.settings.allow_shell:
        raise PermissionDenied("SHELL is disabled; start the server with --allow-shell to enable it")


async def shell(ctx: ActionContext, p: ShellParams) -> ShellActionResult:
    remaining = max(0.1, ctx.deadline - asyncio.get_running_loop().time())
    result = await ctx.device.shell(p.command, timeout_s=remaining)
    truncated = len(result.stdout) > MAX_OUTPUT_CHARS or len(result.stderr) > MAX_OUTPUT_CHARS
    return ShellActionResult(
        exit_code=result.exit_code,
        stdout=result.stdout[:MAX_OUTPUT_CHARS],
        stderr=result.stderr[:MAX_OUTPUT_CHARS],
        truncated=truncated,
        via=ctx.device.via,
    )


ACTIONS = (
    ActionSpec(
        "SHELL",
        ShellParams,
        shell,
        ShellActionResult,
        "Run a shell command (needs --allow-shell)",
        requires=frozenset({SHELL}),
        check=_allowed,
    ),
)
