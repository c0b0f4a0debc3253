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
