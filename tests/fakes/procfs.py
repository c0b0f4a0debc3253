"""The kernel's files the fake phone's `cat` reads (issue 27, DEVICE_STATUS): /proc/meminfo and
/proc/uptime as Linux prints them, from `PhoneState.status`."""

from __future__ import annotations

from .state import PhoneState


def proc_file(state: PhoneState, path: str) -> bytes | None:
    """/proc/meminfo and /proc/uptime, as the kernel prints them; None for any other path."""
    s = state.status
    if path == "/proc/meminfo":
        free = (s.mem_available_kb or s.mem_total_kb // 2) // 3
        available = f"MemAvailable:    {s.mem_available_kb} kB\n" if s.mem_available_kb is not None else ""
        return (
            f"MemTotal:        {s.mem_total_kb} kB\n"
            f"MemFree:         {free} kB\n"
            f"{available}"
            "Buffers:            9240 kB\n"
            "Cached:          1021912 kB\n"
            "SwapCached:            0 kB\n"
        ).encode()
    if path == "/proc/uptime":
        return f"{s.uptime_s:.2f} {s.uptime_s * 3.7:.2f}\n".encode()
    return None
