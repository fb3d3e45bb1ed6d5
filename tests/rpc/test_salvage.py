"""The id of a body that cannot be decoded, read from its top-level members only (sidecar/rpc/salvage.py)."""

from __future__ import annotations

import msgspec
import pytest

from sidecar.rpc.salvage import SCAN_BYTES, names_jsonrpc, recover_id

CASES = [
    (b'{"jsonrpc":"2.0","id":7,"method":"x","params":{"q":"\xff"}}', 7),
    (b'{"jsonrpc":"2.0","id":"s-1","method":"x","params":{"q":"\xff"}}', "s-1"),
    (b'  {\r\n "id" : -12 , "params":"\xc3"}', -12),
    # After the params: every value before it skipped, "id" inside them not taken.
    (b'{"method":"x","params":{"id":"nested","text":"\\"id\\": 3\xff","list":[{"id":4},"]}"]},"id":"top"}', "top"),
    (b'{"jsonrpc":"2.0","id":"caf\\u00e9","method":"x"', "caf\u00e9"),  # escapes undone; the rest may be cut
    # No id: absent, only nested, not a string or an integer, cut, unreadable, not an object.
    (b'{"jsonrpc":"2.0","method":"x","params":{"id":5}}', None),
    (b'{"params":{"id":5},"text":"\\"id\\":6"}', None),
    (b'{"id":null,"method":"x"}', None),
    (b'{"id":true}', None),
    (b'{"id":1.5}', None),
    (b'{"id":1e3}', None),
    (b'{"id":{"x":1}}', None),
    (b'{"jsonrpc":"2.0","id":12', None),  # 12, or the start of 123?
    (b'{"id":"a\xffb","method":"x"}', None),
    (b'{"id":"\\ud83d","method":"x"}', None),
    (b'{"id":' + b"9" * 30 + b"}", 10**30 - 1),
    (b'[{"id":1}]', None),
    (b'garbage "id":1}', None),
    (b'{"a" "id":1}', None),
    (b"", None),
]


@pytest.mark.parametrize("body, expected", CASES)
def test_recover_id(body: bytes, expected: object) -> None:
    assert recover_id(body) == expected


def test_the_same_as_the_server_decodes_wherever_it_can() -> None:
    for body, _ in CASES:
        try:
            message = msgspec.json.decode(body)
        except (msgspec.DecodeError, UnicodeDecodeError):
            continue
        expected = message.get("id") if isinstance(message, dict) else None
        if isinstance(expected, bool) or not isinstance(expected, (int, str)):
            expected = None
        assert recover_id(body) == expected, body


def test_an_id_past_the_scanned_head_is_read_from_the_end_only_when_given() -> None:
    body = b'{"jsonrpc":"2.0","params":"' + b"x" * SCAN_BYTES + b'","id":44}\n'
    assert recover_id(body) is None
    assert recover_id(body[:100], body[-100:]) == 44
    # The end of an object nested last is not the message's own id.
    nested = b'{"params":{"text":"' + b"x" * SCAN_BYTES + b'","inner":{"a":1,"id":44}}}'
    assert recover_id(nested[:100], nested[-100:]) is None


def test_names_jsonrpc() -> None:
    assert names_jsonrpc(b'{"jsonrpc":"2.0","id":1,"method":"x"}\n')
    assert names_jsonrpc(b' {"id":1,"params":{"q":"\xff"},"jsonrpc":"2.0"')
    assert not names_jsonrpc(b'{"id":"e1","type":"message","message":{"jsonrpc":"2.0"}}]}}')  # the tail of a body
    assert not names_jsonrpc(b'"2.0","method":"x"}')
