"""Size rules: long strings cut with a notice, images moved to the content-addressed blob store."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path

import pytest
from session_builders import append, assistant, context, msg, new_session, read_lines, service, user

from sidecar import wire
from sidecar.errors import StorageError
from sidecar.store.payload import BLOB_PREFIX, MAX_CHARS, TRUNCATION_NOTICE


def tool_result(text: str, **extra) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3,
        **extra,
    }


def image_message(data: str, role: str = "user") -> dict:
    return {
        "role": role,
        "content": [{"type": "text", "text": "look"}, {"type": "image", "data": data, "mimeType": "image/png"}],
        "timestamp": 1,
    }


def blob_dir(root: Path) -> Path:
    """Where oh-my-pi's compatibility stores images: the agent folder's blobs/ (the root's parent)."""
    return root.parent / "blobs"


def persisted(svc) -> str:
    sid = new_session(svc)
    append(svc, sid, msg(user()), msg(assistant()))
    return sid


def test_a_string_over_the_limit_is_cut_with_a_notice_on_disk_and_in_the_context(sessions_root):
    svc = service(sessions_root)
    sid = persisted(svc)
    text = "0123456789\n" * 60_000  # 660,000 characters
    entry = msg(tool_result(text))
    sent = copy.deepcopy(entry)
    append(svc, sid, entry)
    assert entry == sent  # the caller's objects are not changed
    stored = read_lines(svc.session(sid).path)[-1]["message"]["content"][0]["text"]
    assert len(stored) == MAX_CHARS and stored.endswith(TRUNCATION_NOTICE)
    assert text.startswith(stored[: -len(TRUNCATION_NOTICE)])
    shown = context(svc, sid).messages[-1]["content"][0]["text"]
    assert shown == stored
    svc.close_all()
    assert context(service(sessions_root), sid).messages[-1]["content"][0]["text"] == stored


def test_a_string_at_the_limit_is_kept_whole(sessions_root):
    svc = service(sessions_root)
    sid = persisted(svc)
    text = "y" * MAX_CHARS
    append(svc, sid, msg(tool_result(text)))
    assert read_lines(svc.session(sid).path)[-1]["message"]["content"][0]["text"] == text


def test_line_count_is_counted_again_when_its_content_was_cut(sessions_root):
    svc = service(sessions_root)
    sid = persisted(svc)
    lines = 100_000
    text = "\n".join(f"line {n}" for n in range(lines))  # ~690,000 characters
    details = {"content": text, "lineCount": lines, "path": "big.log"}
    append(svc, sid, {"type": "custom", "customType": "read", "data": details})
    stored = read_lines(svc.session(sid).path)[-1]["data"]
    assert len(stored["content"]) == MAX_CHARS
    assert stored["lineCount"] == stored["content"].count("\n") + 1 < lines
    assert stored["path"] == "big.log"
    # lineCount beside content that was not cut stays as the client sent it.
    append(svc, sid, {"type": "custom", "customType": "read", "data": {"content": "a\nb", "lineCount": 7}})
    assert read_lines(svc.session(sid).path)[-1]["data"]["lineCount"] == 7


def test_under_pi_compat_an_image_stays_inline_and_is_never_cut(sessions_root):
    svc = service(sessions_root)  # our own root: pi's compatibility
    sid = persisted(svc)
    small = base64.b64encode(os.urandom(3000)).decode()
    huge = base64.b64encode(os.urandom(MAX_CHARS)).decode()  # longer than the string cut
    append(svc, sid, msg(image_message(small)), msg(image_message(huge)))
    append(svc, sid, msg(user("x" * (MAX_CHARS + 10))))
    lines = read_lines(svc.session(sid).path)
    assert lines[-3]["message"]["content"][1]["data"] == small
    assert lines[-2]["message"]["content"][1]["data"] == huge
    assert lines[-1]["message"]["content"].endswith(TRUNCATION_NOTICE)  # text is still cut
    assert not blob_dir(sessions_root).exists() and not (sessions_root / ".blobs").exists()
    assert context(svc, sid).messages[-2]["content"][1]["data"] == huge


def test_an_image_goes_to_the_blob_store_and_comes_back_as_base64(sessions_root):
    svc = service(sessions_root, compat="omp")
    sid = persisted(svc)
    raw = os.urandom(3000)
    data = base64.b64encode(raw).decode()
    digest = hashlib.sha256(raw).hexdigest()
    [first] = append(svc, sid, msg(image_message(data)))
    append(
        svc,
        sid,
        {
            "type": "custom_message",
            "customType": "shot",
            "display": True,
            "content": [{"type": "image", "data": data, "mimeType": "image/png"}],
        },
    )
    path = svc.session(sid).path
    on_disk = path.read_text()
    assert data not in on_disk
    records = read_lines(path)
    assert records[-2]["message"]["content"][1]["data"] == BLOB_PREFIX + digest
    assert records[-1]["content"][0]["data"] == BLOB_PREFIX + digest
    blob = blob_dir(sessions_root) / digest
    assert blob.read_bytes() == raw  # one blob for both: content-addressed
    assert stat.S_IMODE(blob.stat().st_mode) == 0o600
    assert stat.S_IMODE(blob.parent.stat().st_mode) == 0o700
    assert sorted(os.listdir(blob.parent)) == [digest]  # no temp file left
    for reopen in (False, True):
        svc_now = service_after_close(svc, sessions_root) if reopen else svc
        messages = context(svc_now, sid).messages
        assert messages[-2]["content"][1]["data"] == data
        assert messages[-1]["content"][0]["data"] == data
        assert context(svc_now, sid, fmt="llm").messages[-2]["content"][1]["data"] == data
        got = svc_now.get_entries(wire.GetEntriesParams(sessionId=sid, ids=[first])).entries
        assert got[0]["message"]["content"][1]["data"] == data
    assert svc.list(wire.ListParams(all=True)).sessions[0].sessionId == sid  # pi skips dot folders, and so do we


def service_after_close(svc, root: Path):
    svc.close_all()
    return service(root, compat="omp")


@pytest.mark.parametrize(
    "data",
    [
        base64.b64encode(b"x" * 700).decode(),  # under 1024 characters of base64
        "!" * 2000,  # not base64
        base64.encodebytes(os.urandom(1500)).decode(),  # base64 with line breaks: would not come back the same
    ],
)
def test_small_or_unusual_image_data_stays_in_the_line(sessions_root, data):
    svc = service(sessions_root, compat="omp")
    sid = persisted(svc)
    append(svc, sid, msg(image_message(data)))
    assert read_lines(svc.session(sid).path)[-1]["message"]["content"][1]["data"] == data
    assert not (blob_dir(sessions_root)).exists()


def test_a_blob_that_cannot_be_written_appends_nothing(sessions_root, monkeypatch):
    svc = service(sessions_root, compat="omp")
    sid = persisted(svc)
    path = svc.session(sid).path
    before = path.read_bytes()
    (blob_dir(sessions_root)).write_text("not a folder")  # the store cannot be made
    data = base64.b64encode(os.urandom(2000)).decode()
    with pytest.raises(StorageError) as failed:
        append(svc, sid, msg(image_message(data)))
    assert failed.value.data["latched"] is False
    assert path.read_bytes() == before and len(svc.session(sid).tree.entries) == 2
    (blob_dir(sessions_root)).unlink()
    append(svc, sid, msg(image_message(data)))
    assert len(read_lines(path)) == 5  # the title line, the header, three entries


def test_a_missing_blob_leaves_the_reference(sessions_root):
    svc = service(sessions_root, compat="omp")
    sid = persisted(svc)
    raw = os.urandom(2000)
    append(svc, sid, msg(image_message(base64.b64encode(raw).decode())))
    (blob_dir(sessions_root) / hashlib.sha256(raw).hexdigest()).unlink()
    shown = context(svc, sid).messages[-1]["content"][1]["data"]
    assert shown == BLOB_PREFIX + hashlib.sha256(raw).hexdigest()
    assert json.dumps(shown)  # still a plain string the client can show or drop


def test_a_blob_store_or_blob_that_is_a_symlink_out_of_the_root_is_neither_written_nor_read(sessions_root, tmp_path):
    from sidecar.errors import PathOutsideRoot

    svc = service(sessions_root, compat="omp")
    sid = persisted(svc)
    raw = os.urandom(2000)
    digest = hashlib.sha256(raw).hexdigest()
    append(svc, sid, msg(image_message(base64.b64encode(raw).decode())))
    secret = tmp_path / "secret"
    secret.write_bytes(b"not for the client")
    blob = blob_dir(sessions_root) / digest
    blob.unlink()
    blob.symlink_to(secret)  # a blob planted as a link to a file outside
    assert context(svc, sid).messages[-1]["content"][1]["data"] == BLOB_PREFIX + digest
    outside = Path(tempfile.mkdtemp(prefix="elsewhere-"))  # outside the agent folder (tmp_path)
    blob.unlink()
    (blob_dir(sessions_root)).rmdir()
    (blob_dir(sessions_root)).symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathOutsideRoot):
        append(svc, sid, msg(image_message(base64.b64encode(os.urandom(2000)).decode())))
    assert list(outside.iterdir()) == [] and len(svc.session(sid).tree.entries) == 3


