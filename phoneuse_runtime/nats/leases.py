"""Leases: one principal at a time drives a phone (LAMDA's `Lock` is the peer).

`LEASE_ACQUIRE ttl_s=N` takes the phone's lease for N seconds (1..3600), `LEASE_RENEW ttl_s=N`
extends it to N seconds from now, `LEASE_RELEASE` gives it back. While a principal holds a
live lease, every other principal's Execute on the phone answers `CONFLICT`, naming the holder
and the expiry; the holder's calls run, Query and Subscribe stay open to everyone, and the
phone's owner (the Iris app's slash commands) is never blocked. A lease nobody renews expires
(a crashed agent's): it then blocks nothing, and anyone may acquire it.

Where the lease lives: with `nats_url`, in the NATS KV bucket `phoneuse_leases`, key = the
device name, value = `{"holder", "expires_at_ms", "acquired_at_ms"}` (nats-server 2.9.10's KV has
a TTL per bucket only, so the expiry is in the value). Acquire = create-if-absent, or, when
the stored lease has expired (or is the caller's own), an update with the revision read
(compare-and-set); renew = update with the revision, by the holder only; release = delete
with the revision, by the holder only. A lost race answers CONFLICT, never two holders.
Without `nats_url` the same rules run on a store in this runtime's memory: leases then last
until the runtime stops.

The Execute check reads this runtime's copy of its phone's lease (refreshed at start and by
every lease action), not the KV: the lease actions for a phone go through its runtime, so the
copy is the KV's, and Execute keeps working while NATS is unreachable.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import Field

from phoneuse_runtime.kernel.errors import Conflict, DeviceUnavailable
from phoneuse_runtime.kernel.events import EventPayload
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec, Contribution

if TYPE_CHECKING:
    from phoneuse_runtime.kernel.policies import PolicyCall
    from phoneuse_runtime.kernel.runtime import Runtime
    from phoneuse_runtime.nats.link import NatsLink

log = logging.getLogger(__name__)

BUCKET = "phoneuse_leases"
LEASE_VALUE_BYTES = 1024  # a lease's value (holder, two times) is under 200 bytes
BUCKET_BYTES = 16 << 20  # one key a phone, history 1: room for many thousand phones
MIN_TTL_S = 1
MAX_TTL_S = 3600
DEFAULT_TTL_S = 60
LEASE_ACTIONS = frozenset({"LEASE_ACQUIRE", "LEASE_RENEW", "LEASE_RELEASE"})
KV_TIMEOUT_S = 5.0


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def iso(ms: int) -> str:
    return (
        datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


@dataclass(frozen=True, slots=True)
class Lease:
    holder: str
    expires_at_ms: int
    acquired_at_ms: int

    def live(self, at_ms: int | None = None) -> bool:
        return (now_ms() if at_ms is None else at_ms) < self.expires_at_ms

    def encode(self) -> bytes:
        return json.dumps(
            {
                "holder": self.holder,
                "expires_at_ms": self.expires_at_ms,
                "acquired_at_ms": self.acquired_at_ms,
            }
        ).encode()

    @classmethod
    def decode(cls, data: bytes) -> Lease | None:
        """The stored lease; None for a value that is not one (treated as no lease)."""
        try:
            raw = json.loads(data)
            return cls(str(raw["holder"]), int(raw["expires_at_ms"]), int(raw.get("acquired_at_ms", 0)))
        except (ValueError, KeyError, TypeError):
            return None


class Stale(Exception):
    """The compare-and-set lost: the key changed since it was read."""


class LeaseStore(Protocol):
    where: str

    async def read(self, key: str) -> tuple[Lease | None, int]:
        """The lease and its revision; (None, 0) when there is none."""
        ...

    async def create(self, key: str, lease: Lease) -> int: ...

    async def update(self, key: str, lease: Lease, revision: int) -> int: ...

    async def delete(self, key: str, revision: int) -> None: ...


class MemoryLeaseStore:
    """The KV's semantics in this process's memory (no nats_url)."""

    where = "memory"

    def __init__(self) -> None:
        self._data: dict[str, tuple[Lease, int]] = {}
        self._revision = 0

    async def read(self, key: str) -> tuple[Lease | None, int]:
        lease, revision = self._data.get(key, (None, 0))
        return lease, revision

    def _put(self, key: str, lease: Lease) -> int:
        self._revision += 1
        self._data[key] = (lease, self._revision)
        return self._revision

    async def create(self, key: str, lease: Lease) -> int:
        if key in self._data:
            raise Stale(key)
        return self._put(key, lease)

    async def update(self, key: str, lease: Lease, revision: int) -> int:
        if self._data.get(key, (None, 0))[1] != revision:
            raise Stale(key)
        return self._put(key, lease)

    async def delete(self, key: str, revision: int) -> None:
        if self._data.get(key, (None, 0))[1] != revision:
            raise Stale(key)
        del self._data[key]


async def ensure_bucket(js: Any) -> Any:
    """The leases' KV bucket (file storage, history 1, values of at most LEASE_VALUE_BYTES,
    the bucket at most BUCKET_BYTES), created unless it exists; nats-py's KeyValue."""
    from nats.js.api import StorageType
    from nats.js.errors import BucketNotFoundError

    try:
        return await js.key_value(BUCKET)
    except BucketNotFoundError:
        pass
    kv = await js.create_key_value(
        bucket=BUCKET,
        history=1,
        storage=StorageType.FILE,
        max_value_size=LEASE_VALUE_BYTES,
        max_bytes=BUCKET_BYTES,
        direct=True,  # a get asks for its own key's subject (a runtime's permission names it)
    )
    log.info("created the NATS KV bucket %s", BUCKET)
    return kv


