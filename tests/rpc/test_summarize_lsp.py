"""The ``client`` provider, answered by pytest-lsp's (pygls') client: an agent keeping its own model access."""

from __future__ import annotations

from typing import Any

from .harness import RpcTestClient, assistant, user


async def test_compact_with_the_client_provider_uses_the_clients_summary(client: RpcTestClient):
    rpc = client
    asked: list[dict[str, Any]] = []

    @rpc.feature("session/summarize")
    def summarize(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"text": f"CLIENT SUMMARY of {len(params['prompt'])} chars"}

    await rpc.call("session/create", {"cwd": "/w", "sessionId": "lsp-client"})
    entries = []
    for index in range(6):
        entries += [user(f"question {index} " + "word " * 150), assistant(f"answer {index} " + "word " * 150)]
    await rpc.call("session/append", {"sessionId": "lsp-client", "entries": entries})
    result = await rpc.call(
        "session/compact", {"sessionId": "lsp-client", "provider": "client", "keepRecentTokens": 300}
    )
    assert asked and asked[0]["systemPrompt"] and asked[0]["maxTokens"] > 0
    assert "question 0" in asked[0]["prompt"]  # the serialized conversation went to the client
    assert result["provider"] == "client" and result["summary"].startswith("CLIENT SUMMARY of")
    context = await rpc.call("session/buildContext", {"sessionId": "lsp-client"})
    assert context["messages"][0]["role"] == "compactionSummary"
    assert context["messages"][0]["summary"] == result["summary"]
