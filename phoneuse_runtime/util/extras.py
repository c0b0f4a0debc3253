"""Optional dependencies (the package's extras): whether one can be imported, and how to get it."""

from __future__ import annotations

INSTALL_HINT = "--nats-url needs nats-py: pip install 'phoneuse-runtime[nats]' (or pip install nats-py)"


def nats_py_problem() -> str | None:
    """How to get nats-py when it cannot be imported, else None."""
    try:
        import nats  # noqa: F401
    except ImportError:
        return INSTALL_HINT
    return None
