"""The spec store's pieces on their own: ids, records, reading, the codec, the cut, the prompts."""

from __future__ import annotations

import random
import re

import msgspec
import pytest

from sidecar.errors import InvalidSessionId
from sidecar.store.spec import prompts
from sidecar.store.spec.codec import EntryBuilder, entry_id, translate
from sidecar.store.spec.compaction import find_cut
from sidecar.store.spec.file import parse_records
from sidecar.store.spec.layout import ULID_PATTERN, check_ulid, new_ulid
from sidecar.store.spec.records import CompactionRecord, MessageRecord, TextBlock, decode_record, encode_record

SPEC_EXAMPLE = b"""{"recordType":"message","schemaVersion":1,"seq":1,"role":"user","content":[{"type":"text","text":"What pods are running?"}],"timestamp":"2025-02-11T10:00:00Z"}
{"recordType":"message","schemaVersion":1,"seq":2,"role":"assistant","content":[{"type":"text","text":"Let me check."},{"type":"toolCall","id":"tc_1","name":"bash","arguments":{"command":"kubectl get pods"}}],"timestamp":"2025-02-11T10:00:01Z"}
{"recordType":"message","schemaVersion":1,"seq":3,"role":"toolResult","content":[{"type":"text","text":"NAME   READY   STATUS\\nnginx  1/1     Running"}],"toolCallId":"tc_1","isError":false,"timestamp":"2025-02-11T10:00:02Z"}
{"recordType":"message","schemaVersion":1,"seq":4,"role":"assistant","content":[{"type":"text","text":"There is one pod running: nginx, with status Running."}],"timestamp":"2025-02-11T10:00:03Z"}
"""


def test_ulids_are_valid_unique_and_sort_by_time():
    made = [new_ulid(now_ms=1_700_000_000_000 + i) for i in range(2000)]
    assert all(ULID_PATTERN.match(u) for u in made) and len(set(made)) == len(made)
    assert made == sorted(made)
    assert new_ulid(now_ms=0).startswith("0000000000")


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "x",
        "../01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "01ARZ3NDEKTSV4RRFFQ69G5FAV ",
        "01arz3ndektsv4rrffq69g5fav",
        "01ARZ3NDEKTSV4RRFFQ69G5FAL",
        "01ARZ3NDEKTSV4RRFFQ69G5FAO",
        "01ARZ3NDEKTSV4RRFFQ69G5FAU",
        "01ARZ3NDEKTSV4RRFFQ69G5FAI",
        None,
        7,
    ],
)
def test_anything_but_a_ulid_is_refused(bad):
    with pytest.raises(InvalidSessionId):
        check_ulid(bad)


def test_the_spec_example_reads_and_writes_back_byte_for_byte():
    read = parse_records(SPEC_EXAMPLE)
    assert read.damaged_lines == [] and read.torn_tail_at is None and len(read.records) == 4
    assert b"".join(encode_record(r) + b"\n" for r in read.records) == SPEC_EXAMPLE


def test_reading_skips_damaged_lines_and_ignores_a_torn_tail():
    lines = SPEC_EXAMPLE.splitlines(keepends=True)
    data = (
        lines[0]
        + b"[1,2]\n"
        + b'{"recordType":"message","schemaVersion":2,"seq":9}\n'
        + lines[1]
        + b'{"recordType":"mes'
    )
    read = parse_records(data)
    assert [r.seq for r in read.records] == [1, 2] and read.damaged_lines == [2, 3]
    assert read.torn_tail_at == len(data) - len(b'{"recordType":"mes')
    with pytest.raises(msgspec.ValidationError):
        decode_record(
            b'{"recordType":"message","schemaVersion":1,"seq":1,"role":"user","content":"bare","timestamp":"t"}'
        )


def test_records_become_a_chain_of_entries_and_back():
    builder = EntryBuilder()
    objs = [builder.add(r) for r in parse_records(SPEC_EXAMPLE).records]
    assert [o["id"] for o in objs] == [entry_id(i) for i in range(1, 5)]
    assert [o["parentId"] for o in objs] == [None, "00000001", "00000002", "00000003"]
    assert objs[2]["message"]["toolName"] == "bash" and objs[1]["message"]["stopReason"] == "toolUse"
    again = [translate(o, i + 1).record for i, o in enumerate(objs)]
    assert again == parse_records(SPEC_EXAMPLE).records
    compaction = CompactionRecord(
        seq=5,
        firstKeptSeq=4,
        summary="s",
        tokensBefore=9,
        readFiles=["a"],
        modifiedFiles=["b"],
        timestamp="2025-02-11T10:00:04Z",
    )
    obj = builder.add(compaction)
    assert obj["firstKeptEntryId"] == "00000004" and obj["details"] == {"readFiles": ["a"], "modifiedFiles": ["b"]}
    assert translate(obj, 5, kept_seq=4).record == compaction


