"""CONTACTS as one view: the phone's contacts merged with the people the memory knows, found by
a number in any format, an email in any case, a name without its accents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phoneuse_runtime.config.settings import ConfigError, Settings, load_settings
from phoneuse_runtime.device.base import ShellResult
from phoneuse_runtime.device.sim.device import SimDevice
from phoneuse_runtime.memory import Memory
from phoneuse_runtime.rpc import protocol_pb2 as pb

from ..conftest import Client, ServerFactory
from .test_graph_grpc import fed, settle


async def contacts(client: Client, filters: dict[str, str]) -> list[dict[str, Any]]:
    found, total, _ = await client.query(pb.CONTACTS, filters, limit=200)
    assert total == len(found)
    return found


async def test_a_number_in_any_format_finds_the_same_person(make_client: ServerFactory) -> None:
    client = await fed(make_client)
    added = await client.ok("ADD_CONTACT", {"name": "Quinn Example", "phone": "+1 (555) 000-1111"})
    await settle(client)
    for number in ("+1 (555) 000-1111", "5550001111", "+15550001111", "555.000.1111", "000-1111"):
        [found] = await contacts(client, {"phone": number})
        assert (found["id"], found["name"]) == (added["contact_id"], "Quinn Example"), number
    assert found["phones"] == ["+1 (555) 000-1111"] and found["phones_e164"] == ["+15550001111"]
    assert found["memory_id"].startswith("mem-") and found["sources"] == ["contacts"]
    assert await contacts(client, {"phone": "+15550009999"}) == []


async def test_the_view_merges_memory_people_and_orders_by_match_then_last_contact(
    make_client: ServerFactory,
) -> None:
    client = await fed(make_client)
    # The agent knows someone the phone does not: a memory-only contact.
    said = await client.ok(
        "REMEMBER",
        {
            "kind": "person",
            "name": "Renée Dupont",
            "emails": "Renee@Example.FR",
            "phones": "+33 6 12 34 56 78",
        },
    )
    [renee] = await contacts(client, {"name": "renee"})
    assert (renee["id"], renee["memory_id"], renee["sources"]) == ("", said["id"], ["agent"])
    assert (renee["phones_e164"], renee["emails"]) == (["+33612345678"], ["Renee@Example.FR"])
    assert [c["name"] for c in await contacts(client, {"email": "renee@example.fr"})] == ["Renée Dupont"]
    assert [c["name"] for c in await contacts(client, {"q": "+33612345678"})] == ["Renée Dupont"]
    # Alice texted three hours ago, Mom a day ago: with no name to match, the latest contact first.
    everyone = await contacts(client, {})
    assert [c["name"] for c in everyone[:2]] == ["Alice Johnson", "Mom"]
    assert everyone[0]["last_contacted"] > everyone[1]["last_contacted"] > 0
    # The 8 seed contacts, Renée, and Priya, a guest of the seed standup whom only the calendar
    # knows; the short code 72345 is no contact, and Alice as a guest is Alice the contact.
    assert len(everyone) == 10
    [priya] = [c for c in everyone if c["name"] == "Priya Natarajan"]
    assert (priya["id"], priya["sources"], priya["emails"]) == (
        "",
        ["calendar"],
        ["priya.natarajan@example.com"],
    )
    # "bob": Bob Smith and Bobby Tables both start with it; a new SMS makes Bobby the latest.
    await client.ok("SIM_RECEIVE_SMS", {"from": "+1 415 555 0103", "body": "hi"})
    await settle(client)
    assert [c["name"] for c in await contacts(client, {"name": "bob"})] == ["Bobby Tables", "Bob Smith"]
    assert [c["name"] for c in await contacts(client, {"name": "bob smith"})] == ["Bob Smith"]


async def test_the_setting_reads_national_numbers_when_the_sim_does_not_say(
    make_client: ServerFactory,
) -> None:
    client = await fed(make_client, memory_default_region="GB")
    assert client.app.component("memory").region == "GB"  # type: ignore[attr-defined]
    await client.ok("ADD_CONTACT", {"name": "Lon Don", "phone": "020 7946 0000"})
    await settle(client)
    [found] = await contacts(client, {"phone": "+44 20 7946 0000"})
    assert found["phones_e164"] == ["+442079460000"]


def test_memory_settings_come_from_the_memory_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "config.toml").write_text('[memory]\ndefault_region = "FR"\nretention_days = 30\n')
    settings = load_settings({"data_dir": tmp_path})
    assert (settings.memory_default_region, settings.memory_retention_days, settings.memory_ingest) == (
        "FR",
        30,
        True,
    )
    monkeypatch.setenv("PHONEUSE_MEMORY_RETENTION_DAYS", "7")
    monkeypatch.setenv("PHONEUSE_MEMORY_INGEST", "off")
    settings = load_settings({"data_dir": tmp_path})
    assert (settings.memory_retention_days, settings.memory_ingest) == (7, False)
    (tmp_path / "config.toml").write_text("[memory]\nretension_days = 30\n")
    with pytest.raises(ConfigError, match=r"memory_retension_days \(.*config\.toml\): unknown setting"):
        load_settings({"data_dir": tmp_path})


@pytest.mark.parametrize("where", ["flag", "environment", "file"])
def test_a_bad_memory_region_is_refused_at_load_naming_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    flags: dict[str, Any] = {"data_dir": tmp_path}
    if where == "flag":
        flags["memory_default_region"] = "Narnia"
    elif where == "environment":
        monkeypatch.setenv("PHONEUSE_MEMORY_DEFAULT_REGION", "Narnia")
    else:
        (tmp_path / "config.toml").write_text('[memory]\ndefault_region = "Narnia"\n')
        where = str(tmp_path / "config.toml")
    with pytest.raises(ConfigError) as caught:
        load_settings(flags)
    assert str(caught.value) == (
        f"memory_default_region ({where}): must be a two-letter region such as US, GB or FR, got 'Narnia'"
    )
    assert not (tmp_path / "memory.db").exists()
    assert load_settings({"data_dir": tmp_path, "memory_default_region": "gb"}).memory.default_region == "gb"
    assert isinstance(Memory.from_settings(Settings().memory, data_dir=tmp_path), Memory)


@pytest.mark.parametrize("name", ["memory_retention_days", "memory_catch_up_s"])
def test_negative_memory_numbers_are_found_when_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(f"PHONEUSE_{name.upper()}", "-1")
    with pytest.raises(ConfigError, match=rf"{name} \(environment\): must be 0 or more, got -1"):
        load_settings({"data_dir": tmp_path})
    monkeypatch.setenv(f"PHONEUSE_{name.upper()}", "0")  # 0: no limit, no timer
    assert getattr(load_settings({"data_dir": tmp_path}), name) == 0


class SimInBritain(SimDevice):
    """The simulator with a British SIM (as `getprop gsm.sim.operator.iso-country` says on a
    dual-SIM phone: one country per slot)."""

    async def shell(self, command: str, *, timeout_s: float) -> ShellResult:
        if command == "getprop gsm.sim.operator.iso-country":
            return ShellResult(0, "gb,fr\n", "")
        return await super().shell(command, timeout_s=timeout_s)


async def test_the_sim_country_wins_over_the_setting(make_client: ServerFactory) -> None:
    client = await fed(make_client, device=SimInBritain(), memory_default_region="US")
    assert client.app.component("memory").region == "GB"  # type: ignore[attr-defined]
    await client.ok("ADD_CONTACT", {"name": "Lon Don", "phone": "020 7946 0000"})
    await settle(client)
    [found] = await contacts(client, {"phone": "+44 20 7946 0000"})
    assert (found["phones_e164"], found["memory_id"] is not None) == (["+442079460000"], True)
