"""Fixtures for the fake device's own tests (see adb_server.py for what they provide)."""

from tests.fakes.adb_server import adb_server, fake_device_factory

__all__ = ["adb_server", "fake_device_factory"]
