"""What `serve` runs for issue 20: the leases always (in NATS KV with `nats_url`, else in
memory), and, with `nats_url`, the JetStream event sink; both share one NATS connection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoneuse_runtime.nats.leases import KvLeaseStore, Leases, LeaseStore, MemoryLeaseStore

if TYPE_CHECKING:
    from phoneuse_runtime.config.settings import Settings
    from phoneuse_runtime.kernel.components import Component


def nats_components(settings: Settings) -> list[Component]:
    device = settings.resolved_device_name
    if not settings.nats_url:
        store: LeaseStore = MemoryLeaseStore()
        return [Leases(device_name=device, store=store)]
    from phoneuse_runtime.nats.link import NatsLink, read_nats_token, require_nats
    from phoneuse_runtime.nats.sink import JetStreamSink
    from phoneuse_runtime.nats.spool import SPOOL_FILE

    require_nats()
    token = read_nats_token(settings.nats_token_file) if settings.nats_token_file else None
    link = NatsLink(settings.nats_url, name=f"phoneuse-runtime {device}", token=token)
    return [
        JetStreamSink(
            link,
            device_name=device,
            buffer_events=settings.nats_buffer_events,
            spool=settings.data_dir / SPOOL_FILE if settings.nats_spool else None,
        ),
        Leases(device_name=device, store=KvLeaseStore(link), link=link),
    ]
