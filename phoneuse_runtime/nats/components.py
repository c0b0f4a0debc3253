"""What `serve` runs for issue 20: the leases always (in NATS KV with `nats_url`, else in
memory), and, with `nats_url`, the JetStream event sink; both share one NATS connection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoneuse_runtime.nats.leases import KvLeaseStore, Leases, LeaseStore, MemoryLeaseStore

if TYPE_CHECKING:
    from pathlib import Path

    from phoneuse_runtime.config.sections import NatsSettings
    from phoneuse_runtime.kernel.components import Component


def nats_components(nats: NatsSettings, *, data_dir: Path) -> list[Component]:
    """The leases and, with a url, the sink of the `nats` section (Settings.nats), the sink
    spooling into `data_dir`."""
    device = nats.device_name
    if not nats.url:
        store: LeaseStore = MemoryLeaseStore()
        return [Leases(device_name=device, store=store)]
    from phoneuse_runtime.nats.link import NatsLink, connect_options, require_nats
    from phoneuse_runtime.nats.sink import JetStreamSink, StreamBounds
    from phoneuse_runtime.nats.spool import SPOOL_FILE

    require_nats()
    options = connect_options(nats.user, nats.token_file)
    link = NatsLink(nats.url, name=f"phoneuse-runtime {device}", options=options)
    return [
        JetStreamSink(
            link,
            device_name=device,
            buffer_events=nats.buffer_events,
            bounds=StreamBounds(max_age_s=nats.stream_max_age_s, max_bytes=nats.stream_max_bytes),
            spool=data_dir / SPOOL_FILE if nats.spool else None,
        ),
        Leases(device_name=device, store=KvLeaseStore(link), link=link),
    ]
