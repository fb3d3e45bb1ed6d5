"""The entries an importer writes as lines at once (common.Builder.made, Assistant) are the entries of their dicts.

Tool results, user messages, kept records and assistant messages are made as their lines
while the source is read, not as dicts the store encodes later. Each must give what the
dict would give through the store (store/encoded.stored_entry: Entry.from_obj, long
strings cut, images moved to the blob store): the same line, envelope, message head and
blob mark, for JSON text kept as it came (msgspec.Raw), a lone surrogate, an image, an
over-long string, and a text that reads as a blob reference.
"""

from __future__ import annotations

import base64

import msgspec
import pytest

from sidecar.importers.common import NO_USAGE, Builder, assistant_message, tool_result, usage, user_message
from sidecar.store.encoded import stored_entries, stored_entry
from sidecar.store.payload import MAX_CHARS, BlobStore

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40).decode()
STAMP = "2026-01-02T03:04:05.000Z"
IMAGE = {"type": "image", "data": PNG, "mimeType": "image/png"}
LONE = "cut \ud83d here"  # what json.loads gives for a lone surrogate escape (a tool's arguments)


def described(entry) -> tuple:
    return (
        entry.raw,
        entry.type,
        entry.id,
        entry.parent_id,
        entry.timestamp,
        entry.has_blobs,
        None if entry.head is None else msgspec.structs.astuple(entry.head),
    )


def tool_results() -> list[tuple]:
    """(text, is_error, details) of tool_result calls."""
    return [
        (msgspec.Raw(b'"as it came: \\/ \\u00e9 \\ud83d"'), False, None),
        ("plain", True, msgspec.Raw(b'{"exit":1,"kept":"blob:sha256:' + b"0" * 64 + b'"}')),
        (LONE, False, {"exit": 0}),
        ([{"type": "text", "text": "see"}, IMAGE], False, None),
        ("x" * (MAX_CHARS + 10), False, None),
        ({"not": "a string"}, False, None),
        (12.5, False, None),
    ]


def user_contents() -> list:
    return ["hi", LONE, [{"type": "text", "text": "look"}, IMAGE], []]


def kept_data() -> list:
    return [msgspec.Raw(b'{"type":"cost-state","n":[1,2.5,null]}'), {"note": LONE}, {"big": "y" * (MAX_CHARS + 1)}]


def assistants() -> list[tuple]:
    """(blocks, usage given, stop) of assistant messages."""
    call = {"type": "toolCall", "id": "c1", "name": "exec", "arguments": {"cmd": LONE, "n": 1.5}}
    return [
        ([{"type": "thinking", "thinking": "hm", "thinkingSignature": "sig"}, call], None, "toolUse"),
        ([{"type": "text", "text": "done \u2028 </script>"}], usage(1, 2, 3, 4), "stop"),
        ([], None, "length"),
        ([{"type": "text", "text": "z" * (MAX_CHARS + 5)}], None, "stop"),
    ]


def both() -> tuple[list, list]:
    """The same entries written both ways: (made as lines, their dicts)."""
    made, dicts = Builder(), Builder()
    parent_made = parent_dict = None
    for index, (text, is_error, details) in enumerate(tool_results()):
        key = f"t{index}"
        parent_made = made.tool_result(key, parent_made, STAMP, "call\u00e9", "exec", text, 1700, is_error, details)
        parent_dict = dicts.message(
            key, parent_dict, STAMP, tool_result("call\u00e9", "exec", text, 1700, is_error, details)
        )
    for index, content in enumerate(user_contents()):
        parent_made = made.user(f"u{index}", parent_made, STAMP, content, 1800)
        parent_dict = dicts.message(f"u{index}", parent_dict, STAMP, user_message(content, 1800))
    for index, data in enumerate(kept_data()):
        parent_made = made.kept(f"k{index}", parent_made, STAMP, "claude-code.cost-state", data)
        parent_dict = dicts.custom(f"k{index}", parent_dict, STAMP, "claude-code.cost-state", data)
    for index, (blocks, use, stop) in enumerate(assistants()):
        usage_text = NO_USAGE if use is None else msgspec.Raw(msgspec.json.encode(use))
        message = made.assistant(f"a{index}", parent_made, STAMP, 1900, "api", "prov", "model\u00e9", usage_text, stop)
        for block in blocks:
            message.add(block)
        parent_made = message.id
        parent_dict = dicts.message(
            f"a{index}",
            parent_dict,
            STAMP,
            assistant_message(list(blocks), 1900, "api", "prov", "model\u00e9", use, stop),
        )
    made.finish()
    return made.entries, dicts.entries


@pytest.mark.parametrize("with_blobs", [False, True])
def test_made_lines_are_the_store_entries_of_their_dicts(tmp_path, with_blobs):
    made, dicts = both()
    assert len(made) == len(dicts) == 18
    one = BlobStore(tmp_path / "one") if with_blobs else None
    each = BlobStore(tmp_path / "each") if with_blobs else None
    got = [described(e) for e in stored_entries(made, one)]
    assert got == [described(stored_entry(obj, each)) for obj in dicts]
    lines = [line for line, *_ in got]
    assert b'"as it came: \\/ \\u00e9 \\ud83d"' in lines[0]  # the source's JSON text, as it came
    assert lines[2].count(b"\\ud83d") == 1 and lines[8].count(b"\\ud83d") == 1  # JSON.stringify's escape
    assert b"too long to store" in lines[4] and b"too long to store" in lines[17]  # cut as append cuts
    assert got[1][5] is True  # text that reads as a blob reference is marked, as a file's line would be
    image_moved = b"blob:sha256:" in lines[3] and PNG.encode() not in lines[3]
    assert image_moved is with_blobs and (b"blob:sha256:" in lines[9]) is with_blobs
    heads = [head for *_, head in got]
    assert heads[0] == ("toolResult", msgspec.UNSET, msgspec.UNSET) and heads[7] == (
        "user",
        msgspec.UNSET,
        msgspec.UNSET,
    )
    assert heads[14] == ("assistant", "prov", "model\u00e9") and heads[11] is None


def test_a_message_removed_before_it_is_written_is_not_written():
    """Codex's compaction takes back the assistant message that was its summary: finish writes what is left."""
    made = Builder()
    first = made.user("u", None, STAMP, "go", 1)
    message = made.assistant("a", first, STAMP, 2, "api", "prov", "model", NO_USAGE, "stop")
    message.add({"type": "text", "text": "the summary"})
    assert message.blocks() == [{"type": "text", "text": "the summary"}]
    made.entries.remove(message)
    del made.by_id[message.id]
    made.finish()
    assert [e.id for e in made.entries] == [first]
