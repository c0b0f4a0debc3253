"""What one app connection may send and hold, advertised (the first three) in `hello.ack`'s
`server_caps`, and how long the outbox keeps frames."""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..config import Settings, positive_group

# A frame up to this many times max_frame_bytes is refused with an error and the connection stays
# open; past it the WebSocket layer closes the connection (1009) without reading it whole.
OVERSIZE_TOLERANCE = 4


@dataclass(frozen=True)
class GatewayLimits:
    max_frame_bytes: int
    max_media_bytes: int
    max_frames_per_second: int
    send_queue_bytes: int
    outbox_retention_s: float
    outbox_max_frames: int
    outbox_max_bytes: int
    auth_failures: int
    auth_window_s: float
    hello_timeout_s: float

    @classmethod
    def from_settings(cls, settings: Settings) -> GatewayLimits:
        return cls(**positive_group(settings, "gateway_", [f.name for f in fields(cls)]))

    def caps(self) -> dict[str, int]:
        """The extra `server_caps` fields."""
        return {
            "max_frame_bytes": self.max_frame_bytes,
            "max_media_bytes": self.max_media_bytes,
            "max_frames_per_second": self.max_frames_per_second,
        }
