"""`phoneuse-runtime mcp config claude-desktop|claude-code|cursor`: the snippet that wires an MCP
client to this install, printed on stdout (what to do with it on stderr).

A client starts its servers outside the venv the README asks for, so a bare `phoneuse-runtime`
is not found: the stdio form names the executable in use by its absolute path (the console
script that runs, else this Python with `-m phoneuse_runtime`) and the data dir by its absolute
path. The HTTP form (`--http`, or by itself when the data dir's running server serves MCP over
HTTP, for the clients whose config takes a URL) names the URL as bound and the header with the
token: only where the token is, unless `--show-token` puts the token itself in the snippet.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phoneuse_runtime.auth.tokens import read_token_file, token_path
from phoneuse_runtime.cli.options import DEVICE_HELP, data_dir_parent
from phoneuse_runtime.config.settings import ConfigError, default_data_dir, load_settings
from phoneuse_runtime.mcp import MCP_PATH
from phoneuse_runtime.util.display import printable
from phoneuse_runtime.util.endpoint import NoServer, find_mcp_url
from phoneuse_runtime.util.files import StateFileError

CLIENTS = ("claude-desktop", "claude-code", "cursor")
WHERE = {
    "claude-desktop": "Claude Desktop: Settings, Developer, Edit Config (claude_desktop_config.json); "
    "merge this into it and restart Claude Desktop",
    "claude-code": "Claude Code: run this command (add --scope user to have it in every project)",
    "cursor": "Cursor: merge this into ~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
}
SCRIPT = "phoneuse-runtime"


def add_parser(mcp_sub: Any) -> None:
    cmd = mcp_sub.add_parser(
        "config",
        parents=[data_dir_parent()],
        help="print the snippet that wires Claude Desktop, Claude Code or Cursor to this install",
    )
    cmd.add_argument("client", choices=CLIENTS, help="the MCP client to configure")
    cmd.add_argument("--name", default="phone", help="the server's name in the client (default phone)")
    cmd.add_argument("--device", help=f"the stdio form serves this device when no server runs: {DEVICE_HELP}")
    cmd.add_argument(
        "--http",
        action="store_true",
        help="the Streamable HTTP form (the default when the running server serves MCP over HTTP)",
    )
    cmd.add_argument(
        "--stdio", action="store_true", help="the stdio form even when the running server serves HTTP"
    )
    cmd.add_argument(
        "--show-token", action="store_true", help="put the token itself in the HTTP form (it is a secret)"
    )


def executable() -> list[str]:
    """The command that runs this install, by absolute path: the console script when that is what
    runs, else this Python with `-m phoneuse_runtime` (which needs no PATH either)."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == SCRIPT and script.is_file():
        return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "phoneuse_runtime"]


@dataclass(frozen=True)
class Http:
    url: str
    header: str  # the Authorization header's value, or its placeholder
    note: str


def main(args: argparse.Namespace) -> int:
    try:
        settings = load_settings({"data_dir": args.data_dir}, config_file=args.config)
    except ConfigError as exc:
        print(f"phoneuse-runtime: {printable(str(exc))}", file=sys.stderr)
        return 2
    data_dir = (settings.data_dir or default_data_dir()).absolute()
    try:
        running_url = find_mcp_url(data_dir)
    except NoServer:
        running_url = None
    wants_http = args.http or (running_url is not None and not args.stdio)
    if wants_http and args.client == "claude-desktop":
        print(
            "phoneuse-runtime: Claude Desktop's config file takes only stdio servers (remote ones are "
            "added under Settings, Connectors, without a token header): this is the stdio form, which "
            "attaches to the running server",
            file=sys.stderr,
        )
        wants_http = False
    if wants_http:
        try:
            http = _http(data_dir, running_url, settings.mcp.listen, show_token=args.show_token)
        except ConfigError as exc:
            print(f"phoneuse-runtime: {printable(str(exc))}", file=sys.stderr)
            return 2
        print(_http_snippet(args.client, args.name, http))
        print(f"phoneuse-runtime: {WHERE[args.client]}; {http.note}", file=sys.stderr)
        return 0
    command, *prefix = executable()
    argv = [*prefix, "mcp", "--data-dir", str(data_dir)]
    if args.device:
        argv += ["--device", args.device]
    print(_stdio_snippet(args.client, args.name, command, argv))
    print(
        f"phoneuse-runtime: {WHERE[args.client]}; it attaches to the server running for {data_dir}, "
        "else serves the phone itself",
        file=sys.stderr,
    )
    return 0


def _http(data_dir: Path, running_url: str | None, listen: str, *, show_token: bool) -> Http:
    if running_url is not None:
        url = running_url
    elif listen:
        url = f"http://{listen}{MCP_PATH}"
    else:
        raise ConfigError(
            f"no server serves MCP over HTTP for {data_dir}: start `phoneuse-runtime serve "
            "--mcp-listen 127.0.0.1:8766`, or use the stdio form (without --http)"
        )
    where = token_path(data_dir)
    note = "" if running_url else f"no server serves {url} now (start `serve --mcp-listen {listen}`); "
    if not show_token:
        return Http(
            url,
            f"Bearer <the token in {where}>",
            note + f"the token is in {where}: paste it in, or run this again with --show-token",
        )
    try:
        token = read_token_file(data_dir)
    except StateFileError as exc:
        raise ConfigError(str(exc)) from None
    if not token:
        raise ConfigError(f"no token in {where} yet: run `phoneuse-runtime serve` once to create it")
    return Http(url, f"Bearer {token}", note + f"the snippet holds the token of {where}: keep it private")


def _stdio_snippet(client: str, name: str, command: str, argv: list[str]) -> str:
    if client == "claude-code":
        return shlex.join(["claude", "mcp", "add", name, "--", command, *argv])
    return json.dumps({"mcpServers": {name: {"command": command, "args": argv}}}, indent=2)


def _http_snippet(client: str, name: str, http: Http) -> str:
    if client == "claude-code":
        header = f"Authorization: {http.header}"
        return shlex.join(["claude", "mcp", "add", "--transport", "http", name, http.url, "--header", header])
    return json.dumps(
        {"mcpServers": {name: {"url": http.url, "headers": {"Authorization": http.header}}}}, indent=2
    )
