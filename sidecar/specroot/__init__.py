"""A sessions root in the spec's format (``store.format = "spec"``): the service over store/spec/."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Settings
    from ..service import SessionService


def make_service(root: Path, settings: "Settings") -> "SessionService":
    """The service for ``root``: over spec folders when ``store.format`` is "spec", else pi files."""
    if settings.store.format == "spec":
        from .service import SpecSessionService

        return SpecSessionService(root, settings)
    from ..service import SessionService

    return SessionService(root, settings)
