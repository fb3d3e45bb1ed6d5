"""Lone surrogates on a spec-format root (issue 36, item 2): a string cut inside an emoji, sent as
JSON.stringify writes it ("\\ud83d"), is stored as that escape and built back with the surrogate kept."""

from __future__ import annotations

from .helpers import SpecServer

CUT = "tool output 😀\ud83d"  # "tool output 😀😀".slice(0, -1) in JavaScript


async def test_a_cut_emoji_is_kept_in_a_spec_session(spec: SpecServer):
    created = await spec.call("session/create", {"cwd": "/work/cut"})
    sid = created["sessionId"]
    await spec.call(
        "session/append",
        {
            "sessionId": sid,
            "entries": [
                {"type": "message", "message": {"role": "user", "content": CUT}},
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "\ude00 back"}],
                        "provider": "p",
                        "model": "m",
                        "stopReason": "stop",
                    },
                },
            ],
        },
    )
    stored = (spec.folder(sid) / "session.jsonl").read_bytes()
    assert b"tool output \xf0\x9f\x98\x80\\ud83d" in stored and b"\\ude00 back" in stored
    for fmt in ("agent", "llm"):
        built = await spec.call("session/buildContext", {"sessionId": sid, "format": fmt})
        texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in built["messages"]]
        assert texts == [CUT, "\ude00 back"], (fmt, texts)
    await spec.call("session/close", {"sessionId": sid})
    await spec.call("session/open", {"sessionId": sid})
    entries = (await spec.call("session/getEntries", {"sessionId": sid}))["entries"]
    first = [e["message"]["content"] for e in entries if e["type"] == "message"][0]
    assert (first if isinstance(first, str) else first[0]["text"]) == CUT  # read back from the file, kept
