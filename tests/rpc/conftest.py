from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig

from .harness import SERVER, RawServer, RpcTestClient


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[*SERVER, "serve"], client_factory=RpcTestClient))
async def client(rpc: RpcTestClient, sessions_root: Path):
    """pytest-lsp's client on a real sidecar, initialized on this test's sessions root."""
    result = await rpc.call(
        "initialize",
        {"clientInfo": {"name": "pytest-lsp"}, "protocolVersion": "1.0", "sessionRoot": str(sessions_root)},
    )
    assert result["sessionRoot"] == str(sessions_root)
    rpc.protocol.notify("initialized", {})
    yield
    await rpc.call("shutdown")
    rpc.protocol.notify("exit")


@pytest.fixture
async def raw(sessions_root: Path):
    """An initialized sidecar spoken to byte by byte (LSP framing)."""
    server = await RawServer.start()
    answer = await server.initialize(sessions_root)
    assert "result" in answer, answer
    yield server
    await server.stop()
