"""The UI server's restart limiter on a clock of the test's: the window slides, the pause ends."""

from __future__ import annotations

from phoneuse_runtime.device.ui_server import (
    RESTART_PAUSE_S,
    RESTART_WINDOW_S,
    RESTARTS_IN_WINDOW,
    RestartLimiter,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_restarts_spread_out_are_never_refused() -> None:
    clock = Clock()
    limiter = RestartLimiter("server", clock=clock)
    for _ in range(RESTARTS_IN_WINDOW * 5):
        assert limiter.refusal("killed") is None
        clock.now += RESTART_WINDOW_S / (RESTARTS_IN_WINDOW - 1) + 0.1


def test_one_death_past_the_limit_pauses_the_restarts_until_the_pause_ends() -> None:
    clock = Clock()
    limiter = RestartLimiter("server", clock=clock)
    for _ in range(RESTARTS_IN_WINDOW):
        assert limiter.refusal("killed") is None
        clock.now += 1
    limiter.restart_failed("another automation client holds UiAutomation (Appium's)")
    refused = limiter.refusal("killed again")
    assert refused is not None and "died again (killed again)" in refused
    assert "Appium's" in refused and f"another {RESTART_PAUSE_S:.0f} s" in refused
    clock.now += RESTART_PAUSE_S / 2
    later = limiter.refusal("killed")
    assert later is not None and f"another {RESTART_PAUSE_S / 2:.0f} s" in later
    clock.now += RESTART_PAUSE_S / 2 + 0.1
    assert limiter.refusal("killed") is None  # the pause is over: restarted, and counted afresh


def test_the_reasons_kept_are_bounded() -> None:
    limiter = RestartLimiter("server", clock=Clock())
    limiter.restart_failed("x" * 100_000)
    for _ in range(RESTARTS_IN_WINDOW):
        limiter.refusal("y" * 100_000)
    refused = limiter.refusal("z" * 100_000)
    assert refused is not None and len(refused) < 2_000
