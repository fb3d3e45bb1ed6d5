"""The table of methods (service/methods.py): one route per method of the contract, and the rpc
layer knows routes' properties, never a method's name."""

from __future__ import annotations

import inspect
from pathlib import Path

from sidecar import wire
from sidecar.service import SessionService
from sidecar.service.methods import ROUTES

RPC = Path(__file__).resolve().parents[2] / "sidecar" / "rpc"


def test_the_table_covers_exactly_the_contract() -> None:
    assert set(ROUTES) == set(wire.METHODS)
    for name, route in ROUTES.items():
        assert route.name == name
        assert route.params is wire.METHODS[name][0], name


def test_each_route_calls_the_service_as_its_properties_say() -> None:
    for name, route in ROUTES.items():
        handler = getattr(SessionService, route.handler.__name__)
        assert handler is route.handler, name
        parameters = list(inspect.signature(handler).parameters)
        assert ("work" in parameters) == route.takes_work, name
        assert ("client" in parameters) == route.takes_client, name
        assert inspect.iscoroutinefunction(handler) == route.on_loop, name
        if route.group_sync:
            assert parameters[2] == "defer_sync", name
        assert route.may_join_run <= route.may_run_inline, name
        assert route.queued or not (route.on_loop or route.may_run_inline), name


# The methods that change a session, which an observer may not call (the route's
# ``writes_session`` is what rpc/live.py's gate reads; this is the list it must give).
WRITING_METHODS = {
    "session/append",
    "session/branch",
    "session/setLabel",
    "session/setName",
    "session/compact",
    "session/flush",
    "session/archive",
    "session/unarchive",
    "session/delete",
    "session/restore",
    "session/move",
    "session/rewind",
    "session/snapshot",
}


def test_routes_that_write_a_session_are_the_ones_roles_gate() -> None:
    assert {name for name, route in ROUTES.items() if route.writes_session} == WRITING_METHODS


def test_the_rpc_layer_names_no_session_method() -> None:
    named = [path.name for path in RPC.glob("*.py") if '"session/append"' in path.read_text(encoding="utf-8")]
    assert named == []
