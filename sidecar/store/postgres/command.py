"""``session-sidecar migrate`` and ``session-sidecar export-root``: a file root into PostgreSQL and back.

session-sidecar migrate --from ROOT --database-url URL
session-sidecar export-root --database-url URL --to DIR
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from ...errors import SidecarError

URL_ENV = "SESSION_SIDECAR_DATABASE_URL"


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    migrate = commands.add_parser(
        "migrate", help="import a sessions root (live, archive, trash, blobs) into PostgreSQL; idempotent, resumable"
    )
    migrate.add_argument("--from", dest="source", type=Path, required=True, help="the sessions root to import")
    _url(migrate)
    export = commands.add_parser("export-root", help="write every session of PostgreSQL back as a file root")
    _url(export)
    export.add_argument("--to", dest="target", type=Path, required=True, help="the folder to write the root into")
    for parser in (
        migrate,
        export,
    ):  # SUPPRESS: the same option given before the subcommand stands (cli.GLOBAL_DEFAULTS)
        parser.add_argument("--log-level", default=argparse.SUPPRESS, choices=["debug", "info", "warning", "error"])


def _url(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database-url",
        default=argparse.SUPPRESS,
        help=f"postgresql://user:password@host:port/dbname (default: ${URL_ENV})",
    )


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    # psycopg is imported here, not with the parsers: every command line (a file root's too) builds those,
    # and importing the driver took 75 ms of a `call session/list` that never touches a database.
    from .db import connect_checked
    from .schema import ensure_schema
    from .transfer import export_root, import_root

    args.database_url = args.database_url or os.environ.get(URL_ENV)
    if not args.database_url:
        err.write(f"session-sidecar {args.command}: give --database-url or set {URL_ENV}\n")
        return 2
    try:
        db = connect_checked(args.database_url)
        try:
            if args.command == "migrate":
                source = args.source.expanduser()
                if not source.is_dir():
                    err.write(f"session-sidecar migrate: {source} is not a folder\n")
                    return 2
                ensure_schema(db)
                report = import_root(db, source)
                out.write(
                    f"imported {report.imported} sessions, {report.unchanged} already there, "
                    f"{report.replaced} replaced, {report.blobs} blobs, {report.files} other files\n"
                )
                for why in report.skipped:
                    out.write(f"  skipped {why}\n")
                return 0
            ensure_schema(db, migrate=False)
            exported = export_root(db, args.target.expanduser())
            out.write(f"exported {exported.sessions} sessions, {exported.blobs} blobs, {exported.files} other files\n")
            return 0
        finally:
            db.close()
    except SidecarError as exc:
        err.write(f"session-sidecar {args.command}: {exc.message}\n")
        return 1