class KvLeaseStore:
    """The NATS KV bucket `phoneuse_leases` (created, file storage, history 1, if absent)."""

    where = "nats-kv"

    def __init__(self, link: NatsLink) -> None:
        self.link = link
        self._kv: Any = None

    async def _bucket(self) -> Any:
        if not await self.link.wait_connected(2.0):
            self._kv = None
            raise DeviceUnavailable(
                f"NATS at {self.link.url} is not reachable, and this phone's lease is kept there; try again"
            )
        if self._kv is None:
            js = self.link.js
            assert js is not None
            self._kv = await ensure_bucket(js)
        return self._kv

    async def read(self, key: str) -> tuple[Lease | None, int]:
        from nats.js.errors import KeyDeletedError, KeyNotFoundError

        kv = await self._bucket()
        try:
            entry = await asyncio.wait_for(kv.get(key), KV_TIMEOUT_S)
        except (KeyNotFoundError, KeyDeletedError):
            return None, 0
        return Lease.decode(entry.value or b""), int(entry.revision or 0)

    async def create(self, key: str, lease: Lease) -> int:
        from nats.js.errors import KeyWrongLastSequenceError

        kv = await self._bucket()
        try:
            return int(await asyncio.wait_for(kv.create(key, lease.encode()), KV_TIMEOUT_S))
        except KeyWrongLastSequenceError as exc:
            raise Stale(key) from exc

    async def update(self, key: str, lease: Lease, revision: int) -> int:
        from nats.js.errors import KeyWrongLastSequenceError

        kv = await self._bucket()
        try:
            return int(await asyncio.wait_for(kv.update(key, lease.encode(), last=revision), KV_TIMEOUT_S))
        except KeyWrongLastSequenceError as exc:
            raise Stale(key) from exc

    async def delete(self, key: str, revision: int) -> None:
        from nats.js.errors import APIError

        kv = await self._bucket()
        try:
            await asyncio.wait_for(kv.delete(key, last=revision), KV_TIMEOUT_S)
        except APIError as exc:
            if exc.err_code in (10071, 10164):  # the wrong last sequence: someone wrote meanwhile
                raise Stale(key) from exc
            raise


# --- events ----------------------------------------------------------------------------
class LeaseAcquired(EventPayload):
    """A principal took (or renewed) the phone's lease."""

    event_type: str = "LEASE_ACQUIRED"
    device: str
    holder: str
    expires_at_ms: int
    renewed: bool


class LeaseExpired(EventPayload):
    """The holder did not renew the phone's lease in time: it blocks no one any more."""

    event_type: str = "LEASE_EXPIRED"
    device: str
    holder: str
    expires_at_ms: int


class LeaseReleased(EventPayload):
    """The holder gave the phone's lease back."""

    event_type: str = "LEASE_RELEASED"
    device: str
    holder: str


# --- the actions -----------------------------------------------------------------------
class LeaseTtlParams(Params):
    # 60 s by default, as LAMDA's Lock (acquire_lock(leaseTime=60)).
    ttl_s: int = Field(
        default=DEFAULT_TTL_S,
        ge=MIN_TTL_S,
        le=MAX_TTL_S,
        description=f"the lease's life from now, {MIN_TTL_S}..{MAX_TTL_S} seconds",
    )


class LeaseReleaseParams(Params):
    pass


class LeaseResult(ActionResult):
    device: str = Field(description="the phone's device name (the lease's key)")
    holder: str = Field(description="the principal holding the lease: the caller")
    expires_at_ms: int = Field(description="epoch ms at which the lease expires unless renewed")
    expires_at: str = Field(description="the same, ISO 8601 UTC")
    ttl_s: int


class LeaseReleaseResult(ActionResult):
    device: str
    released: bool = Field(description="false when the caller held no live lease (nothing to release)")


