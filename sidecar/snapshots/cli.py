"""``session-sidecar rewind`` and ``session-sidecar diff``: the two calls, made on a fresh sidecar, shown for people.

session-sidecar rewind ID ENTRY [--files] [--dry-run] [--force] [--json]
session-sidecar diff ID FROM TO [--patch] [--json]      (FROM, TO: entry ids or "worktree")
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO


def add_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: Callable[[argparse.ArgumentParser], None]
) -> None:
    rewind = commands.add_parser("rewind", help="move a session back to an entry; with --files, its files too")
    common(rewind)
    rewind.add_argument("session_id")
    rewind.add_argument("entry_id")
    rewind.add_argument(
        "--files", action="store_true", help="put the files back to the snapshot at or before the entry"
    )
    rewind.add_argument("--dry-run", action="store_true", help="show what would change; change nothing")
    rewind.add_argument(
        "--force", action="store_true", help="overwrite files changed outside the agent (kept in the undo snapshot)"
    )
    rewind.add_argument("--json", action="store_true", help="print the result as JSON")
    diff = commands.add_parser(
        "diff", help="the files changed between two points of a session (entry ids or 'worktree')"
    )
    common(diff)
    diff.add_argument("session_id")
    diff.add_argument("from_point", metavar="FROM")
    diff.add_argument("to_point", metavar="TO")
    diff.add_argument("--patch", action="store_true", help="print unified diffs of text files")
    diff.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    if args.command == "rewind":
        method = "session/rewind"
        params: dict[str, object] = {
            "sessionId": args.session_id,
            "entryId": args.entry_id,
            "files": args.files,
            "dryRun": args.dry_run,
            "force": args.force,
        }
    else:
        method = "session/diff"
        params = {"sessionId": args.session_id, "from": args.from_point, "to": args.to_point, "patch": args.patch}
    from session_sidecar_client import ConnectionClosed, RpcError

    try:
        result = asyncio.run(_one_call(args, method, params))
    except RpcError as error:
        print(f"session-sidecar {args.command}: {error.message}", file=sys.stderr)
        return 1
    except ConnectionClosed as error:
        print(f"session-sidecar {args.command}: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False), file=out)
    elif args.command == "rewind":
        _show_rewind(result, out)
    else:
        _show_diff(result, out)
    return 0


async def _one_call(args: argparse.Namespace, method: str, params: dict[str, object]) -> Any:
    from session_sidecar_client import SidecarClient

    server_args = ["--log-level", args.log_level]
    if args.root:
        server_args += ["--root", str(args.root)]
    if args.config:
        server_args += ["--config", str(args.config)]
    command = [sys.executable, "-m", "sidecar"]
    async with SidecarClient.spawn(
        server_args, command=command, client_name=f"session-sidecar {args.command}"
    ) as client:
        return await client.request(method, params)


def _show_rewind(result: dict[str, Any], out: TextIO) -> None:
    would = result.get("dryRun", False)
    for key, sign in (("restored", "M"), ("created", "A"), ("removed", "D")):
        for path in result.get(key, []):
            print(f"{sign} {path}", file=out)
    for skipped in result.get("skipped", []):
        print(f"! {skipped['path']}: {skipped['reason']}", file=out)
    counts = ", ".join(f"{len(result.get(k, []))} {k}" for k in ("restored", "created", "removed"))
    if would:
        print(f"dry run: would rewind to {result['leafId']}; files: {counts}", file=out)
        return
    print(f"leaf is now {result['leafId']}; files: {counts}", file=out)
    if result.get("undoEntryId"):
        print(f"undo with: session-sidecar rewind <session> {result['undoEntryId']} --files", file=out)


def _show_diff(result: dict[str, Any], out: TextIO) -> None:
    letters = {"added": "A", "modified": "M", "removed": "D", "renamed": "R", "typeChanged": "T"}
    for change in result["files"]:
        counts = "binary" if change.get("binary") else f"+{change.get('additions', 0)} -{change.get('deletions', 0)}"
        name = f"{change['oldPath']} -> {change['path']}" if change.get("oldPath") else change["path"]
        print(f"{letters[change['change']]} {name} ({counts})", file=out)
    if not result["files"]:
        print("no files changed", file=out)
    if result.get("patch"):
        print(result["patch"], end="", file=out)
