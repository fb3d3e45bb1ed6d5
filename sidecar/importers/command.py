"""``session-sidecar import --from codex|claude-code|opencode PATH...``: the same work as session/import."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TextIO

import msgspec

from ..errors import SidecarError
from . import TOOLS


def add_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: Callable[[argparse.ArgumentParser], None]
) -> None:
    parser = commands.add_parser("import", help="import sessions of Codex, Claude Code or opencode as pi sessions")
    common(parser)
    parser.add_argument("--from", dest="tool", required=True, choices=TOOLS, help="the tool that wrote them")
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a session file, or a folder of them (codex: rollout-*.jsonl; claude-code: a project "
        "folder; opencode: opencode.db or its folder)",
    )
    parser.add_argument("--dry-run", action="store_true", help="read and report; write nothing")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    from .. import wire
    from ..invocation import command_root, command_settings
    from ..service import SessionService

    settings = command_settings(args)
    if settings is None:
        return 2
    service = SessionService(command_root(args), settings)
    try:
        result = service.import_(wire.ImportParams(tool=args.tool, paths=args.paths, dryRun=args.dry_run))
    except SidecarError as error:
        print(f"session-sidecar import: {error.message}", file=sys.stderr)
        return 1
    finally:
        service.close_all()
    if args.json:
        out.write(json.dumps(msgspec.to_builtins(result), indent=2, ensure_ascii=False) + "\n")
        return 0
    for session in result.sessions:
        verb = "imported" if session.created else ("found, already imported" if session.path else "read (dry run)")
        out.write(f"{verb}: {session.tool} {session.originalId} -> {session.sessionId} ({session.entries} entries)\n")
        out.write(f"  from {session.source}\n")
        if session.path:
            out.write(f"  into {session.path}\n")
        for count in session.counts:
            parts = [
                f"{n} {what}"
                for what, n in (("mapped", count.mapped), ("kept", count.kept), ("skipped", count.skipped))
                if n
            ]
            out.write(f"    {count.kind}: {', '.join(parts)}\n")
        for damaged in session.damaged:
            out.write(f"  damaged line {damaged.line} skipped: {damaged.error}\n")
        if session.unrecognised:
            out.write(f"  not recognised (kept as custom entries): {', '.join(session.unrecognised)}\n")
    return 0
