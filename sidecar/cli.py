"""The ``session-sidecar`` command: serve (the default), call, demo.

    session-sidecar [serve] [--jsonl] [--root DIR] [--config FILE] [--log-level LEVEL]
    session-sidecar call METHOD ['{json params}' | -] [--root DIR] [--config FILE]
    session-sidecar demo [--root DIR]
    session-sidecar inline-blobs [--root DIR]   # images back into the lines, for pi
    session-sidecar move-blobs [--root DIR]     # <root>/.blobs to oh-my-pi's blob folder
    session-sidecar to-pi [--root DIR] [SESSION...]    # oh-my-pi's sessions made pi's (title, images)
    session-sidecar to-omp [--root DIR] [SESSION...]   # pi's sessions made oh-my-pi's
    session-sidecar rewind ID ENTRY [--files] [--dry-run] [--force] [--json]
    session-sidecar diff ID FROM TO [--patch] [--json]
    session-sidecar export ID --format markdown|html|json [-o FILE] [--leaf ENTRY] [--all] [--no-redact]
    session-sidecar view ID [-o FILE]              # the session's page, one HTML file; prints its path
    session-sidecar migrate --from ROOT --database-url URL   # a file root into PostgreSQL
    session-sidecar export-root --database-url URL --to DIR  # and back, byte for byte

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
from typing import NoReturn

from . import __version__
from .config import SettingsError, load_settings
from .invocation import command_root, command_settings, compat_override, own_command
from .store.files import default_root

LOG_LEVEL_ENV = "SESSION_SIDECAR_LOG_LEVEL"
SUBCOMMANDS = (
    "serve",
    "call",
    "demo",
    "reindex",
    "doctor",
    "history",
    "du",
    "prune",
    "empty-trash",
    "inline-blobs",
    "move-blobs",
    "to-pi",
    "to-omp",
    "rewind",
    "diff",
    "import",
    "export",
    "view",
    "convert",
    "migrate",
    "export-root",
)


# The options every command takes, given before or after the subcommand (`--root DIR call ...` and
# `call ... --root DIR` alike), with their defaults; filled in after parsing (see _parse).
GLOBAL_DEFAULTS: dict[str, object] = {
    "root": None,
    "config": None,
    "compat": None,
    "format": None,
    "database_url": None,
    "log_level": os.environ.get(LOG_LEVEL_ENV, "warning"),
}


def _common(parser: argparse.ArgumentParser, format_option: str = "--format") -> None:
    """The options every command takes. ``format_option``: the store format's flag (export and view
    have a --format of their own, the export's, so theirs is --store-format).

    Every one defaults to SUPPRESS, on the main parser and on each subcommand's alike: argparse
    copies a subcommand's defaults over what was parsed before the subcommand, so a real default
    here would undo `--root DIR call ...`. _parse fills in GLOBAL_DEFAULTS afterwards."""
    parser.add_argument(
        "--root",
        type=Path,
        default=argparse.SUPPRESS,
        help="sessions root (default: $SESSION_SIDECAR_HOME, else the user data dir)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=argparse.SUPPRESS,
        help="TOML settings file (default: $SESSION_SIDECAR_CONFIG, else the user config dir)",
    )
    parser.add_argument(
        "--compat",
        choices=["pi", "omp"],
        default=argparse.SUPPRESS,
        help="the tool the files must stay readable by (store.compat; default: the tool whose folder the root is, else pi)",
    )
    parser.add_argument(
        format_option,
        dest="format",
        choices=["pi", "spec"],
        default=argparse.SUPPRESS,
        help="the on-disk format of the root's sessions (store.format; default pi): spec = <ULID>/session.jsonl folders",
    )
    parser.add_argument(
        "--database-url",
        default=argparse.SUPPRESS,
        help="keep sessions in PostgreSQL (store.databaseUrl; default: $SESSION_SIDECAR_DATABASE_URL, else files)",
    )
    parser.add_argument(
        "--log-level",
        default=argparse.SUPPRESS,
        choices=["debug", "info", "warning", "error"],
        help=f"stderr log level (default: ${LOG_LEVEL_ENV}, else warning)",
    )


class _VersionAction(argparse.Action):
    """``--version``: the release and which core reads session files (issue 42), e.g. "session-sidecar 0.1.0
    (core: compiled)". The core is looked up only when asked, so no other command pays for it."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **_: object) -> None:
        super().__init__(option_strings, dest, default=argparse.SUPPRESS, nargs=0, help="show the version and core")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from .corepath import chosen

        sys.stdout.write(f"session-sidecar {__version__} (core: {chosen()})\n")
        parser.exit()


