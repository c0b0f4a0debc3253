"""Optional dependencies (the package's extras): whether one can be imported, and how to get it."""

from __future__ import annotations

from phoneuse_runtime import __version__

# The package is not on PyPI: what works from a checkout, and from the wheel `python -m build` makes.
WHEEL = f"phoneuse_runtime-{__version__}-py3-none-any.whl"
INSTALL_HINT = (
    "--nats-url needs nats-py, the nats extra: in a checkout, pip install '.[nats]'; "
    f"from a built wheel, pip install '{WHEEL}[nats]'"
)


def nats_py_problem() -> str | None:
    """How to get nats-py when it cannot be imported, else None."""
    try:
        import nats  # noqa: F401
    except ImportError:
        return INSTALL_HINT
    return None
