"""Settings: one layered loader (flags > PHONEUSE_* > TOML > defaults) and its sections."""
