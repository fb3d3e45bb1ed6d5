"""Names are trimmed and sanitized with JavaScript's rules, as pi reads and writes them."""

from __future__ import annotations

import pytest
from session_builders import adopt_files, append, assistant, entry, header, msg, service, user, write_session

from sidecar import wire
from sidecar.format.jsstr import js_trim, session_name


@pytest.mark.parametrize(
    "raw, trimmed",
    [
        ("\ufeffnotes", "notes"),  # JS strips the BOM, Python's strip() keeps it
        ("\x1cnotes\x1f", "\x1cnotes\x1f"),  # JS keeps U+001C..U+001F, Python's strip() removes them
        ("\x85notes\x85", "\x85notes\x85"),  # likewise U+0085
        ("\u3000notes\u2028", "notes"),
        (" \t\nnotes \r", "notes"),
    ],
)
def test_js_trim_follows_javascript(raw, trimmed):
    assert js_trim(raw) == trimmed


def test_set_name_stores_what_pi_would(sessions_root):
    svc = service(sessions_root)
    session_id = svc.create(wire.CreateParams(cwd="/w")).sessionId
    append(svc, session_id, msg(user("q")), msg(assistant("a")))
    result = svc.set_name(wire.SetNameParams(sessionId=session_id, name="\ufeffnotes"))
    assert result.name == "notes"
    result = svc.set_name(wire.SetNameParams(sessionId=session_id, name="first line\r\n\nsecond\nthird "))
    assert result.name == "first line second third"
    assert session_name("a\n") == "a"
    listed = svc.list(wire.ListParams(all=True)).sessions
    assert [s.name for s in listed] == ["first line second third"]


def test_names_in_files_are_read_with_javascripts_trim(sessions_root):
    write_session(
        sessions_root / "--w--" / "2025-01-01T00-00-00-000Z_sess-1.jsonl",
        header(),
        [
            entry("message", "a1", None, message=user("q")),
            entry("message", "a2", "a1", message=assistant("a")),
            entry("session_info", "a3", "a2", name="\ufeff\x1cspaced\x1c "),
        ],
    )
    svc = service(sessions_root)
    adopt_files(svc)
    opened = svc.open(wire.OpenParams(sessionId="sess-1"))
    assert svc.session(opened.sessionId).tree.name == "\x1cspaced\x1c"
    listed = svc.list(wire.ListParams(all=True)).sessions
    assert [s.name for s in listed] == ["\x1cspaced\x1c"]
