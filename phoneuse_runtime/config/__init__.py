"""Settings: one layered loader (flags > PHONEUSE_* > TOML > defaults) and its sections.

- `layers.py`: `load_layers`, the one loader (serve's `load_settings`, the fleet's
  `load_fleet_settings`): a frozen dataclass filled from defaults < file < environment < flags,
  coerced by field type, each value's origin recorded, every problem collected.
- `settings.py`: `Settings`, the flat loaded record (names as config.toml and PHONEUSE_* spell
  them), and `load_settings`, which checks every value and raises one `ConfigError`.
- `sections.py`: a frozen view per part (`settings.grpc`, `.gateway_section`, `.mcp`, `.memory`,
  `.nats`, `.device_section`, `.owner`), each with its own `problems()`; components take theirs.
- `addresses.py`: the address-like settings' parsers (listen, adb_server, self_adb).
"""
