"""``session-sidecar export`` and ``session-sidecar view``: session/export on a fresh sidecar, for people.

session-sidecar export ID --format markdown|html|json [-o FILE] [--leaf ENTRY] [--all] [--no-redact]
session-sidecar view ID [-o FILE] [--no-redact]      # writes the page, prints its path
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from session_sidecar_client.protocol import ExportResult

FORMATS = ("markdown", "html", "json")


def add_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: Callable[[argparse.ArgumentParser, str], None],
) -> None:
    export = commands.add_parser("export", help="a session as Markdown, HTML or JSON, secrets redacted")
    common(export, "--store-format")
    export.add_argument("session_id")
    export.add_argument("--format", "-f", dest="export_format", choices=FORMATS, default="markdown")
    export.add_argument("-o", "--output", type=Path, help="write to this file (default: standard output)")
    export.add_argument("--leaf", help="export the path to this entry (default: the session's leaf)")
    export.add_argument("--all", action="store_true", help="every branch of the tree, not one path")
    export.add_argument("--no-redact", action="store_true", help="keep secrets as they are")
    view = commands.add_parser(
        "view", help="write the session's page (one self-contained HTML file) and print its path"
    )
    common(view, "--store-format")
    view.add_argument("session_id")
    view.add_argument("-o", "--output", type=Path, help="where to write the page (default: the user cache folder)")
    view.add_argument("--leaf", help="open the page at this entry's branch")
    view.add_argument("--no-redact", action="store_true", help="keep secrets as they are")


def view_path(session_id: str) -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("session-sidecar")) / "view" / f"{session_id}.html"


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    fmt = "html" if args.command == "view" else args.export_format
    target = args.output
    if args.command == "view" and target is None:
        target = view_path(args.session_id)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    params: dict[str, object] = {"sessionId": args.session_id, "format": fmt, "redact": not args.no_redact}
    if args.leaf:
        params["leafId"] = args.leaf
    if getattr(args, "all", False):
        params["all"] = True
    if target is not None:
        params["path"] = str(target.expanduser().resolve())
    from session_sidecar_client import ConnectionClosed, RpcError

    try:
        result = asyncio.run(_one_call(args, params))
    except RpcError as error:
        print(f"session-sidecar {args.command}: {error.message}", file=err)
        return 1
    except ConnectionClosed as error:
        print(f"session-sidecar {args.command}: {error}", file=err)
        return 1
    text = result.get("text")
    if text is not None:
        out.write(text)
    redaction = result["redaction"]
    if redaction.get("applied"):
        found = ", ".join(f"{k['kind']} x{k['count']}" for k in redaction.get("kinds", [])) or "none found"
        note = f"secrets redacted: {found}"
    else:
        note = "secrets NOT redacted (--no-redact)"
    where = f" to {result['path']}" if "path" in result else ""
    print(f"exported {result['entries']} entries as {fmt}{where}; {note}", file=err)
    if args.command == "view":
        page = result.get("path")
        print(page, file=out)
        if os.environ.get("BROWSER") and page:  # a browser the user configured; none is guessed
            webbrowser.open(Path(page).as_uri())
    return 0


async def _one_call(args: argparse.Namespace, params: dict[str, object]) -> ExportResult:
    from session_sidecar_client import SidecarClient

    from ..invocation import own_command

    server_args = ["--log-level", args.log_level]
    if args.root:
        server_args += ["--root", str(args.root)]
    if args.config:
        server_args += ["--config", str(args.config)]
    async with SidecarClient.spawn(
        server_args, command=own_command(), client_name=f"session-sidecar {args.command}"
    ) as client:
        result: ExportResult = await client.request("session/export", params)
        return result