@pytest.mark.parametrize(
    "entry, lost",
    [
        ({"type": "label", "targetId": "x", "label": "l"}, "a label"),
        ({"type": "branch_summary", "fromId": "x", "summary": "s"}, "a branch summary"),
        ({"type": "custom", "customType": "c"}, "a custom entry"),
        ({"type": "message", "message": {"role": "bashExecution", "command": "ls"}}, "a bashExecution message"),
        (
            {"type": "message", "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]}},
            "a thinking content block",
        ),
    ],
)
def test_what_has_no_record_is_named(entry, lost):
    translation = translate({**entry, "timestamp": "2025-01-01T00:00:00Z"}, 1)
    assert translation.lost and translation.lost[0].startswith(lost)


def test_names_and_models_go_to_metadata_not_records():
    named = translate({"type": "session_info", "name": " pods ", "timestamp": "t"}, 1)
    assert named.record is None and named.name == "pods" and not named.lost
    model = translate({"type": "model_change", "provider": "p", "modelId": "m", "timestamp": "t"}, 1)
    assert model.record is None and model.model == "m"
    reply = translate(
        {
            "type": "message",
            "timestamp": "t",
            "message": {
                "role": "assistant",
                "content": "hi",
                "model": "m2",
                "usage": {"input": 1},
                "stopReason": "stop",
            },
        },
        3,
    )
    assert isinstance(reply.record, MessageRecord) and reply.record.content == [TextBlock(text="hi")]
    assert reply.model == "m2" and reply.usage == {"input": 1} and not reply.lost
    assert reply.dropped == [
        "assistant message field 'model'",
        "assistant message field 'usage'",
        "assistant message field 'stopReason'",
    ]


def _random_conversation(rng: random.Random) -> list[dict]:
    messages = []
    for turn in range(rng.randint(1, 8)):
        messages.append({"role": "user", "content": [{"type": "text", "text": "u" * rng.randint(1, 200)}]})
        for call in range(rng.randint(0, 3)):
            calls = [
                {
                    "type": "toolCall",
                    "id": f"{turn}-{call}-{k}",
                    "name": "bash",
                    "arguments": {"c": "x" * rng.randint(0, 50)},
                }
                for k in range(rng.randint(1, 3))
            ]
            messages.append({"role": "assistant", "content": calls})
            for block in calls:
                messages.append(
                    {
                        "role": "toolResult",
                        "toolCallId": block["id"],
                        "content": [{"type": "text", "text": "r" * rng.randint(0, 400)}],
                    }
                )
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "a" * rng.randint(1, 200)}]})
    return messages


def test_the_cut_never_separates_a_call_from_its_result():
    rng = random.Random(7)
    cuts = 0
    for _ in range(500):
        messages = _random_conversation(rng)
        cut = find_cut(messages, rng.randint(1, 400))
        if cut is None:
            continue
        cuts += 1
        assert 0 < cut < len(messages) and messages[cut]["role"] in ("user", "assistant")
        kept_calls = {
            b["id"] for m in messages[cut:] if m["role"] == "assistant" for b in m["content"] if b["type"] == "toolCall"
        }
        assert {m["toolCallId"] for m in messages[cut:] if m["role"] == "toolResult"} <= kept_calls
    assert cuts > 300


def test_flat_serialization_and_prompts():
    messages = [msgspec.to_builtins(r) for r in parse_records(SPEC_EXAMPLE).records]
    assert prompts.serialize(messages) == (
        "[User]: What pods are running?\n[Assistant]: Let me check.\n"
        '[Assistant tool calls]: bash(command="kubectl get pods")\n'
        "[Tool result]: NAME   READY   STATUS\nnginx  1/1     Running\n"
        "[Assistant]: There is one pod running: nginx, with status Running."
    )
    first = prompts.build_prompt("[User]: hi", None)
    assert first.startswith("[User]: hi\n\nThe messages above are a conversation to summarize.")
    update = prompts.build_prompt("[User]: hi", "## Goal\n- g")
    assert "<previous-summary>\n## Goal\n- g\n</previous-summary>\n\nThe messages above are NEW" in update
    for section in prompts.SECTIONS:
        assert f"## {section}" in first and f"## {section}" in update
    tagged = "## Goal\n- g\n\n" + prompts.file_tags(["a.ts"], ["b.ts"])
    assert tagged.endswith("<read-files>\na.ts\n</read-files>\n\n<modified-files>\nb.ts\n</modified-files>")
    assert prompts.strip_file_tags(tagged) == "## Goal\n- g"
    assert not re.search(r"\{\"", prompts.serialize(messages).replace('bash(command="kubectl get pods")', ""))


def test_the_spec_store_is_a_session_store(tmp_path):
    from sidecar.config import Settings, StoreSettings
    from sidecar.service import SessionService
    from sidecar.store.base import SessionStore
    from sidecar.store.spec.store import SpecStore

    service = SessionService(tmp_path, Settings(store=StoreSettings(format="spec")))
    assert isinstance(service.store, SpecStore) and isinstance(service.store, SessionStore)
    assert service.settings.store.format == "spec"
