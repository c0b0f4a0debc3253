"""The contract suite's fixtures: every test runs once per front end kind, each through its own
real wire. Only "grpc" today; the Iris gateway adds its adapter and its name to KINDS."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.config.settings import Settings
from phoneuse_runtime.device.base import Device
from phoneuse_runtime.kernel.components import Component
from phoneuse_runtime.kernel.policies import Policy

from .frontend import FrontEnd, FrontEndFactory, StartFrontEnd
from .grpc_frontend import GrpcFrontEnd

KINDS: dict[str, StartFrontEnd] = {"grpc": GrpcFrontEnd.start}
try:  # the MCP front end, when the SDK (the mcp extra) is installed: CI's dev extra has it
    from .mcp_frontend import McpFrontEnd

    KINDS["mcp"] = McpFrontEnd.start
except ImportError:  # pragma: no cover
    pass


@pytest.fixture(params=sorted(KINDS))
async def make_frontend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[FrontEndFactory]:
    """Starts apps through the composition root (app.build_app), with Settings overrides and,
    optionally, their own device, policies or extra components beside the front end's own;
    reached through the front end's real wire by principals "agent" and "other". Stops them all
    at the end."""
    start = KINDS[request.param]
    started: list[FrontEnd] = []

    async def factory(
        *,
        device: Device | None = None,
        policies: Sequence[Policy] = (),
        components: Sequence[Component] = (),
        **overrides: Any,
    ) -> FrontEnd:
        # The memory feeds itself from the phone only where a test asks (memory_ingest=True).
        base = Settings(
            data_dir=tmp_path / f"data{len(started)}", grpc_listen="127.0.0.1:0", memory_ingest=False
        )
        settings = replace(base, **overrides)
        fe = await start(settings, device=device, policies=policies, components=components)
        started.append(fe)
        return fe

    yield factory
    for fe in started:
        await fe.close()


@pytest.fixture
async def frontend(make_frontend: FrontEndFactory) -> FrontEnd:
    return await make_frontend()
