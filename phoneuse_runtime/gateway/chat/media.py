"""Media: uploads from the app (`media.upload.start`, binary frames, `media.upload.end`), pulls
(`media.pull`), and media the server produces (`store_media` + `offer_media`).

An upload is checked against `max_media_bytes` before any byte moves, written to a `.part` file,
and kept only when its length and sha256 match what the app declared: then it becomes a row
(`media_store`) and a file named by its media_id, and the app gets a `media.offer` of it. One
upload at a time per connection (binary frames name no upload); a connection that closes
mid-upload leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, get_args

from pydantic import Field

from phoneuse_runtime.gateway.chat import media_store
from phoneuse_runtime.gateway.chat.handlers import HANDLERS
from phoneuse_runtime.gateway.chat.part import chat_part
from phoneuse_runtime.gateway.chat.store import resolve
from phoneuse_runtime.gateway.dispatch import Payload
from phoneuse_runtime.gateway.errors import GatewayError
from phoneuse_runtime.gateway.protocol import Request
from phoneuse_runtime.util.files import create_private

if TYPE_CHECKING:
    from phoneuse_runtime.gateway.server import Gateway
    from phoneuse_runtime.gateway.session import Session

log = logging.getLogger(__name__)

UPLOAD_STATE = "chat.upload"  # the key of the upload in progress in `session.state`
PULL_CHUNK_BYTES = 64 * 1024
MediaKind = Literal["image", "audio", "video", "document", "voice"]


class UploadStartPayload(Payload):
    media_ref: str = Field(min_length=1, max_length=200)
    size: int = Field(ge=0)
    kind: MediaKind = "document"
    mime: str = Field(default="application/octet-stream", min_length=1, max_length=200)
    filename: str | None = Field(default=None, max_length=255)


class UploadEndPayload(Payload):
    media_ref: str
    sha256: str


class PullPayload(Payload):
    media_id: str


@dataclass
class Upload:
    """An upload in progress on one connection."""

    start: UploadStartPayload
    media_id: str
    path: Path
    file: IO[bytes]
    received: int = 0
    hasher: Any = field(default_factory=hashlib.sha256)


def _file(gateway: Gateway, media_id: str) -> Path:
    return chat_part(gateway).media_dir / media_id


async def abandon_upload(session: Session) -> None:
    """Drops the connection's upload in progress, if any, and its partial file."""
    upload: Upload | None = session.state.pop(UPLOAD_STATE, None)
    if upload is not None:
        await asyncio.to_thread(_discard, upload)


def _discard(upload: Upload) -> None:
    upload.file.close()
    upload.path.unlink(missing_ok=True)


@HANDLERS.on("media.upload.start", UploadStartPayload)
async def upload_start(session: Session, request: Request, payload: UploadStartPayload) -> None:
    gateway = session.gateway
    limit = gateway.limits.max_media_bytes
    if payload.size > limit:
        raise GatewayError("media_too_large", f"{payload.size} bytes is over max_media_bytes ({limit})")
    current: Upload | None = session.state.get(UPLOAD_STATE)
    if current is not None:
        raise GatewayError(
            "unsupported",
            f"the upload of {current.start.media_ref!r} is still open; end it before starting another",
        )
    done = await gateway.db.run(lambda c: media_store.uploaded(c, session.pairing_id, payload.media_ref))
    if done is not None:
        raise GatewayError(
            "unsupported", f"media_ref {payload.media_ref!r} is already uploaded as {done['media_id']}"
        )
    media_id = media_store.new_media_id()
    path = _file(gateway, media_id).with_suffix(".part")
    file = await asyncio.to_thread(create_private, path)
    session.state[UPLOAD_STATE] = Upload(payload, media_id, path, file)


@HANDLERS.on_binary
async def upload_bytes(session: Session, data: bytes) -> None:
    upload: Upload | None = session.state.get(UPLOAD_STATE)
    if upload is None:
        raise GatewayError("unsupported", "binary frames carry media uploads, and none is open")
    if upload.received + len(data) > upload.start.size:
        await abandon_upload(session)
        raise GatewayError(
            "unsupported",
            f"the upload of {upload.start.media_ref!r} sent more than the {upload.start.size} bytes "
            "it declared; it is dropped",
        )
    await asyncio.to_thread(upload.file.write, data)
    upload.hasher.update(data)
    upload.received += len(data)