def test_a_mapped_file_finds_its_blob_references_when_it_reads_them(sessions_root, monkeypatch):
    """A large (mapped) file's parse does not search its lines for blob references (a fifth of a
    gigabyte's parse): an entry finds its own when its content is read, so the context, getEntries and
    a reopen from the tree cache written after such a parse still give the images back."""
    from sidecar.format import jsonl
    from sidecar.store.files import treecache

    monkeypatch.setattr(jsonl, "MAP_THRESHOLD", 0)
    monkeypatch.setattr(treecache, "MIN_CACHED_BYTES", 0)
    svc = service(sessions_root, compat="omp")
    sid = persisted(svc)
    early_data, late_data = (base64.b64encode(os.urandom(3000)).decode() for _ in range(2))
    [early] = append(svc, sid, msg(image_message(early_data)))
    [kept_from, _] = append(svc, sid, msg(user("after the image")), msg(assistant()))
    append(
        svc,
        sid,
        {"type": "compaction", "summary": "an image was shown", "firstKeptEntryId": kept_from, "tokensBefore": 10},
    )
    [late] = append(svc, sid, msg(image_message(late_data)))
    path = svc.session(sid).path
    svc.close_all()
    treecache.cache_path(sessions_root, path).unlink()

    for how in ("parsed", "from the tree cache"):
        svc = service(sessions_root, compat="omp")
        svc.open(wire.OpenParams(sessionId=sid))
        session = svc.session(sid)
        assert session.tree_loaded == (how == "parsed")
        messages = context(svc, sid).messages
        assert messages[-1]["content"][1]["data"] == late_data
        assert all("blob:" not in json.dumps(m) for m in messages)
        if how == "parsed":  # the early image's line was not read for the context: not searched
            assert session.get(early).has_blobs is None and session.get(late).has_blobs is True
        got = svc.get_entries(wire.GetEntriesParams(sessionId=sid, ids=[early, late])).entries
        assert [e["message"]["content"][1]["data"] for e in got] == [early_data, late_data]
        svc.close_all()  # the cache it writes keeps what is known and what was not looked at
        assert treecache.cache_path(sessions_root, path).is_file()
