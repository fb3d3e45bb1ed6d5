"""Redaction: a corpus of 190 planted secrets of 38 kinds in messages, tool arguments, tool outputs,
thinking and custom entries leaks nothing from any export format; the same secret gets the same
placeholder; ordinary code and logs (this repository, pi's own session fixtures) are left alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sidecar.export.redact import Redactor
from sidecar.export.redact.rules import has_long_run, line_may_hold_secret

from .conftest import export
from .secrets_corpus import MAKERS, PLACES, entries, every_form, leaks, ordinary_lines, plant

REPO = Path(__file__).resolve().parents[2]


def test_the_corpus_is_as_large_as_promised():
    planted = plant()
    assert len(planted) >= 150 and len(MAKERS) >= 20
    assert {place for place, _ in planted} == set(PLACES)
    for place in PLACES:  # every kind lands in more than one place
        assert len({s.kind for p, s in planted if p == place}) >= 20


@pytest.mark.parametrize("fmt", ["json", "markdown", "html"])
def test_no_planted_secret_leaks_from_any_format(sidecar, tmp_path: Path, fmt: str):
    planted = plant()
    sid = sidecar.call("session/create", cwd=str(tmp_path))["sessionId"]
    batch = entries(planted)
    for start in range(0, len(batch), 50):
        sidecar.call("session/append", sessionId=sid, entries=batch[start : start + 50])
    result = export(sidecar, sid, format=fmt, all=True)
    text = result["text"]
    # Markdown shortens nothing here (every output is short), so every secret was in the text to leak.
    assert [s.kind for s in leaks(planted, text)] == []
    assert "While debugging step 189" in text  # the surroundings stay
    report = result["redaction"]
    assert report["applied"] and report["total"] >= len(planted)
    for kind in report["kinds"]:  # kinds and counts only: no value is reported
        assert set(kind) == {"kind", "count"}
    assert not any(s.core[:12] in json.dumps(report) for _, s in planted)
    unredacted = export(sidecar, sid, format=fmt, all=True, redact=False)["text"]
    assert len(leaks(planted, unredacted)) == len(planted)  # the check itself would see a leak


def test_same_secret_same_placeholder_different_secrets_different_ones():
    redactor = Redactor()
    key_a, key_b = "AKIAQ3EGRTWX5ZKLM7PB", "AKIAZZ2GRTWX5ZKLM7PC"
    first = redactor.value({"content": f"use {key_a}", "nested": [{"text": f"{key_b} and {key_a}"}]})
    assert first == {
        "content": "use [REDACTED:aws-access-key:1]",
        "nested": [{"text": "[REDACTED:aws-access-key:2] and [REDACTED:aws-access-key:1]"}],
    }
    assert redactor.text(f"again {key_b}") == "again [REDACTED:aws-access-key:2]"
    assert redactor.report() == {"aws-access-key": 4}


def test_a_value_nested_as_deep_as_the_protocol_reads_is_redacted_in_document_order():
    """The walk keeps a stack of its own: 950 levels (the protocol reads about 980) ran out of Python's
    stack as an internal error; the placeholders still number secrets in the order they appear."""
    key_a, key_b = "AKIAQ3EGRTWX5ZKLM7PB", "AKIAZZ2GRTWX5ZKLM7PC"
    deep: object = [f"{key_b} inside", {"k": key_a}]
    for _ in range(950):
        deep = [deep]
    out = Redactor().value({"first": f"{key_a} outside", "data": deep, "last": key_b})
    assert out["first"] == "[REDACTED:aws-access-key:1] outside" and out["last"] == "[REDACTED:aws-access-key:2]"
    inner = out["data"]
    for _ in range(950):
        inner = inner[0]
    assert inner == ["[REDACTED:aws-access-key:2] inside", {"k": "[REDACTED:aws-access-key:1]"}]


def test_structure_and_images_are_never_touched():
    redactor = Redactor()
    token = "ghp_R8k2LmQ9vX4tZ7yN1pW3sA6dF0gH5jK2cB9e"
    entry = {
        "type": "message",
        "id": token,
        "parentId": token,
        "timestamp": "t",
        "message": {
            "role": "toolResult",
            "toolCallId": token,
            "content": [{"type": "image", "data": token, "mimeType": "image/png"}, {"type": "text", "text": token}],
        },
    }
    out = redactor.value(entry)
    assert out["id"] == out["parentId"] == out["message"]["toolCallId"] == token
    assert out["message"]["content"][0]["data"] == token
    assert out["message"]["content"][1]["text"] == "[REDACTED:github-token:1]"


def test_the_gates_never_skip_text_a_row_matches():
    """The quick gates (a 12-character run or a name's stem in a text; the same in a JSON line with its
    structural fields passed over) say yes for every planted form, in text and in a session line,
    whatever surrounds it."""
    for secret in every_form(5):
        for text in (secret.text, f"x {secret.text} y", f'"{secret.text}"'):
            assert Redactor().text(text) != text, secret.kind
            line = json.dumps(
                {
                    "type": "message",
                    "id": "a1",
                    "parentId": None,
                    "timestamp": "2025-01-01T00:00:00Z",
                    "message": {"role": "user", "content": text},
                },
                separators=(",", ":"),
            ).encode()
            assert line_may_hold_secret(line), secret.kind
        if secret.name:  # held under its name as a key/value pair, the value alone
            line = json.dumps(
                {
                    "type": "custom",
                    "id": "a1",
                    "parentId": None,
                    "timestamp": "2025-01-01T00:00:00Z",
                    "data": {secret.name: secret.value},
                },
                separators=(",", ":"),
            ).encode()
            assert line_may_hold_secret(line), secret.kind
    assert not has_long_run("the a session tree leaf branch file line")
    assert not line_may_hold_secret(
        b'{"type":"message","id":"00000001","parentId":null,"timestamp":'
        b'"2025-01-01T00:00:07.007Z","message":{"role":"user","content":"all tests green"}}'
    )


def test_the_entry_gate_never_skips_text_a_row_matches():
    """The export's gate (the entry's line: runs read one by one, keys read from the line) says yes for
    every planted form, wherever an entry holds it (an assistant's errorMessage after its tail too),
    and on a line whose writer escapes "=" as \\u003d; and no for an assistant's tool call whose only
    long run is a path."""

    def entry(message: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        obj = {
            "type": "message",
            "id": "a1",
            "parentId": None,
            "timestamp": "2025-01-01T00:00:00.000Z",
            "message": message,
        }
        return obj, json.dumps(obj, separators=(",", ":")).encode()

    def escaped(pair: tuple[dict[str, Any], bytes]) -> tuple[dict[str, Any], bytes]:
        """The same entry as a writer that escapes "=" writes its line (Gson does: \u003d)."""
        return pair[0], pair[1].replace(b"=", b"\\u003d")

    tail = {
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-20250514",
        "usage": {"input": 1, "totalTokens": 2},
        "stopReason": "toolUse",
        "timestamp": 1735689607007,
    }
    for secret in every_form(6):
        for text in (secret.text, f"x {secret.text} y", f'"{secret.text}"', json.dumps(secret.text)):
            for message in (
                {"role": "user", "content": text},
                {
                    "role": "assistant",
                    "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": text}}],
                    **tail,
                },
                {
                    "role": "toolResult",
                    "toolCallId": "c1",
                    "toolName": "bash",
                    "content": [{"type": "text", "text": text}],
                    "isError": False,
                    "timestamp": 5,
                },
                # pi writes an error after the usage, the stop reason and the last timestamp.
                {"role": "assistant", "content": [], **tail, "stopReason": "error", "errorMessage": text},
            ):
                assert line_may_hold_secret(entry(message)[1]), (secret.kind, text)
                assert line_may_hold_secret(escaped(entry(message))[1]), (secret.kind, text, "escaped")
                assert line_may_hold_secret(entry(message)[1]), (secret.kind, text)
                assert line_may_hold_secret(escaped(entry(message))[1]), (secret.kind, text, "escaped")
        if secret.name:
            obj = {
                "type": "custom",
                "id": "a1",
                "parentId": None,
                "timestamp": "2025-01-01T00:00:00Z",
                "data": {"config": {secret.name: secret.value}},
            }
            assert line_may_hold_secret(json.dumps(obj, separators=(",", ":")).encode()), secret.kind
    call = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "reading the token file now"},
            {
                "type": "toolCall",
                "id": "call1_0",
                "name": "read",
                "arguments": {"path": "src/context.py", "command": "pass the token"},
            },
        ],
        **tail,
    }
    assert not line_may_hold_secret(entry(call)[1]) and not line_may_hold_secret(entry(call)[1])
    # A key holding an escaped quote, whose words name a secret: the gate cannot read it, and says yes.
    odd = {"type": "custom", "id": "a1", "parentId": None, "timestamp": "t", "data": {'api_key"x': "Zq8r2Lx9Zq"}}
    assert line_may_hold_secret(json.dumps(odd, separators=(",", ":")).encode())
    assert Redactor().value(odd)["data"]['api_key"x'] == "[REDACTED:secret-assignment:1]"


def test_the_line_gate_passes_over_structural_fields():
    """An assistant line as pi writes it: its ids, timestamps, api, provider, model, stopReason and
    usage (whose totalTokens names a token) are no reason to walk it; its text is."""

    def line(text: str) -> bytes:
        return json.dumps(
            {
                "type": "message",
                "id": "0a1b2c3d",
                "parentId": "9f8e7d6c",
                "timestamp": "2025-01-01T00:00:07.007Z",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-20250514",
                    "usage": {
                        "input": 1200,
                        "output": 340,
                        "totalTokens": 1540,
                        "cost": {"input": 0.0036, "total": 0.0087},
                    },
                    "stopReason": "toolUse",
                    "timestamp": 1735689607007,
                },
            },
            separators=(",", ":"),
        ).encode()

    assert not line_may_hold_secret(line("Reading the file now."))
    assert line_may_hold_secret(line("set APP_KEY=d41d8cd98f00b204"))
    assert line_may_hold_secret(line("a run of 20 or more: abcdefghijklmnopqrstu"))
    assert line_may_hold_secret(line("request failed")[:-2] + b',"errorMessage":"token=d41d8cd98f00b204"}}')


def test_ordinary_code_and_logs_are_left_alone():
    lines = ordinary_lines(REPO)
    assert len(lines) > 20_000
    changed = [line for line in lines if Redactor().text(line) != line]
    rate = len(changed) / len(lines)
    print(f"false positives: {len(changed)} of {len(lines)} lines ({rate:.3%})")
    assert rate < 0.01, changed[:20]
    # Code that names secrets without holding one.
    for line in (
        'password = os.environ["DB_PASSWORD"]',
        "token: CancellationToken",
        "api_key: str | None = None",
        "secret = settings.secret",
        'headers["Authorization"] = f"Bearer {token}"',
        "const apiKey = process.env.OPENAI_API_KEY;",
        "pub work_done_token: Option<NumberOrString>,",
    ):
        assert Redactor().text(line) == line, line


def test_documentation_keys_and_placeholder_passwords_are_left_alone():
    """AWS's documentation keys say EXAMPLE; a URL's password written as a placeholder, or a plain word
    to a host that is no one's server (loopback, RFC 2606/6761 names), is no secret. A random
    password to the same hosts, and a key of the same shape without EXAMPLE, still are."""
    for line in (
        "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "postgres://app:your_password@db.internal:5432/orders",
        "redis://:<password>@cache.internal:6379/0",
        "postgresql://sidecar:wrong@127.0.0.1:5432/sidecar",
        "mysql://root:secret@localhost/app",
        "https://user:hunter@api.example.com/v1",
        "private oauthSelector: OAuthSelectorComponent | null = null;",
    ):
        assert Redactor().text(line) == line, line
    for line in (
        "export AWS_ACCESS_KEY_ID=AKIAQ3EGRTWX5ZKLM7PB",
        "postgresql://sidecar:Xk2jf9aQ1zP@127.0.0.1:5432/sidecar",
        "postgres://app:hunter@db.internal:5432/orders",
        "https://user:hunter@api.example.org.evil.io/v1",
    ):
        assert Redactor().text(line) != line, line


def test_an_open_session_exported_again_redacts_what_is_new_and_passes_over_what_was_clean(sidecar, tmp_path: Path):
    """The second export of the same open session passes over the entries the first found clean
    (sidecar/export/redact/verdicts.py): its text is the first's, and a secret appended between the
    two, in a new entry, is redacted all the same, as is one in an entry that was never clean."""
    sid = sidecar.call("session/create", cwd=str(tmp_path))["sessionId"]
    key_a, key_b = "AKIAQ3EGRTWX5ZKLM7PB", "ghp_R8k2LmQ9vX4tZ7yN1pW3sA6dF0gH5jK2cB9e"
    sidecar.append(
        sid,
        {"type": "message", "message": {"role": "user", "content": "plain words, nothing to hide"}},
        {"type": "message", "message": {"role": "user", "content": f"my key is {key_a}"}},
    )
    first = export(sidecar, sid, format="json", all=True)
    again = export(sidecar, sid, format="json", all=True)
    assert again["text"] == first["text"] and key_a not in again["text"]
    assert again["redaction"] == first["redaction"]
    sidecar.append(sid, {"type": "message", "message": {"role": "user", "content": f"and {key_b}"}})
    third = export(sidecar, sid, format="markdown", all=True)
    assert key_a not in third["text"] and key_b not in third["text"]
    assert "[REDACTED:github-token:1]" in third["text"] and "plain words, nothing to hide" in third["text"]


def test_the_clean_entries_remembered_are_those_with_nothing_to_redact(tmp_path: Path):
    from sidecar.export import export_session
    from sidecar.export.redact.verdicts import clean_entries
    from sidecar.store.base import FsyncPolicy
    from sidecar.store.files.session import FileSession

    path = tmp_path / "s.jsonl"
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/w"}]
    for number, text in enumerate(
        ["nothing here", "key AKIAQ3EGRTWX5ZKLM7PB", "still nothing", "token=d41d8cd98f00b204"]
    ):
        lines.append(
            {
                "type": "message",
                "id": f"e{number}",
                "parentId": f"e{number - 1}" if number else None,
                "timestamp": "2025-01-01T00:00:01Z",
                "message": {"role": "user", "content": text, "timestamp": 1},
            }
        )
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    session, _ = FileSession.load(path, FsyncPolicy.NEVER, read_only=True)
    try:
        first = export_session(session, "json", whole_tree=True)
        assert len(clean_entries(session)) == 2  # e0 and e2; e1 and e3 are looked at on every export
        assert export_session(session, "json", whole_tree=True).data == first.data
        assert first.redaction.total == 2
        assert export_session(session, "json", whole_tree=True, redact=False).data != first.data
    finally:
        session.close()