@HANDLERS.on("media.upload.end", UploadEndPayload)
async def upload_end(session: Session, request: Request, payload: UploadEndPayload) -> None:
    upload: Upload | None = session.state.get(UPLOAD_STATE)
    if upload is None or upload.start.media_ref != payload.media_ref:
        raise GatewayError("not_found", f"no upload of {payload.media_ref!r} is open on this connection")
    await abandon_upload_if_bad(session, upload, payload.sha256)
    session.state.pop(UPLOAD_STATE, None)
    start = upload.start
    gateway = session.gateway

    def keep(path: Path) -> None:
        upload.file.close()
        upload.path.replace(path)

    await asyncio.to_thread(keep, _file(gateway, upload.media_id))
    media = await gateway.db.run(
        lambda c: media_store.insert_media(
            c,
            upload.media_id,
            kind=start.kind,
            mime=start.mime,
            size=start.size,
            sha256=upload.hasher.hexdigest(),
            filename=start.filename,
            pairing_id=session.pairing_id,
            media_ref=start.media_ref,
        )
    )
    await session.reply(request, "media.offer", {**media, "media_ref": start.media_ref})


async def abandon_upload_if_bad(session: Session, upload: Upload, sha256: str) -> None:
    """Drops the upload (and says why) when its bytes are not what was declared."""
    problem = None
    if upload.received != upload.start.size:
        problem = f"{upload.received} bytes arrived of the {upload.start.size} declared"
    elif not hmac.compare_digest(upload.hasher.hexdigest(), sha256.strip().lower()):
        problem = f"sha256 mismatch: the bytes received hash to {upload.hasher.hexdigest()}, not {sha256!r}"
    if problem is not None:
        await abandon_upload(session)
        raise GatewayError("unsupported", f"the upload of {upload.start.media_ref!r} is dropped: {problem}")


@HANDLERS.on("media.pull", PullPayload)
async def pull(session: Session, request: Request, payload: PullPayload) -> None:
    """Streams the media's bytes as binary frames, then `media.pull.end {ok}`: ok false when the
    file could not be read to the end (the app discards what it got)."""
    gateway = session.gateway
    row = await gateway.db.run(lambda c: media_store.get_media(c, payload.media_id))
    if row is None:
        raise GatewayError("not_found", f"no media {payload.media_id!r}")
    chunk = min(PULL_CHUNK_BYTES, gateway.limits.max_frame_bytes)
    ok = True
    try:
        file = await asyncio.to_thread(_file(gateway, payload.media_id).open, "rb")
        try:
            while data := await asyncio.to_thread(file.read, chunk):
                await session.send_bytes(data)
        finally:
            file.close()
    except OSError:
        log.exception("reading media %s failed", payload.media_id)
        ok = False
    await session.reply(request, "media.pull.end", {"ok": ok, "media_id": payload.media_id})


async def store_media(
    gateway: Gateway, data: bytes, *, kind: str, mime: str, filename: str | None = None
) -> dict[str, Any]:
    """Keeps media the server produced (a screenshot, ...); its `media_ref` (schema), for a
    `media.offer` (`offer_media`) or a message's `media`. ValueError for a kind the schema
    does not name."""
    if kind not in get_args(MediaKind):
        raise ValueError(f"kind must be one of {', '.join(get_args(MediaKind))}, got {kind!r}")
    media_id = media_store.new_media_id()
    path = _file(gateway, media_id)

    def write() -> None:
        partial = path.with_suffix(".part")
        with create_private(partial) as out:
            out.write(data)
        partial.replace(path)

    await asyncio.to_thread(write)
    sha256 = hashlib.sha256(data).hexdigest()
    return await gateway.db.run(
        lambda c: media_store.insert_media(
            c, media_id, kind=kind, mime=mime, size=len(data), sha256=sha256, filename=filename
        )
    )


async def offer_media(
    gateway: Gateway, media: dict[str, Any], *, chat_id: str | None = None, thread_id: str | None = None
) -> None:
    """Announces stored media to every connected device of the owner (`media.offer`, in the
    chat given, the default one when None); the app pulls the bytes with `media.pull`."""
    scope = await gateway.db.run(lambda c: resolve(c, chat_id, thread_id))
    await gateway.broadcast("media.offer", media, chat_id=scope.chat_id, thread_id=scope.thread_id)
