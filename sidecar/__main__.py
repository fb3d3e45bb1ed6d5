"""``python -m sidecar``: the same as the ``session-sidecar`` command."""

from .cli import main

raise SystemExit(main())
