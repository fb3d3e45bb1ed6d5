"""session/export through a real sidecar: Markdown, JSON and HTML of a session with branches,
labels, a name, custom entries, a compaction, tool calls and secrets."""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import rich
from .conftest import export

SECRETS = (rich.AWS_KEY, rich.GH_TOKEN, "Sup3rS3cretPw")


def test_markdown_is_a_readable_conversation_with_everything_in_place(sidecar, rich_session):
    sid, ids = rich_session
    result = export(sidecar, sid, format="markdown", leafId=ids["main_leaf"])
    text = result["text"]
    assert text.startswith("# Login bug hunt\n")
    # The whole history, also what the compaction folded away.
    assert "The login page rejects valid users" in text and "Let me read the configuration first." in text
    assert "## Compaction" in text and f"before entry `{ids['found']}` were folded" in text
    assert "48211 tokens before" in text
    assert "label: *bug report*" in text
    assert "*Model changed to `openai/gpt-5`*" in text
    assert "### Custom data: `review-notes`" in text
    assert "**Tool call `bash`** (`call_env`)" in text and '"command": "cat .env"' in text
    # The result sits under its call, once.
    assert text.count("LOG_LEVEL=debug") == 1
    assert text.index("**Tool call `bash`**") < text.index("LOG_LEVEL=debug")
    assert "*[image: image/png, 0 KiB]*" in text
    assert "1200 in / 340 out tokens" in text
    # The other branch is not on this path.
    assert "rotating the signing key" not in text
    for secret in SECRETS:
        assert secret not in text
    assert "[REDACTED:aws-access-key:1]" in text and text.count("[REDACTED:aws-access-key:1]") == 2
    kinds = {k["kind"]: k["count"] for k in result["redaction"]["kinds"]}
    assert kinds["aws-access-key"] == 2 and kinds["github-token"] == 2 and kinds["url-password"] == 1
    assert result["entries"] == 12  # ten appended, the label and the name entries


def test_whole_tree_markdown_marks_each_branch(sidecar, rich_session):
    sid, ids = rich_session
    text = export(sidecar, sid, format="markdown", all=True)["text"]
    assert "rotating the signing key" in text and "Fix the cookie then." in text
    assert f"**Branch 1 of 2** from `{ids['found']}`" in text and f"**Branch 2 of 2** from `{ids['found']}`" in text
    assert "## Branch summary" in text and "Tried fixing the cookie flags" in text


def test_json_shape_keeps_every_parent_and_matches_the_schema(sidecar, rich_session):
    sid, ids = rich_session
    doc = json.loads(export(sidecar, sid, format="json", all=True)["text"])
    assert doc["format"] == "session-sidecar/export" and doc["version"] == 1 and doc["scope"] == "tree"
    assert doc["session"]["name"] == "Login bug hunt"
    by_id = {e["id"]: e for e in doc["entries"]}
    tree = sidecar.call("session/getTree", sessionId=sid)
    assert set(by_id) == {n["id"] for n in tree["nodes"]}
    for entry in doc["entries"]:
        assert entry["parentId"] is None or entry["parentId"] in by_id
    assert by_id[ids["ask"]]["label"] == "bug report" and by_id[ids["ask"]]["role"] == "user"
    assert by_id[ids["ask"]]["content"] == [
        {"type": "text", "text": "The login page rejects valid users. Please find out why."}
    ]
    assert (
        by_id[ids["compaction"]]["kind"] == "compaction"
        and by_id[ids["compaction"]]["firstKeptEntryId"] == ids["found"]
    )
    assert by_id[ids["summary"]]["fromId"] == ids["main_leaf"]
    assert by_id[ids["custom"]]["data"]["token"] == "[REDACTED:github-token:1]"
    assert by_id[ids["model"]]["model"] == "gpt-5" and by_id[ids["model"]]["provider"] == "openai"
    assert by_id[ids["look"]]["usage"]["input"] == 1200 and by_id[ids["look"]]["model"] == "claude-sonnet-4"
    env = by_id[ids["env"]]
    assert env["toolCallId"] == "call_env" and env["toolName"] == "bash"
    assert "[REDACTED:aws-access-key:1]" in env["content"][0]["text"]
    assert doc["redaction"]["applied"] is True and doc["redaction"]["total"] >= 5


def test_path_export_follows_the_leaf_asked_for(sidecar, rich_session):
    sid, ids = rich_session
    doc = json.loads(export(sidecar, sid, format="json", leafId=ids["other_leaf"])["text"])
    assert doc["scope"] == "path" and doc["leafId"] == ids["other_leaf"]
    listed = [e["id"] for e in doc["entries"]]
    assert listed[0] == ids["ask"] and listed[-1] == ids["other_leaf"]
    assert ids["summary"] in listed and ids["compaction"] not in listed


def test_redact_false_keeps_the_values(sidecar, rich_session):
    sid, _ = rich_session
    result = export(sidecar, sid, format="markdown", redact=False, all=True)
    assert rich.AWS_KEY in result["text"] and result["redaction"] == {"applied": False}


def test_html_is_self_contained_and_embeds_the_tree(sidecar, rich_session):
    sid, ids = rich_session
    html = export(sidecar, sid, format="html")["text"]
    assert html.startswith("<!DOCTYPE html>")
    for outside in ("http://", "https://", 'src="/', "<link"):
        assert outside not in html.replace("http://localhost:3000/login", "").replace("https://json-schema", "")
    assert "rotating the signing key" in html and "Fix the cookie then." in html  # every branch
    for secret in SECRETS:
        assert secret not in html


def test_write_to_a_path(sidecar, rich_session, tmp_path: Path):
    sid, _ = rich_session
    target = tmp_path / "out" / "session.md"
    target.parent.mkdir()
    result = export(sidecar, sid, format="markdown", path=str(target))
    assert result["path"] == str(target) and "text" not in result
    assert target.read_text().startswith("# Login bug hunt")
    assert result["bytes"] == len(target.read_bytes())
    assert os.stat(target).st_mode & 0o777 == 0o600


def test_bad_requests_get_clear_errors(sidecar, rich_session, tmp_path: Path):
    sid, _ = rich_session
    error = sidecar.error("session/export", sessionId=sid, format="pdf")
    assert error["code"] == -32602 and "format" in error["message"]
    error = sidecar.error("session/export", sessionId=sid, format="json", leafId="nope")
    assert error["code"] == -33003 and "nope" in error["message"]
    error = sidecar.error("session/export", sessionId=sid, format="json", path="relative.json")
    assert error["code"] == -32602 and "absolute" in error["message"]
    error = sidecar.error("session/export", sessionId=sid, format="json", path=str(tmp_path / "missing" / "x.json"))
    assert error["code"] == -33050 and error["data"]["kind"] == "exportWriteFailed" and "missing" in error["message"]
    assert not (tmp_path / "missing").exists()


def test_the_documented_schema_is_generated_from_the_shape_and_fits_an_export(sidecar, rich_session):
    """protocol/export.schema.json is ``python -m sidecar.export.shape``'s output, and an export
    decodes as the shape it describes."""
    import msgspec

    from sidecar.export.shape import SCHEMA_PATH, ExportDocument, schema_text

    assert SCHEMA_PATH.read_text() == schema_text(), "run: python -m sidecar.export.shape"
    sid, _ = rich_session
    text = export(sidecar, sid, format="json", all=True)["text"]
    decoded = msgspec.json.decode(text, type=ExportDocument)
    assert msgspec.json.encode(decoded) + b"\n" == text.encode()  # nothing outside the shape
