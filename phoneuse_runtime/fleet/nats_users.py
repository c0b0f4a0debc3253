"""The fleet's NATS users (nats/users.py): their password files and the server's list of them.

    FLEET_DIR/nats-users/           0700
    FLEET_DIR/nats-users/fleet      the fleet's own (it makes the stream and the leases' bucket)
    FLEET_DIR/nats-users/reader     for the `events` command: hand this file to event readers
    FLEET_DIR/nats-users/runtime-NAME   each local member's, written before it starts

Each file is one line, a new random password (0600), kept across restarts of the fleet. A member
that joins gets its user (the server re-reads its config); one that leaves loses it.
"""

from __future__ import annotations

from pathlib import Path

from phoneuse_runtime.nats.users import ADMIN, READER, NatsUser, admin, reader, runtime, runtime_user
from phoneuse_runtime.util.files import atomic_write_text, private_dir

USERS_DIR = "nats-users"


class FleetNatsUsers:
    """The users of the fleet's nats-server: the fleet, the reader, and one per local member."""

    def __init__(self, fleet_dir: Path) -> None:
        self.dir = fleet_dir / USERS_DIR
        self._devices: set[str] = set()

    def password_file(self, user: str) -> Path:
        """The user's password file, made (a new random password) if absent."""
        from phoneuse_runtime.auth.tokens import generate_token

        path = self.dir / user
        if not path.is_file():
            private_dir(self.dir)
            atomic_write_text(path, generate_token() + "\n")  # 0600
        return path

    @property
    def admin(self) -> NatsUser:
        return admin(self.password_file(ADMIN))

    @property
    def reader(self) -> NatsUser:
        return reader(self.password_file(READER))

    def runtime(self, device: str) -> NatsUser:
        return runtime(device, self.password_file(runtime_user(device)))

    def add(self, device: str) -> NatsUser:
        self._devices.add(device)
        return self.runtime(device)

    def remove(self, device: str) -> None:
        self._devices.discard(device)

    def users(self) -> list[NatsUser]:
        return [self.admin, self.reader, *(self.runtime(d) for d in sorted(self._devices))]
