"""session/buildContext {since} over the wire: a client keeps its messages and receives what follows."""

from __future__ import annotations

from .harness import RpcTestClient, assistant, user
from .test_methods import create_with_conversation


async def test_since_over_the_wire_sends_only_the_appended_messages(client: RpcTestClient):
    _, ids = await create_with_conversation(client)
    held = await client.call("session/buildContext", {"sessionId": "s1", "format": "llm"})
    # delta and baseCount are always sent (false and 0 for a whole context); rebuildReason only with a since.
    assert held["delta"] is False and held["baseCount"] == 0 and "rebuildReason" not in held and held["cursor"]
    appended = await client.call(
        "session/append", {"sessionId": "s1", "entries": [user("and now?"), assistant("done")]}
    )
    delta = await client.call("session/buildContext", {"sessionId": "s1", "format": "llm", "since": held["cursor"]})
    assert delta["delta"] is True and delta["baseCount"] == len(ids)
    assert delta["entryIds"] == [e["id"] for e in appended["entries"]]
    full = await client.call("session/buildContext", {"sessionId": "s1", "format": "llm"})
    assert held["messages"] + delta["messages"] == full["messages"]
    await client.call("session/branch", {"sessionId": "s1", "entryId": ids[0]})
    rebuilt = await client.call("session/buildContext", {"sessionId": "s1", "format": "llm", "since": delta["cursor"]})
    assert rebuilt["delta"] is False and rebuilt["baseCount"] == 0 and rebuilt["rebuildReason"] == "branched"
    assert [m["role"] for m in rebuilt["messages"]] == ["user"]