def _parser(serve_only: bool = False) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The main parser and each subcommand's (``serve_only``: serve's alone, see _parse). No parser takes
    an abbreviation of a long option: `serve --token X` once became `--token-file X` and wrote a token
    into a file named X."""
    parser = argparse.ArgumentParser(
        prog="session-sidecar", description="Coding-agent sessions over JSON-RPC 2.0 on stdio.", allow_abbrev=False
    )
    parser.add_argument("--version", action=_VersionAction)
    _common(parser)
    commands = parser.add_subparsers(dest="command")

    serve = commands.add_parser("serve", help="serve JSON-RPC on stdin/stdout (the default)")
    _common(serve)
    serve.add_argument(
        "--jsonl",
        action="store_true",
        help="newline-delimited JSON only (default: the framing the client's first byte shows)",
    )
    serve.add_argument("--workers", type=int, default=None, help="worker threads for session operations")
    serve.add_argument(
        "--socket", type=Path, help="serve many clients on this unix socket (mode 0600) instead of stdio"
    )
    serve.add_argument(
        "--listen", metavar="HOST:PORT", help="serve many clients on TCP (127.0.0.1:PORT); they must send the token"
    )
    serve.add_argument(
        "--token-file", type=Path, help="the TCP token (made, 0600, when missing; default <root>/.live/token)"
    )
    if serve_only:
        serve.allow_abbrev = False
        return parser, commands.choices

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
    doctor.add_argument(
        "--fix", action="store_true", help="rewrite faulty files (the original is kept as <file>.doctor.bak)"
    )
    doctor.add_argument(
        "files", nargs="*", type=Path, help="session files to check (default: every file below the root)"
    )

    history = commands.add_parser("history", help="print the prompts typed (newest first), or those holding QUERY")
    _common(history)
    history.add_argument("query", nargs="?", help="a substring to look for (case-insensitive)")
    history.add_argument("--cwd", help="only prompts typed in this project folder")
    history.add_argument("--limit", type=int, default=50)

    du = commands.add_parser(
        "du", help="what the store holds: bytes per area, per project folder, the largest sessions"
    )
    _common(du)
    du.add_argument("--largest", type=int, default=10, help="how many of the largest sessions to name")
    du.add_argument("--blobs", action="store_true", help="also count the blobs no session refers to (reads every file)")

    prune = commands.add_parser("prune", help="send the sessions a retention policy selects to the trash (restorable)")
    _common(prune)
    prune.add_argument("--older-than", help="untouched for longer than this: 90d, 12h, 2w")
    prune.add_argument("--keep-per-cwd", type=int, help="keep the newest N sessions of each project folder")
    prune.add_argument("--max-total", help="send the oldest to the trash until the rest fits: 5GB, 500MiB")
    prune.add_argument("--include-pinned", action="store_true", help="named or labelled sessions too")
    prune.add_argument("--dry-run", action="store_true", help="only list what the policy selects")
    prune.add_argument("--yes", action="store_true", help="go on even when the policy selects every session")

    empty = commands.add_parser("empty-trash", help="erase trashed sessions for good (and, with --blobs, unused blobs)")
    _common(empty)
    empty.add_argument("--older-than", help="only sessions trashed longer ago than this: 30d")
    empty.add_argument(
        "--blobs", action="store_true", help="also erase blobs no session (even a trashed one) refers to"
    )
    empty.add_argument("--dry-run", action="store_true", help="only say what would be erased")

    inline = commands.add_parser(
        "inline-blobs", help="put images stored as blob references back into the session files (for pi); backups kept"
    )
    _common(inline)
    move = commands.add_parser(
        "move-blobs", help="move images from <root>/.blobs to oh-my-pi's blob folder (<root>/../blobs)"
    )
    _common(move)
    for tool, other, what in (
        ("pi", "oh-my-pi", "title line folded into a session_info, images inline"),
        ("omp", "pi", "its title line, images to oh-my-pi's blob folder"),
    ):
        mover = commands.add_parser(
            f"to-{tool}",
            help=f"make {other}'s sessions readable by {'pi' if tool == 'pi' else 'oh-my-pi'} in place "
            f"({what}); backups kept as <file>.to-{tool}.bak",
        )
        _common(mover)
        mover.add_argument(
            "sessions",
            nargs="*",
            metavar="SESSION",
            help="session ids below --root or session files (default: every session below --root)",
        )

    convert = commands.add_parser(
        "convert",
        help="copy a session into the other format (pi <-> spec) below --target-root; prints what was left out",
    )
    _common(convert)
    convert.add_argument("--to", choices=["pi", "spec"], required=True, help="the format of the copy")
    convert.add_argument("--target-root", type=Path, required=True, help="the root the copy goes below")
    convert.add_argument("source", help="a pi .jsonl file, a spec session folder, or a session id below --root")
    convert.add_argument("--leaf-id", help="pi -> spec: the branch to keep (default the leaf)")
    convert.add_argument("--cwd", help="spec -> pi: the header's cwd (the spec format has none)")

    from .snapshots.cli import add_commands as add_snapshot_commands

    add_snapshot_commands(commands, _common)
    from .importers.command import add_command as add_import_command

    add_import_command(commands, _common)
    from .export.cli import add_commands as add_export_commands

    add_export_commands(commands, _common)
    from .store.postgres.command import add_commands as add_postgres_commands

    add_postgres_commands(commands)
    for command in commands.choices.values():
        command.allow_abbrev = False
    return parser, commands.choices


def _with_command(argv: list[str]) -> list[str]:
    """argv with "serve" put where the subcommand goes when none is named (serving is the default):
    after the global options given before it."""
    takes_value = {"--root", "--config", "--compat", "--format", "--database-url", "--log-level"}
    at = 0
    while at < len(argv):
        word = argv[at]
        if word in SUBCOMMANDS or word in ("-h", "--help", "--version"):
            return argv
        if word in takes_value:
            at += 2
        elif word.split("=", 1)[0] in takes_value:
            at += 1
        else:
            break
    return [*argv[:at], "serve", *argv[at:]]


def _parse(argv: list[str]) -> argparse.Namespace:
    argv = _with_command(argv)
    # serve, what every client spawns, is parsed first by a parser that knows serve alone: making every
    # subcommand's parser (and importing the modules that add theirs) was ~8 ms of each start. Whatever
    # it refuses is parsed again by the whole parser, which answers it as it always did; help and
    # --version, which print without an error, go to the whole parser straight away.
    if not any(word.startswith("-h") or word in ("--help", "--version") for word in argv):
        try:
            return _parsed(*_parser(serve_only=True), argv, quick=True)
        except _NotServe:
            pass
    return _parsed(*_parser(), argv)


class _NotServe(Exception):
    """The serve-only parser met something the whole parser must answer."""


def _refuse(message: str) -> NoReturn:
    raise _NotServe(message)


def _parsed(
    parser: argparse.ArgumentParser, commands: dict[str, argparse.ArgumentParser], argv: list[str], quick: bool = False
) -> argparse.Namespace:
    if quick:  # (an instance's error() stands in for the class's, for this parser alone)
        parser.error = commands["serve"].error = _refuse  # type: ignore[method-assign]  # raise, print nothing
    args = parser.parse_args(argv)
    takes = {action.dest for action in commands[args.command]._actions}
    for dest, default in GLOBAL_DEFAULTS.items():
        if not hasattr(args, dest):
            setattr(args, dest, default)
        elif dest not in takes:  # given before a subcommand that has no use for it: said, not ignored
            parser.error(f"--{dest.replace('_', '-')} does not apply to {args.command}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(list(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if os.environ.get("SIDECAR_CORE", "auto") not in ("", "auto"):
        # A core asked for by name is checked before anything runs (issue 42): a missing compiled core or a
        # misspelt name fails the start, not the first session open, which is where the core is first imported.
        try:
            from . import corepath  # noqa: F401  # its import reads SIDECAR_CORE and refuses what cannot run
        except (ImportError, ValueError) as exc:
            print(f"session-sidecar: {exc}", file=sys.stderr)
            return 2
    try:
        return _dispatch(args)
    except OSError as exc:  # a root or a file the command cannot reach: said in a line, not a traceback
        where = f": {exc.filename}" if exc.filename else ""
        print(f"session-sidecar {args.command}: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "call":
        return _call(args)
    if args.command == "reindex":
        return _reindex(args)
    if args.command == "history":
        from .history.command import print_history

        root = command_root(args)
        return print_history(root, args.query, args.cwd, args.limit, sys.stdout)
    if args.command in ("du", "prune", "empty-trash"):
        return _upkeep(args)
    if args.command == "doctor":
        from .doctor import run_doctor

        root = command_root(args)
        return run_doctor(root, [p.expanduser() for p in args.files], args.fix, sys.stdout)
    if args.command in ("inline-blobs", "move-blobs"):
        return _blobs(args)
    if args.command in ("to-pi", "to-omp"):
        return _to_tool(args)
    if args.command in ("rewind", "diff"):
        from .snapshots.cli import run as run_snapshot_command

        return run_snapshot_command(args)
    if args.command == "import":
        from .importers.command import run as run_import

        return run_import(args)
    if args.command in ("export", "view"):
        from .export.cli import run as run_export_command

        return run_export_command(args)
    if args.command == "convert":
        return _convert(args)
    if args.command in ("migrate", "export-root"):
        from .store.postgres.command import run as run_postgres_command

        return run_postgres_command(args)
    if args.command == "demo":
        from .demo import run_demo

        return asyncio.run(run_demo(args.root, args.config, args.database_url))
    return _serve(args)


def _upkeep(args: argparse.Namespace) -> int:
    from . import wire
    from .service import SessionService
    from .upkeep import command

    settings = command_settings(args)
    if settings is None:
        return 2
    service = SessionService(command_root(args), settings)
    try:
        if args.command == "du":
            return command.run_du(service, args.largest, args.blobs, sys.stdout)
        if args.command == "prune":
            params = wire.PruneParams(
                olderThan=args.older_than,
                keepPerCwd=args.keep_per_cwd,
                maxTotal=args.max_total,
                includePinned=args.include_pinned,
                dryRun=args.dry_run,
                confirm=args.yes,
            )
            return command.run_prune(service, params, sys.stdout)
        return command.run_empty_trash(service, args.older_than, args.blobs, args.dry_run, sys.stdout)
    finally:
        service.close_all()


def _reindex(args: argparse.Namespace) -> int:
    from .service import SessionService

    root = command_root(args)
    started = time.perf_counter()
    count = SessionService(root).reindex()
    print(f"indexed {count} sessions below {root} in {time.perf_counter() - started:.2f} s")
    return 0


def _blobs(args: argparse.Namespace) -> int:
    from .store.files import inline_blobs, move_blobs

    root = command_root(args)
    if args.command == "inline-blobs":
        report = inline_blobs(root)
        print(f"{report.references} image references put back inline in {len(report.files_changed)} files below {root}")
        for path in report.files_changed:
            print(f"  rewrote {path} (old bytes in {path}.blobrefs.bak)")
    else:
        report = move_blobs(root)
        print(f"{report.references} blobs moved to {root.parent / 'blobs'}")
    for path in report.locked:
        print(f"  skipped {path}: another sidecar has it open; run again once it is closed", file=sys.stderr)
    for missing in report.missing:
        print(f"  not found: {missing}", file=sys.stderr)
    return 1 if report.locked or report.missing else 0


def _to_tool(args: argparse.Namespace) -> int:
    from .store.files import move_sessions

    root = command_root(args)
    tool = args.command[len("to-") :]
    report = move_sessions(root, tool, args.sessions)
    reader = "pi" if tool == "pi" else "oh-my-pi"
    print(
        f"{len(report.changed)} sessions rewritten for {reader}, {len(report.unchanged)} already were; "
        f"{report.images} images {'put back inline' if tool == 'pi' else 'moved to the blob folder'}"
    )
    for path in report.changed:
        print(f"  rewrote {path} (old bytes in {path}.to-{tool}.bak)")
    for named in report.named:
        print(f"  named {named}")
    for path in report.locked:
        print(f"  skipped {path}: another sidecar has it open; run again once it is closed", file=sys.stderr)
    for missing in report.missing:
        print(f"  not found: {missing}", file=sys.stderr)
    for given in report.unknown:
        print(f"  no session {given} below {root} (give a session id or a session file)", file=sys.stderr)
    for damaged in report.damaged:
        print(f"  left alone {damaged}", file=sys.stderr)
    return 1 if report.locked or report.missing or report.unknown or report.damaged else 0


def _serve(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    if settings is None:
        return 2
    from .rpc.boot import serve

    root = command_root(args)
    if args.socket is not None or args.listen is not None:
        from .rpc.sockets import serve_sockets  # many clients, one service (framing detected per client)

        return serve_sockets(
            root,
            settings,
            unix_path=args.socket,
            listen=args.listen,
            token_file=args.token_file,
            max_workers=args.workers,
        )
    # Without --jsonl the framing is the client's, told by its first byte (as in socket mode).
    return serve(root, settings, framing="jsonl" if args.jsonl else None, max_workers=args.workers)


def _convert(args: argparse.Namespace) -> int:
    """session/convert in this process: the JSON result on stdout (exit 0), or the error on stderr (exit 1)."""
    import msgspec

    from . import wire
    from .errors import SidecarError
    from .service import SessionService

    settings = command_settings(args)
    if settings is None:
        return 2
    root = command_root(args)
    source = Path(args.source).expanduser()
    by_path = source.exists() or os.sep in args.source
    params = wire.ConvertParams(
        to=args.to,
        targetRoot=str(args.target_root.expanduser()),
        leafId=args.leaf_id,
        cwd=args.cwd,
        sessionId=None if by_path else args.source,
        path=str(source.absolute()) if by_path else None,
    )
    service = SessionService(
        root, msgspec.structs.replace(settings, store=msgspec.structs.replace(settings.store, allowExternalPaths=True))
    )
    try:
        result = service.convert(params)
    except SidecarError as error:
        print(f"session-sidecar convert: {error.message}", file=sys.stderr)
        return 1
    finally:
        service.close_all()
    print(json.dumps(msgspec.to_builtins(result), indent=2, ensure_ascii=False))
    return 0


def _call(args: argparse.Namespace) -> int:
    """Print the result as JSON on stdout (exit 0), or the error object as JSON on stdout (exit 1)."""
    raw = sys.stdin.read() if args.params == "-" else args.params
    try:
        params = json.loads(raw)
    except json.JSONDecodeError as exc:
        print(f"session-sidecar call: params are not JSON: {exc}", file=sys.stderr)
        return 2
    from .rpc.oneshot import call_once, serves

    if serves(args.method):  # answered in this process (rpc/oneshot.py); anything else by a spawned sidecar
        try:
            settings = load_settings(args.config, overrides=compat_override(args))
        except SettingsError as exc:
            print(f"session-sidecar call: {exc}", file=sys.stderr)
            return 2
        root = args.root.expanduser().absolute() if args.root else default_root()
        ok, answer = call_once(args.method, params, root, settings)
        if not ok:
            print(json.dumps({"error": answer}, indent=2))
            print(f"session-sidecar call: error {answer['code']}: {answer['message']}", file=sys.stderr)
            return 1
        print(json.dumps(answer, indent=2, ensure_ascii=False))
        return 0
    from session_sidecar_client import ConnectionClosed, RpcError, SidecarClient

    async def one_call() -> object:
        server_args = ["--log-level", args.log_level]
        if args.root:
            server_args += ["--root", str(args.root)]
        if args.config:
            server_args += ["--config", str(args.config)]
        if args.compat:
            server_args += ["--compat", args.compat]
        if args.format:
            server_args += ["--format", args.format]
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
