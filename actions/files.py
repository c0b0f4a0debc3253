"""PUSH_FILE and PULL_FILE: files between the phone's shared storage and the runtime's files
directory (DATA_DIR/files/), or as base64 in the call, in chunks for large files.

Paths follow owner/paths.py's rules, checked as given before anything happens (and before any
hold) and again once the phone has followed the path's symlinks. A file moved whole between the
phone and the files directory is streamed (never held in memory) and verified by its SHA-256 on
both sides; one moved through the call goes in chunks (`offset`, `max_bytes`) that each fit a
message, with the whole file's `size` and `sha256` to check it by. The files directory holds at
most `files_max_bytes`, and one push carries at most `files_max_push_bytes`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import os
import uuid
from pathlib import Path

from pydantic import Field, model_validator

from phoneuse_runtime.device.base import FileTooLarge, PhoneFile
from phoneuse_runtime.kernel.capabilities import FILES
from phoneuse_runtime.kernel.errors import InvalidParams, PermissionDenied
from phoneuse_runtime.kernel.limits import MAX_BULK_CHARS, MIB, clip
from phoneuse_runtime.kernel.params import Params
from phoneuse_runtime.kernel.registry import ActionContext, ActionResult, ActionSpec
from phoneuse_runtime.owner.paths import (
    MAX_NAME_BYTES,
    MAX_PATH_BYTES,
    files_dir,
    phone_path,
    resolved_phone_path,
    runtime_file,
    runtime_name,
)
from phoneuse_runtime.util.files import PRIVATE_FILE

# One chunk in a call: a push's base64 is at most MAX_BULK_CHARS (768 KiB of bytes, inside the
# gRPC server's 2 MiB receive limit), a pull's chunk at most 2 MiB (its base64, 2.7 MiB, inside
# the 3.5 MiB a result may hold: kernel/limits.py).
MAX_PULL_CHUNK_BYTES = 2 * MIB
DEFAULT_PULL_CHUNK_BYTES = MIB
HASH_BLOCK = MIB
PARTIAL = ".partial-"  # a pull being written, beside its target; runtime_name refuses the dot
SHA256 = r"^[0-9a-fA-F]{64}$"

PATH_DOC = "the file on the phone, in shared storage: /sdcard/... or /storage/emulated/0/..."
NAME_DOC = "the runtime's files directory (DATA_DIR/files/): a plain file name, no folders"


class PushFileParams(Params):
    path: str = Field(description=PATH_DOC, max_length=MAX_PATH_BYTES)
    name: str | None = Field(
        None, description=f"push this file of {NAME_DOC}; it goes whole", max_length=MAX_NAME_BYTES
    )
    data_base64: str | None = Field(
        None,
        description="or the bytes themselves (one chunk of a file pushed in chunks), base64",
        max_length=MAX_BULK_CHARS,
    )
    offset: int = Field(
        0,
        ge=0,
        description="where data_base64 goes: 0 writes the file anew; a later chunk's offset is the "
        "file's size on the phone so far (next_offset), chunks going in order",
    )
    size: int | None = Field(
        None,
        ge=0,
        description="the whole file's size, for a push in chunks: sha256 is read once it is reached",
    )
    sha256: str | None = Field(
        None,
        pattern=SHA256,
        description="the whole file's SHA-256: verified says whether the phone's copy has it",
    )

    @model_validator(mode="after")
    def _one(self) -> PushFileParams:
        if (self.name is None) == (self.data_base64 is None):
            raise ValueError("give either name (a file of DATA_DIR/files) or data_base64")
        if self.name is not None and (self.offset or self.size is not None):
            raise ValueError("offset and size are for data_base64 in chunks; a named file goes whole")
        return self


class PushFileResult(ActionResult):
    path: str = Field(description="the file on the phone, its symlinks followed")
    size: int = Field(description="the file's size on the phone, read back after the write")
    bytes_written: int
    next_offset: int = Field(description="the next chunk's offset: the file's size")
    sha256: str | None = Field(description="the phone's copy's SHA-256, once the file is whole (null before)")
    verified: bool = Field(description="the size read back, and the SHA-256 where one is known, match")


class PullFileParams(Params):
    path: str = Field(description=PATH_DOC, max_length=MAX_PATH_BYTES)
    name: str | None = Field(
        None,
        description=f"save the whole file as this file of {NAME_DOC} (replacing one of that name); "
        "without it the call answers one chunk as base64",
        max_length=MAX_NAME_BYTES,
    )
    offset: int = Field(0, ge=0, description="the chunk's first byte (without name)")
    max_bytes: int = Field(
        DEFAULT_PULL_CHUNK_BYTES,
        ge=1,
        le=MAX_PULL_CHUNK_BYTES,
        description="the chunk's size at most (without name)",
    )

    @model_validator(mode="after")
    def _whole(self) -> PullFileParams:
        if self.name is not None and (self.offset or "max_bytes" in self.model_fields_set):
            raise ValueError("offset and max_bytes are for chunks in the call; a named file is saved whole")
        return self


class PullFileResult(ActionResult):
    path: str = Field(description="the file on the phone, its symlinks followed")
    size: int = Field(description="the whole file's size")
    sha256: str | None = Field(
        description="the whole file's SHA-256, read on the phone: with name, and on a chunk at offset 0 "
        "or at the file's end (null between)"
    )
    name: str | None = Field(description="the file of DATA_DIR/files it was saved as (with name)")
    offset: int
    bytes: int = Field(description="the bytes this call carried or saved")
    next_offset: int
    eof: bool = Field(description="this chunk reaches the file's end")
    data_base64: str | None = Field(description="the chunk (without name)")
    verified: bool = Field(description="the bytes received match the phone's size (and SHA-256 where known)")


def _check_push(ctx: ActionContext, p: PushFileParams) -> None:
    """Before any hold: the paths as given (owner/paths.py)."""
    phone_path(p.path)
    if p.name is not None:
        runtime_name(p.name)


def _check_pull(ctx: ActionContext, p: PullFileParams) -> None:
    phone_path(p.path)
    if p.name is not None:
        runtime_name(p.name)


async def _resolved(ctx: ActionContext, path: str) -> PhoneFile:
    """The file at `path`, its symlinks followed on the phone and the rules applied again."""
    resolved = resolved_phone_path(await ctx.device.resolve_path(phone_path(path)), path)
    return await ctx.device.file_info(resolved)


def _sha256_of(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as f:
        while block := f.read(HASH_BLOCK):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def files_used(directory: Path, *, but: Path | None = None) -> int:
    """The bytes the files directory holds (its partial files too), but the file `but`."""
    used = 0
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_file(follow_symlinks=False) and (but is None or entry.path != str(but)):
                used += entry.stat(follow_symlinks=False).st_size
    return used


async def push_file(ctx: ActionContext, p: PushFileParams) -> PushFileResult:
    target = await _resolved(ctx, p.path)
    if target.kind not in ("file", "missing"):
        raise InvalidParams(f"{clip(p.path)} on the phone is a folder (or no file); name a file")
    limit = ctx.settings.files_max_push_bytes
    expected: str | None = p.sha256.lower() if p.sha256 else None
    if p.name is not None:
        local = runtime_file(files_dir(ctx.settings.data_dir), p.name)
        if not local.is_file():
            raise InvalidParams(f"DATA_DIR/files/ has no file {clip(p.name)}")
        written, local_sha = await asyncio.to_thread(_sha256_of, local)
        if written > limit:
            raise PermissionDenied(
                f"{clip(p.name)} has {written:,} bytes; a push carries at most {limit:,} "
                "(files_max_push_bytes)"
            )
        if expected is not None and expected != local_sha:
            raise InvalidParams(f"{clip(p.name)}'s SHA-256 is {local_sha}, not the sha256 given")
        expected = local_sha
        await ctx.device.write_file(target.path, local)
        total = written
    else:
        try:
            data = base64.b64decode(p.data_base64 or "", validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidParams(f"data_base64 is not base64: {exc}") from None
        written, total = len(data), p.offset + len(data)
        if total > limit or (p.size is not None and p.size > limit):
            raise PermissionDenied(
                f"this push reaches {max(total, p.size or 0):,} bytes; a push carries at most {limit:,} "
                "(files_max_push_bytes)"
            )
        if p.size is not None and total > p.size:
            raise InvalidParams(f"this chunk ends at byte {total:,}, past the size given ({p.size:,})")
        if p.offset:
            have = target.size if target.kind == "file" else 0
            if have != p.offset:
                raise InvalidParams(
                    f"the file on the phone has {have:,} bytes: the next chunk's offset is {have}, "
                    f"not {p.offset}"
                )
        await ctx.device.write_file(target.path, data, append=p.offset > 0)
    after = await ctx.device.file_info(target.path)
    whole = p.size is None or after.size == p.size
    sha = await ctx.device.file_sha256(target.path) if whole and after.kind == "file" else None
    verified = after.kind == "file" and after.size == total and (expected is None or sha == expected)
    return PushFileResult(
        path=target.path,
        size=after.size,
        bytes_written=written,
        next_offset=after.size,
        sha256=sha,
        verified=verified,
        via=ctx.device.files_via or ctx.device.via,
    )


async def pull_file(ctx: ActionContext, p: PullFileParams) -> PullFileResult:
    source = await _resolved(ctx, p.path)
    if source.kind != "file":
        what = "no such file" if source.kind == "missing" else "not a file"
        raise InvalidParams(f"{clip(p.path)} on the phone: {what}")
    if p.name is not None:
        return await _pull_to_files(ctx, source, p.name)
    if p.offset > source.size:
        raise InvalidParams(f"offset {p.offset:,} is past the file's end ({source.size:,} bytes)")
    data = await ctx.device.read_file(source.path, p.offset, p.max_bytes)
    end = p.offset + len(data)
    eof = end >= source.size
    sha = await ctx.device.file_sha256(source.path) if p.offset == 0 or eof else None
    verified = len(data) == min(p.max_bytes, source.size - p.offset)
    if verified and p.offset == 0 and eof:
        verified = hashlib.sha256(data).hexdigest() == sha
    return PullFileResult(
        path=source.path,
        size=source.size,
        sha256=sha,
        name=None,
        offset=p.offset,
        bytes=len(data),
        next_offset=end,
        eof=eof,
        data_base64=base64.b64encode(data).decode("ascii"),
        verified=verified,
        via=ctx.device.files_via or ctx.device.via,
    )


async def _pull_to_files(ctx: ActionContext, source: PhoneFile, name: str) -> PullFileResult:
    directory = files_dir(ctx.settings.data_dir)
    target = runtime_file(directory, name)
    quota = ctx.settings.files_max_bytes
    room = quota - await asyncio.to_thread(files_used, directory, but=target)
    if source.size > room:
        raise PermissionDenied(
            f"{source.path} has {source.size:,} bytes; DATA_DIR/files/ has room for {max(room, 0):,} "
            f"more of its {quota:,} (files_max_bytes)"
        )
    partial = directory / f"{PARTIAL}{uuid.uuid4().hex}"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                size = await ctx.device.pull_file(source.path, out, limit=room)
            except FileTooLarge:
                raise PermissionDenied(
                    f"{source.path} grew past the room DATA_DIR/files/ has ({room:,} bytes of "
                    f"{quota:,}: files_max_bytes)"
                ) from None
        got, local_sha = await asyncio.to_thread(_sha256_of, partial)
        phone_sha = await ctx.device.file_sha256(source.path)
        await asyncio.to_thread(os.replace, partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
    return PullFileResult(
        path=source.path,
        size=size,
        sha256=phone_sha,
        name=name,
        offset=0,
        bytes=got,
        next_offset=got,
        eof=True,
        data_base64=None,
        verified=got == size and local_sha == phone_sha,
        via=ctx.device.files_via or ctx.device.via,
    )


NOTES = (
    "Paths are confined (a refusal is PERMISSION_DENIED naming its `path rule`): on the phone only "
    "shared storage (`/sdcard/...`, `/storage/emulated/0/...`), never `..`, never an app's own "
    "`Android/data/` or `Android/obb/` (in any case), and never where the path's symlinks lead out of "
    "it (resolved on the phone); on the runtime's side only a plain name in `DATA_DIR/files/` "
    "(no folder, no leading dot, no symlink out). A path with a NUL byte, a control character or "
    "over 4,095 bytes is INVALID_PARAMS. Large files move in chunks: PULL_FILE answers `max_bytes` "
    "(at most 2 MiB) from `offset` with `next_offset`, `eof`, the whole file's `size` and its "
    "`sha256` on the first and the last chunk; PUSH_FILE takes `data_base64` (at most 1 MiB of "
    "base64) at `offset` 0 (a new file) or at the file's size so far, and reads `sha256` back once "
    "`size` is reached. With `name` the file moves whole, streamed, and is verified by its SHA-256 "
    "on both sides. Bounds: `files_max_push_bytes` per push, `files_max_bytes` for DATA_DIR/files/ "
    "in all (PERMISSION_DENIED past either)."
)

ACTIONS = (
    ActionSpec(
        "PUSH_FILE",
        PushFileParams,
        push_file,
        PushFileResult,
        "Put a file in the phone's shared storage, from DATA_DIR/files or base64 chunks",
        requires=frozenset({FILES}),
        notes=NOTES,
        check=_check_push,
    ),
    ActionSpec(
        "PULL_FILE",
        PullFileParams,
        pull_file,
        PullFileResult,
        "Read a file of the phone's shared storage into DATA_DIR/files, or as base64 chunks",
        requires=frozenset({FILES}),
        notes=NOTES,
        check=_check_pull,
    ),
)
