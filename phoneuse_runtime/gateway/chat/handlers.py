"""The chat part's table of frame handlers; `channels`, `messages` and `media` register on it."""

from __future__ import annotations

from phoneuse_runtime.gateway.dispatch import Handlers

HANDLERS = Handlers()
