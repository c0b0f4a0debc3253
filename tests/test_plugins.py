"""A third-party action, installed through an entry point, served over gRPC like a built-in."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from phoneuse_runtime.kernel.registry import Registry, RegistryError

from .conftest import ServerFactory

PLUGIN = textwrap.dedent(
    """
    from phoneuse_runtime.kernel.params import Params
    from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec


    class EchoParams(Params):
        word: str
        times: int = 1


    class EchoResult(ActionResult):
        echoed: str
        foreground: str


    async def echo(ctx: ActionContext, p: EchoParams) -> EchoResult:
        front = await ctx.device.foreground()
        return EchoResult(echoed=" ".join([p.word] * p.times), foreground=front.package, via="plugin")


    ACTIONS = (ActionSpec("ACME_ECHO", EchoParams, echo, EchoResult, "Echo a word"),)
    """
)


def _install(
    site: Path, dist: str, module: str, source: str, group: str = "phoneuse_runtime.actions"
) -> None:
    """Lays out a package the way pip installs one: the module plus a dist-info with entry_points.txt."""
    (site / f"{module}.py").write_text(source)
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{dist} = {module}\n")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "site"
    path.mkdir()
    sys.path.insert(0, str(path))
    yield path
    sys.path.remove(str(path))
    for name in [m for m in sys.modules if m.startswith("acme_")]:
        del sys.modules[name]


async def test_third_party_action_over_grpc(site: Path, make_client: ServerFactory) -> None:
    _install(site, "acme-echo", "acme_echo", PLUGIN)
    client = await make_client()
    result = await client.ok("ACME_ECHO", {"word": "hi", "times": "3"})
    assert result == {
        "via": "plugin",
        "echoed": "hi hi hi",
        "foreground": "com.google.android.apps.nexuslauncher",
    }
    assert await client.fail("ACME_ECHO", {"word": "hi", "times": "many"}) == "INVALID_PARAMS"
    assert "ACME_ECHO" in client.app.runtime.registry.origins


def test_broken_plugin_is_reported_not_fatal(site: Path) -> None:
    _install(site, "acme-broken", "acme_broken", "raise RuntimeError('boom')\n")
    registry = Registry()
    registry.load_entry_points()
    assert "TAP" in registry.actions
    assert any("acme-broken" in e and "boom" in e for e in registry.load_errors)


def test_duplicate_action_type_is_refused(site: Path) -> None:
    _install(site, "acme-dupe", "acme_dupe", PLUGIN.replace('"ACME_ECHO"', '"TAP"'))
    registry = Registry()
    with pytest.raises(RegistryError, match="TAP registered twice"):
        registry.load_entry_points()
