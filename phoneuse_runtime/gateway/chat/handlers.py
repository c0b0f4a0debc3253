"""The chat part's table of frame handlers; `channels`, `messages` and `media` register on it."""

from __future__ import annotations

from ..dispatch import Handlers

HANDLERS = Handlers()
