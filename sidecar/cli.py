"""The ``session-sidecar`` command (serve, call, demo, reindex); the server lands with the rpc layer."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("session-sidecar: the JSON-RPC server is not built yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
