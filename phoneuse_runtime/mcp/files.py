"""The runtime's files directory as MCP resources: `phoneuse://files/<name>` for each file of
DATA_DIR/files (what PULL_FILE saved with `name`), text where it is UTF-8 text, else a blob.

A name is held to the same rule as PULL_FILE's (owner/paths.runtime_file); a file over
MAX_RESOURCE_BYTES is refused with the way to read it in parts (PULL_FILE's chunks work on the
phone's copy), so no read holds more than that in memory.
"""

from __future__ import annotations

import base64
import mimetypes
import os
from pathlib import Path
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError

from phoneuse_runtime.kernel.errors import RuntimeFailure
from phoneuse_runtime.kernel.limits import MIB
from phoneuse_runtime.owner.paths import runtime_file

FILES_URI = "phoneuse://files/"
MAX_RESOURCE_BYTES = 8 * MIB
MAX_LISTED = 1000  # resources/list names at most this many files, the newest first
TEXT = frozenset({"application/json", "application/xml", "application/javascript"})


def _mime(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def listed(directory: Path | None) -> list[types.Resource]:
    """A resource for each file of the files directory (none where this face has no directory)."""
    if directory is None or not directory.is_dir():
        return []
    entries: list[tuple[float, str, int]] = []
    with os.scandir(directory) as found:
        for entry in found:
            if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                continue
            info = entry.stat(follow_symlinks=False)
            entries.append((info.st_mtime, entry.name, info.st_size))
    entries.sort(reverse=True)
    return [
        types.Resource(
            uri=FILES_URI + quote(name, safe=""),
            name=f"file {name}",
            title=name,
            description=f"{size:,} bytes in DATA_DIR/files (PULL_FILE with name saved it)",
            mime_type=_mime(name),
            size=size,
        )
        for _, name, size in entries[:MAX_LISTED]
    ]


TEMPLATE = types.ResourceTemplate(
    uri_template=FILES_URI + "{name}",
    name="file",
    description="a file of the runtime's files directory (DATA_DIR/files), by name: text or a blob",
)


def read(directory: Path | None, uri: str) -> types.ReadResourceResult:
    """The file `uri` names, whole; INVALID_PARAMS naming the rule for a name that is no file's."""
    if directory is None:
        raise MCPError(
            types.INVALID_PARAMS, "this MCP face has no files directory (it serves no runtime here)"
        )
    name = unquote(uri[len(FILES_URI) :])
    try:
        path = runtime_file(directory, name)
    except RuntimeFailure as failure:
        raise MCPError(types.INVALID_PARAMS, failure.wire()) from None
    if not path.is_file():
        raise MCPError(types.INVALID_PARAMS, f"DATA_DIR/files has no file {name[:200]!r}")
    size = path.stat().st_size
    if size > MAX_RESOURCE_BYTES:
        raise MCPError(
            types.INVALID_PARAMS,
            f"{name[:200]!r} has {size:,} bytes, more than a resource read gives ({MAX_RESOURCE_BYTES:,}): "
            "read the phone's copy in chunks with pull_file (offset, max_bytes)",
        )
    data = path.read_bytes()[:MAX_RESOURCE_BYTES]
    mime = _mime(name)
    if mime.startswith("text/") or mime in TEXT:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
            )
    blob = base64.b64encode(data).decode("ascii")
    return types.ReadResourceResult(contents=[types.BlobResourceContents(uri=uri, mime_type=mime, blob=blob)])
