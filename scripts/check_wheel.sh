#!/usr/bin/env bash
# The wheel as a stranger installs it (issue 28, "A wheel"): `python -m build` makes a wheel and an
# sdist (in a temporary copy's dist/, the wheel built from the sdist), the wheel with the mcp and nats
# extras goes into a fresh venv outside the checkout, and from outside the checkout that install
# answers `--version`, serves the simulated phone and runs a call on it (`exec`), and its `mcp`
# lists its tools to the MCP SDK's client. Non-interactive; everything it makes is removed.
#
#     bash scripts/check_wheel.sh        (needs the `build` package: it is in the dev extra)
set -euo pipefail
checkout="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/phoneuse-wheel.XXXXXX")"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" && wait "$server_pid" || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

# A copy of what git tracks: the build's egg-info and build/ never land in the checkout.
mkdir "$work/src"
(cd "$checkout" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work/src")
# docs/install.md's build line, verbatim, in the copy: it makes dist/ there.
(cd "$work/src" && python3 -m build) >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; exit 1; }
wheel="$(ls "$work"/src/dist/phoneuse_runtime-*-py3-none-any.whl)"
ls "$work"/src/dist/phoneuse_runtime-*.tar.gz >/dev/null
echo "built $(basename "$wheel") and $(basename "$work"/src/dist/phoneuse_runtime-*.tar.gz)" >&2

python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "$wheel[mcp,nats]"
cd "$work"  # outside the checkout: only the wheel's install can be imported
exe="$work/venv/bin/phoneuse-runtime"
"$exe" --version

export PHONEUSE_DATA_DIR="$work/data"
"$exe" serve --device sim --grpc-listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 --log-level WARNING &
server_pid=$!
for _ in $(seq 600); do  # the record is written once it serves (at most 60 s)
    [ -f "$work/data/server.json" ] && break
    kill -0 "$server_pid" 2>/dev/null || { echo "serve from the wheel exited" >&2; exit 1; }
    sleep 0.1
done
[ -f "$work/data/server.json" ] || { echo "serve from the wheel did not start in 60 s" >&2; exit 1; }
"$exe" exec SET_CLIPBOARD text=from-the-wheel

"$work/venv/bin/python" - "$exe" <<'PY'
import asyncio, os, sys
from mcp import Client, StdioServerParameters

async def main() -> None:
    params = StdioServerParameters(command=sys.argv[1], args=["mcp"], env=dict(os.environ))
    async with Client(params) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
    assert {"tap", "dump_ui", "set_clipboard"} <= tools, sorted(tools)
    print(f"mcp lists {len(tools)} tools")

asyncio.run(main())
PY
echo "the wheel installs and serves" >&2
