"""The ``session-sidecar`` command: serve (the default), call, demo.

    session-sidecar [serve] [--jsonl] [--root DIR] [--config FILE] [--log-level LEVEL]
    session-sidecar call METHOD ['{json params}' | -] [--root DIR] [--config FILE]
    session-sidecar demo [--root DIR]

Only protocol messages go to stdout while serving; logs go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import time
from pathlib import Path

from . import __version__
from .config import SettingsError, load_settings
from .store.layout import default_root

LOG_LEVEL_ENV = "SESSION_SIDECAR_LOG_LEVEL"


def own_command() -> list[str]:
    """How to start this very sidecar again: the standalone executable itself, else this interpreter's package."""
    if getattr(sys, "frozen", False):  # a PyInstaller build: sys.executable is session-sidecar
        return [sys.executable]
    return [sys.executable, "-m", "sidecar"]
SUBCOMMANDS = ("serve", "call", "demo", "reindex", "doctor")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", type=Path, help="sessions root (default: $SESSION_SIDECAR_HOME, else the user data dir)")
    parser.add_argument("--config", type=Path, help="TOML settings file (default: $SESSION_SIDECAR_CONFIG, else the user config dir)")
    parser.add_argument(
        "--log-level",
        default=os.environ.get(LOG_LEVEL_ENV, "warning"),
        choices=["debug", "info", "warning", "error"],
        help=f"stderr log level (default: ${LOG_LEVEL_ENV}, else warning)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="session-sidecar", description="Coding-agent sessions over JSON-RPC 2.0 on stdio.")
    parser.add_argument("--version", action="version", version=f"session-sidecar {__version__}")
    commands = parser.add_subparsers(dest="command")

    serve = commands.add_parser("serve", help="serve JSON-RPC on stdin/stdout (the default)")
    _common(serve)
    serve.add_argument("--jsonl", action="store_true", help="newline-delimited JSON instead of Content-Length framing")
    serve.add_argument("--workers", type=int, default=None, help="worker threads for session operations")

    call = commands.add_parser("call", help="run one method in a fresh sidecar and print its JSON result")
    _common(call)
    call.add_argument("method", help="e.g. session/list")
    call.add_argument("params", nargs="?", default="{}", help="params as a JSON object, or - to read them from stdin")

    demo = commands.add_parser("demo", help="drive a whole session through a real sidecar and show it")
    _common(demo)

    reindex = commands.add_parser("reindex", help="rebuild the listing index (<root>/.index) from the session files")
    _common(reindex)

    doctor = commands.add_parser(
        "doctor", help="find session files whose entries name parents not in the file; --fix reconnects them"
    )
    _common(doctor)
    doctor.add_argument("--fix", action="store_true", help="rewrite faulty files (the original is kept as <file>.doctor.bak)")
    doctor.add_argument("files", nargs="*", type=Path, help="session files to check (default: every file below the root)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in (*SUBCOMMANDS, "-h", "--help", "--version"):
        argv.insert(0, "serve")
    args = _parser().parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.command == "call":
        return _call(args)
    if args.command == "reindex":
        return _reindex(args)
    if args.command == "doctor":
        from .doctor import run_doctor

        root = args.root.expanduser() if args.root else default_root()
        return run_doctor(root, [p.expanduser() for p in args.files], args.fix, sys.stdout)
    if args.command == "demo":
        from .demo import run_demo

        return asyncio.run(run_demo(args.root, args.config))
    return _serve(args)


def _reindex(args: argparse.Namespace) -> int:
    from .service import SessionService

    root = args.root.expanduser() if args.root else default_root()
    started = time.perf_counter()
    count = SessionService(root).reindex()
    print(f"indexed {count} sessions below {root} in {time.perf_counter() - started:.2f} s")
    return 0


def _serve(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(args.config)
    except SettingsError as exc:
        print(f"session-sidecar: {exc}", file=sys.stderr)
        return 2
    # Not sidecar.rpc.server: boot answers initialize before pygls is imported.
    from .rpc.boot import serve

    root = args.root.expanduser() if args.root else default_root()
    return serve(root, settings, framing="jsonl" if args.jsonl else "lsp", max_workers=args.workers)


def _call(args: argparse.Namespace) -> int:
    """Print the result as JSON on stdout (exit 0), or the error object as JSON on stdout (exit 1)."""
    raw = sys.stdin.read() if args.params == "-" else args.params
    try:
        params = json.loads(raw)
    except json.JSONDecodeError as exc:
        print(f"session-sidecar call: params are not JSON: {exc}", file=sys.stderr)
        return 2
    from session_sidecar_client import ConnectionClosed, RpcError, SidecarClient

    async def one_call() -> object:
        server_args = ["--log-level", args.log_level]
        if args.root:
            server_args += ["--root", str(args.root)]
        if args.config:
            server_args += ["--config", str(args.config)]
        # This interpreter's sidecar: the one this command belongs to, whatever PATH says.
        command = own_command()
        async with SidecarClient.spawn(server_args, command=command, client_name="session-sidecar call") as client:
            return await client.request(args.method, params)

    try:
        result = asyncio.run(one_call())
    except RpcError as error:
        print(json.dumps({"error": error.to_dict()}, indent=2))
        print(f"session-sidecar call: error {error.code}: {error.message}", file=sys.stderr)
        return 1
    except ConnectionClosed as error:
        print(f"session-sidecar call: {error}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