def _conflict(device: str, lease: Lease, *, doing: str) -> Conflict:
    left = max(0, (lease.expires_at_ms - now_ms() + 999) // 1000)
    return Conflict(
        f"{doing}: the lease on device {device} is held by {lease.holder!r} until "
        f"{iso(lease.expires_at_ms)} ({left} s from now)",
        details={"holder": lease.holder, "expires_at_ms": lease.expires_at_ms, "device": device},
    )


class Leases:
    """A component: the lease actions, the Execute check, and the store."""

    name = "leases"

    def __init__(self, *, device_name: str, store: LeaseStore, link: NatsLink | None = None) -> None:
        self.device_name = device_name
        self.store = store
        self.link = link
        self.current: Lease | None = None  # this runtime's copy of its phone's lease
        self._lock = asyncio.Lock()
        self._runtime: Runtime | None = None
        self._refresh: asyncio.Task[None] | None = None
        self._expiry: asyncio.TimerHandle | None = None

    def contribution(self) -> Contribution:
        return Contribution(
            actions=LEASE_SPECS,
            events=(LeaseAcquired, LeaseReleased, LeaseExpired),
            refusals=(LeasePolicy(self),),
        )

    async def start(self, runtime: Runtime) -> None:
        self._runtime = runtime
        if self.link is not None:
            self.link.acquire()
            # A lease taken before this runtime (re)started still holds: read it once NATS is up.
            self._refresh = asyncio.create_task(self._load(), name="leases-load")

    async def stop(self, *, grace_s: float) -> None:
        self._watch(None)
        if self._refresh is not None:
            self._refresh.cancel()
            await asyncio.gather(self._refresh, return_exceptions=True)
        if self.link is not None:
            await self.link.release()

    async def _load(self) -> None:
        while True:
            if self.link is not None and not await self.link.wait_connected(2.0):
                continue
            try:
                async with self._lock:  # not across a lease action's read and write
                    lease, _ = await self.store.read(self.device_name)
                    self._set(lease)
            except DeviceUnavailable:
                continue
            except Exception as exc:
                log.warning("could not read the lease of %s from NATS KV: %s", self.device_name, exc)
                await asyncio.sleep(1.0)  # retry back-off
                continue
            if lease is not None and lease.live():
                log.info(
                    "device %s is leased to %s until %s",
                    self.device_name,
                    lease.holder,
                    iso(lease.expires_at_ms),
                )
            return

    def _set(self, lease: Lease | None) -> None:
        """This runtime's copy of the lease, and a LEASE_EXPIRED when it runs out unrenewed."""
        changed = lease != self.current
        self.current = lease
        if changed:
            self._watch(lease)

    def _watch(self, lease: Lease | None) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        if lease is not None and lease.live():
            loop = asyncio.get_running_loop()
            self._expiry = loop.call_later((lease.expires_at_ms - now_ms()) / 1000, self._expired, lease)

    def _expired(self, lease: Lease) -> None:
        self._expiry = None
        if self.current == lease:  # not renewed, released or taken by another since
            log.info("the lease of %s held by %s expired unrenewed", self.device_name, lease.holder)
            self._announce(
                LeaseExpired(device=self.device_name, holder=lease.holder, expires_at_ms=lease.expires_at_ms)
            )

    def holder_blocking(self, principal: str) -> Lease | None:
        """The live lease of another principal, if one blocks `principal`."""
        lease = self.current
        if lease is None or lease.holder == principal or not lease.live():
            return None
        return lease

    async def acquire(self, principal: str, ttl_s: int) -> Lease:
        async with self._lock:
            key = self.device_name
            lease, revision = await self.store.read(key)
            now = now_ms()
            if lease is not None and lease.live(now) and lease.holder != principal:
                self._set(lease)
                raise _conflict(key, lease, doing="LEASE_ACQUIRE")
            own = lease is not None and lease.live(now) and lease.holder == principal
            new = Lease(principal, now + ttl_s * 1000, lease.acquired_at_ms if own and lease else now)
            try:
                if revision == 0:
                    await self.store.create(key, new)
                else:
                    await self.store.update(key, new, revision)
            except Stale:
                raise await self._lost_race(key, "LEASE_ACQUIRE") from None
            self._set(new)
        self._announce(
            LeaseAcquired(device=key, holder=principal, expires_at_ms=new.expires_at_ms, renewed=own)
        )
        return new

    async def renew(self, principal: str, ttl_s: int) -> Lease:
        async with self._lock:
            key = self.device_name
            lease, revision = await self.store.read(key)
            self._set(lease)
            now = now_ms()
            if lease is None or not lease.live(now):
                what = (
                    "has no lease"
                    if lease is None
                    else f"has no live lease (it expired at {iso(lease.expires_at_ms)})"
                )
                raise Conflict(f"LEASE_RENEW: device {key} {what}; take it with LEASE_ACQUIRE")
            if lease.holder != principal:
                raise _conflict(key, lease, doing="LEASE_RENEW")
            new = Lease(principal, now + ttl_s * 1000, lease.acquired_at_ms)
            try:
                await self.store.update(key, new, revision)
            except Stale:
                raise await self._lost_race(key, "LEASE_RENEW") from None
            self._set(new)
        self._announce(
            LeaseAcquired(device=key, holder=principal, expires_at_ms=new.expires_at_ms, renewed=True)
        )
        return new

    async def release(self, principal: str) -> bool:
        async with self._lock:
            key = self.device_name
            lease, revision = await self.store.read(key)
            self._set(lease)
            if lease is None or not lease.live():
                return False  # nothing live to give back: done already
            if lease.holder != principal:
                raise _conflict(key, lease, doing="LEASE_RELEASE")
            try:
                await self.store.delete(key, revision)
            except Stale:
                raise await self._lost_race(key, "LEASE_RELEASE") from None
            self._set(None)
        self._announce(LeaseReleased(device=key, holder=principal))
        return True

    async def _lost_race(self, key: str, doing: str) -> Conflict:
        lease, _ = await self.store.read(key)
        self._set(lease)
        if lease is not None and lease.live():
            return _conflict(key, lease, doing=doing)
        return Conflict(f"{doing}: the lease on device {key} changed meanwhile; try again")

    def _announce(self, payload: EventPayload) -> None:
        if self._runtime is not None:
            self._runtime.bus.publish(payload.to_event("phoneuse.leases"))


class LeasePolicy:
    """Another principal's Execute on a leased phone answers CONFLICT, before any hold for the
    owner (and again after one, should the lease have been taken meanwhile); queries, the lease
    actions themselves (which answer for themselves) and the phone's owner pass."""

    name = "lease"

    def __init__(self, leases: Leases) -> None:
        self.leases = leases

    async def check(self, call: PolicyCall) -> None:
        if call.kind != "action" or call.name in LEASE_ACTIONS or call.caller.owner:
            return
        lease = self.leases.holder_blocking(call.caller.principal)
        if lease is not None:
            raise _conflict(self.leases.device_name, lease, doing=call.name)


def _result(leases: Leases, lease: Lease, ttl_s: int) -> LeaseResult:
    return LeaseResult(
        via=leases.store.where,
        device=leases.device_name,
        holder=lease.holder,
        expires_at_ms=lease.expires_at_ms,
        expires_at=iso(lease.expires_at_ms),
        ttl_s=ttl_s,
    )


async def lease_acquire(ctx: ActionContext, p: LeaseTtlParams) -> LeaseResult:
    leases = ctx.component(Leases)
    return _result(leases, await leases.acquire(ctx.caller.principal, p.ttl_s), p.ttl_s)


async def lease_renew(ctx: ActionContext, p: LeaseTtlParams) -> LeaseResult:
    leases = ctx.component(Leases)
    return _result(leases, await leases.renew(ctx.caller.principal, p.ttl_s), p.ttl_s)


async def lease_release(ctx: ActionContext, p: LeaseReleaseParams) -> LeaseReleaseResult:
    leases = ctx.component(Leases)
    released = await leases.release(ctx.caller.principal)
    return LeaseReleaseResult(via=leases.store.where, device=leases.device_name, released=released)


_NOTES = (
    "While a principal holds a live lease, another principal's Execute on this phone answers "
    "CONFLICT naming the holder and the expiry (result_json: holder, expires_at_ms, device); "
    "Query and Subscribe stay open. A lease not renewed expires and blocks nothing. With "
    "nats_url the lease is kept in the NATS KV bucket phoneuse_leases (key: the device name); "
    "without it, in this runtime's memory. via: nats-kv or memory."
)
LEASE_SPECS: tuple[ActionSpec[Any, Any], ...] = (
    ActionSpec(
        "LEASE_ACQUIRE",
        LeaseTtlParams,
        lease_acquire,
        LeaseResult,
        summary="Take this phone's lease for ttl_s seconds (the holder taking it again extends it); "
        "CONFLICT while another principal holds it",
        notes=_NOTES,
    ),
    ActionSpec(
        "LEASE_RENEW",
        LeaseTtlParams,
        lease_renew,
        LeaseResult,
        summary="Extend the caller's live lease to ttl_s seconds from now; CONFLICT for a non-holder "
        "or a lease that expired",
    ),
    ActionSpec(
        "LEASE_RELEASE",
        LeaseReleaseParams,
        lease_release,
        LeaseReleaseResult,
        summary="Give the caller's lease back (released=false when none was live); CONFLICT for a non-holder",
    ),
)
