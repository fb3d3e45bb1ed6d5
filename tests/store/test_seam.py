"""The file store is one implementation of the storage seam (store/base.py), and the service uses it through it."""

from __future__ import annotations

import inspect
from pathlib import Path

from sidecar import wire
from sidecar.config import Settings
from sidecar.service import SessionService
from sidecar.store.base import SessionStore
from sidecar.store.files import FileStore


def test_the_file_store_has_every_operation_of_the_seam(tmp_path: Path) -> None:
    store = FileStore(tmp_path, Settings())
    assert isinstance(store, SessionStore)
    for name, member in inspect.getmembers(SessionStore, inspect.isfunction):
        if name.startswith("_"):
            continue
        ours = getattr(FileStore, name)
        wanted = list(inspect.signature(member).parameters)
        assert list(inspect.signature(ours).parameters)[: len(wanted)] == wanted, name


def test_the_service_reaches_sessions_only_through_its_store(tmp_path: Path) -> None:
    service = SessionService(tmp_path)
    assert isinstance(service.store, SessionStore)
    created = service.create(wire.CreateParams(cwd="/w"))
    assert service.store.held(created.sessionId) is not None
    # No registry, index or layout of its own beside the store's.
    assert not any(hasattr(service, name) for name in ("_open", "index", "layout", "_areas"))
