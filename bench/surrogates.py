"""What accepting lone surrogates costs: the wire's decode and encode on a normal session, before and after.

Before, the server decoded a request with msgspec's decoder and encoded an answer with its encoder; now
both go through format/codec.py (``parse``, ``encode_js``), which take a slower path only when msgspec
refuses a lone surrogate. This prints, in one run, the cost per call of each way on the messages of a
normal session (no surrogate: the common path), and of the slow path on the same messages holding one.

    python bench/surrogates.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import time

import msgspec

from sidecar.format.codec import encode_js, parse
from sidecar.rpc.protocol import decode_message


def session_messages(turns: int = 20) -> list[dict]:
    out = []
    for n in range(turns):
        out.append({"role": "user", "content": f"question {n}: " + "how do I fix this bug? " * 10, "timestamp": n})
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me look at the file. " * 20},
                    {"type": "toolCall", "id": f"call{n}", "name": "read", "arguments": {"path": f"/src/file{n}.py"}},
                ],
                "provider": "anthropic",
                "model": "claude",
                "stopReason": "toolUse",
                "timestamp": n,
                "usage": {"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150},
            }
        )
        out.append(
            {
                "role": "toolResult",
                "toolCallId": f"call{n}",
                "toolName": "read",
                "isError": False,
                "content": [{"type": "text", "text": "def f():\n    return 1\n" * 40}],
                "timestamp": n,
            }
        )
    return out


def per_call(fn, arg, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn(arg)
    return (time.perf_counter() - start) / repeat * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=2000)
    repeat = parser.parse_args().repeat
    encoder, decoder = msgspec.json.Encoder(), msgspec.json.Decoder()
    messages = session_messages()
    request = encoder.encode(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "session/append",
            "params": {"sessionId": "s", "entries": [{"type": "message", "message": m} for m in messages[:3]]},
        }
    )
    answer = {"jsonrpc": "2.0", "id": 8, "result": {"messages": messages, "leafId": "x", "estimatedTokens": 9000}}
    cut = [dict(m, content=m["content"] + "\ud83d") if isinstance(m["content"], str) else m for m in messages]
    cut_answer = {"jsonrpc": "2.0", "id": 8, "result": {"messages": cut, "leafId": "x", "estimatedTokens": 9000}}
    cut_request = request.replace(b"how do I fix", b"\\ud83d how do I fix", 1)
    print(
        f"load average {os.getloadavg()[0]:.2f}; {repeat} calls each; a normal session: {len(messages)} messages, "
        f"request {len(request)} B, answer {len(encoder.encode(answer))} B"
    )
    rows = [
        ("decode a request: msgspec (before)", per_call(decoder.decode, request, repeat)),
        ("decode a request: decode_message (after)", per_call(decode_message, request, repeat)),
        ("decode a request holding \\ud83d (slow path)", per_call(parse, cut_request, repeat)),
        ("encode an answer: msgspec (before)", per_call(encoder.encode, answer, repeat // 4)),
        ("encode an answer: encode_js (after)", per_call(lambda a: encode_js(encoder.encode, a), answer, repeat // 4)),
        (
            "encode an answer holding \\ud83d (slow path)",
            per_call(lambda a: encode_js(encoder.encode, a), cut_answer, repeat // 4),
        ),
    ]
    for name, us in rows:
        print(f"  {name:48s} {us:9.2f} µs")


if __name__ == "__main__":
    main()
