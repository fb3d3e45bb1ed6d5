"""The standalone executable's entry point (PyInstaller freezes this with the installed wheel)."""

import sys

from sidecar.cli import main

if __name__ == "__main__":
    sys.exit(main())
