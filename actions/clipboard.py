"""The clipboard."""

from __future__ import annotations

from pydantic import Field

from phoneuse_runtime.kernel.capabilities import CLIPBOARD
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec


class SetClipboardParams(Params):
    text: str = Field(max_length=100_000)


class SetClipboardResult(ActionResult):
    length: int
    verified: bool = Field(description="the clipboard read back equal")


async def set_clipboard(ctx: ActionContext, p: SetClipboardParams) -> SetClipboardResult:
    via = await ctx.device.set_clipboard(p.text)
    verified = await ctx.device.get_clipboard() == p.text
    return SetClipboardResult(length=len(p.text), verified=verified, via=via)


ACTIONS = (
    ActionSpec(
        "SET_CLIPBOARD",
        SetClipboardParams,
        set_clipboard,
        SetClipboardResult,
        "Put text on the clipboard",
        requires=frozenset({CLIPBOARD}),
    ),
)
