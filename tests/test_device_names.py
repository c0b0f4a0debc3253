"""The fleet's device names (issue 20): one rule, and collisions refused naming both serials."""

from __future__ import annotations

import pytest

from phoneuse_runtime.util.device_names import NameCollision, device_name, device_names, is_device_name


def test_a_serial_becomes_a_name_by_replacing_every_unsafe_character() -> None:
    assert device_name("192.168.1.5:5555") == "192_168_1_5_5555"
    assert device_name("emulator-5554") == "emulator-5554"
    assert device_name("adb-R58M_x._adb-tls-connect._tcp") == "adb-R58M_x__adb-tls-connect__tcp"
    assert is_device_name("192_168_1_5_5555")
    assert not is_device_name("192.168.1.5:5555")
    assert not is_device_name("")


def test_two_serials_with_one_name_are_refused_naming_both() -> None:
    assert device_names(["a.b", "emulator-5554"]) == {"a.b": "a_b", "emulator-5554": "emulator-5554"}
    with pytest.raises(NameCollision, match=r"'a\.b' and 'a:b'"):
        device_names(["a.b", "a:b"])


def test_names_are_one_name_in_any_case() -> None:
    with pytest.raises(NameCollision, match=r"'sim-2' and 'SIM-2' would both be named 'sim-2' and 'SIM-2'"):
        device_names(["sim-2", "SIM-2"])


def test_a_long_serial_gets_a_bounded_name_that_keeps_it_apart_and_a_too_long_one_is_refused() -> None:
    from phoneuse_runtime.util.device_names import NAME_MAX, SERIAL_MAX, serial_problem

    mdns = "adb-28231FDH200XYZ-AbCdEf._adb-tls-connect._tcp"
    assert device_name(mdns) == "adb-28231FDH200XYZ-AbCdEf__adb-tls-connect__tcp"  # 47: as it is
    first, second = "x" * 100 + "a", "x" * 100 + "b"
    assert len(device_name(first)) == NAME_MAX and is_device_name(device_name(first))
    assert device_name(first) != device_name(second)
    assert device_name(first).startswith("x" * 55 + "-")
    assert serial_problem("s" * SERIAL_MAX) is None
    assert serial_problem("s" * 300) == "its serial has 300 characters; at most 128 are routed"
    assert serial_problem("") is not None
