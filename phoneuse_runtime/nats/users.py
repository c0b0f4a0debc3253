"""NATS users, one per party, each allowed only its own subjects (issue 25: NATS is not one key).

The fleet's nats-server asks every client for a user and its password, and each user may
publish and subscribe only where its part needs:

- `fleet` (ADMIN) administers: everything (it makes the events stream and the leases' bucket);
- `reader` (READER) reads the events stream for the `events` command: it asks JetStream for the
  stream's info and makes its own ordered consumer on it; it publishes no event, writes no lease,
  purges and deletes nothing;
- `runtime-<device>` (one per phone) publishes only `phoneuse.<device>.>` and writes only its
  own lease key (`$KV.phoneuse_leases.<device>`), reading the two streams' info and its key.

Every user receives replies on its own inbox prefix (`_INBOX_<user>.`, nats-py's
`inbox_prefix`, link.inbox_prefix), so that none subscribes to another's replies. The
passwords are files (0600) in the fleet's private dir, read like a token (link.read_nats_token);
the server's config that holds them is a 0600 file in a 0700 dir, never its command line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from phoneuse_runtime.nats.leases import BUCKET
from phoneuse_runtime.nats.link import inbox_prefix
from phoneuse_runtime.nats.sink import STREAM, SUBJECT_ROOT

ADMIN = "fleet"
READER = "reader"
RUNTIME_PREFIX = "runtime-"
KV_STREAM = f"KV_{BUCKET}"
API = "$JS.API"


def runtime_user(device: str) -> str:
    return f"{RUNTIME_PREFIX}{device}"


@dataclass(frozen=True, slots=True)
class NatsUser:
    """One user of the server: its name, the file with its password, where it may publish and
    subscribe (None: everywhere)."""

    name: str
    password_file: Path
    publish: tuple[str, ...] | None
    subscribe: tuple[str, ...] | None

    def entry(self) -> dict[str, object]:
        """The user as nats-server's config lists it."""
        from phoneuse_runtime.nats.link import read_nats_token

        entry: dict[str, object] = {"user": self.name, "password": read_nats_token(str(self.password_file))}
        if self.publish is not None and self.subscribe is not None:
            entry["permissions"] = {
                "publish": {"allow": list(self.publish)},
                "subscribe": {"allow": list(self.subscribe)},
            }
        return entry


def admin(password_file: Path) -> NatsUser:
    return NatsUser(ADMIN, password_file, None, None)


def reader(password_file: Path) -> NatsUser:
    """Reads the events stream (nats/consumer.py: stream info, an ordered consumer with flow
    control), nothing else."""
    publish = (
        f"{API}.INFO",
        f"{API}.STREAM.INFO.{STREAM}",
        f"{API}.CONSUMER.CREATE.{STREAM}",
        f"{API}.CONSUMER.CREATE.{STREAM}.>",
        f"{API}.CONSUMER.INFO.{STREAM}.*",
        f"{API}.CONSUMER.DELETE.{STREAM}.*",
        f"$JS.FC.{STREAM}.>",
    )
    return NatsUser(READER, password_file, publish, (f"{inbox_prefix(READER)}.>",))


def runtime(device: str, password_file: Path) -> NatsUser:
    """One phone's runtime: its own events' subjects, its own lease key."""
    name = runtime_user(device)
    key = f"$KV.{BUCKET}.{device}"
    publish = (
        f"{API}.INFO",
        f"{SUBJECT_ROOT}.{device}.>",
        f"{API}.STREAM.INFO.{STREAM}",
        f"{API}.STREAM.INFO.{KV_STREAM}",
        f"{API}.DIRECT.GET.{KV_STREAM}.{key}",
        f"{API}.STREAM.MSG.GET.{KV_STREAM}",  # a bucket made without direct gets
        key,
    )
    return NatsUser(name, password_file, publish, (f"{inbox_prefix(name)}.>",))


def config_text(users: Iterable[NatsUser], *, jetstream: dict[str, str]) -> str:
    """nats-server's config (JSON, which its parser reads) asking for these users, with its
    `jetstream` block."""
    config = {"jetstream": jetstream, "authorization": {"users": [u.entry() for u in users]}}
    return json.dumps(config, indent=2) + "\n"


__all__ = [
    "ADMIN",
    "READER",
    "NatsUser",
    "admin",
    "config_text",
    "inbox_prefix",
    "reader",
    "runtime",
    "runtime_user",
]
