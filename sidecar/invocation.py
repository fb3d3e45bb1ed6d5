"""How a command runs: this very sidecar's own command line (to start it again as a server), and the
sessions root and settings a command's flags name. cli.py and the commands beside it (import, export,
demo) share them from here, below them all."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import Settings, SettingsError, load_settings
from .store.files import default_root


def own_command() -> list[str]:
    """How to start this very sidecar again: the standalone executable itself, else this interpreter's package."""
    if getattr(sys, "frozen", False):  # a PyInstaller build: sys.executable is session-sidecar
        return [sys.executable]
    # -P: the current folder is not put first on sys.path, so a `sidecar/` folder there (a checkout
    # of another version, say) is not what runs.
    return [sys.executable, "-P", "-m", "sidecar"]


def command_settings(args: argparse.Namespace) -> Settings | None:
    """The settings a command runs with (the file, the environment, its own flags); None once it
    printed why they do not load."""
    try:
        return load_settings(args.config, overrides=compat_override(args))
    except SettingsError as exc:
        print(f"session-sidecar: {exc}", file=sys.stderr)
        return None


def command_root(args: argparse.Namespace) -> Path:
    return args.root.expanduser() if args.root else default_root()


def compat_override(args: argparse.Namespace) -> dict[str, dict[str, str]]:
    store: dict[str, str] = {}
    if getattr(args, "compat", None):
        store["compat"] = args.compat
    if getattr(args, "format", None):
        store["format"] = args.format
    if getattr(args, "database_url", None):
        store["databaseUrl"] = args.database_url
    return {"store": store} if store else {}
