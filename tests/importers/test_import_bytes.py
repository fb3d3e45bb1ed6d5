"""The files an import writes stay byte for byte what they were when the import's speed work began.

The importers were restructured for speed (issue 42's goal 3); a change meant only to be faster
must not move a byte of any session file it writes, nor a count of its answer. The sources: the
committed fixtures the real CLIs wrote, small sources from bench/imports.py's generators (the
shapes the benchmark measures), and hand-made lines at the edges the readers take apart (lone
surrogate escapes in every kind of line, an escaped backslash before ``ud83d``, a pair, the
stand-in character itself written raw, damaged, blank and CRLF lines). Each is imported through a
real sidecar; the file it writes (the source's folder written as ``<src>``) and its answer are
hashed and compared with ``import_bytes.json``, made by main's importers before the change
(``python -m tests.importers.test_import_bytes --write`` makes it again, for a change meant to
move bytes, which its commit then says).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
from pathlib import Path

from .importing import FIXTURES, request

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "import_bytes.json"
BENCH = HERE.parents[1] / "bench"
GENERATED_BYTES = 300_000  # small, but a few hundred lines of each generator's shapes

CODEX_RELATIVE = "sessions/2026/01/02/rollout-2026-01-02T03-04-05-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0042.jsonl"
CLAUDE_RELATIVE = "-work-edges/0199aaaa-bbbb-4ccc-8ddd-eeeeffff0043.jsonl"

# Lone surrogate escapes as Node tools write a string cut inside an emoji, in both cases, beside what
# is no lone surrogate: a pair, an escaped backslash before "ud83d", and U+10FFFF (the readers'
# stand-in character) written raw.
CUT = [
    r"cut \ud83d here",
    r"upper \uD83D cut",
    r"low half \udc00 alone",
    r"pair \ud83d\ude00 joined",
    r"not one \\ud83d at all",
    "raw \U0010ffff noncharacter",
    r"two \ud83d\ud83d highs",
]


def _codex_edges() -> bytes:
    def line(second: int, kind: str, payload: str) -> str:
        return f'{{"timestamp":"2026-01-02T03:04:{second:02d}.000Z","type":"{kind}","payload":{payload}}}'

    lines = [
        line(0, "session_meta", '{"id":"edges-codex","cwd":"/work/edges","model_provider":"openai"}'),
        line(1, "turn_context", '{"model":"gpt-edge"}'),
    ]
    for index, text in enumerate(CUT):
        second = 2 + index
        call = f"call_{index}"
        lines += [
            line(
                second,
                "response_item",
                f'{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}',
            ),
            line(
                second, "response_item", f'{{"type":"reasoning","summary":[{{"type":"summary_text","text":"{text}"}}]}}'
            ),
            line(
                second,
                "response_item",
                f'{{"type":"function_call","name":"exec_command","call_id":"{call}","arguments":"{{\\"cmd\\":\\"{text}\\"}}"}}',
            ),
            line(second, "event_msg", f'{{"type":"agent_message","message":"{text}"}}'),
            line(second, "response_item", f'{{"type":"function_call_output","call_id":"{call}","output":"{text}"}}'),
            line(
                second,
                "response_item",
                f'{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{text}"}}]}}',
            ),
            line(second, "world_state", f'{{"full":false,"state":{{"note":"{text}"}}}}'),
            line(second, "event_msg", f'{{"type":"something_new","note":"{text}"}}'),
            line(second, "response_item", f'["{text}"]'),  # a payload that is no object
            f'{{"timestamp":"2026-01-02T03:04:{second:02d}.000Z","type":"response_item","payload":{{"type":"mess',  # torn
            f'{{"type":"response_item","payload":"{text}"',  # torn, holding the escape
            "   ",
            line(second, "token_count", '{"type":"token_count"}'),
        ]
    # Reasoning and assistant message items of every shape their parts come in, odd ones read whole.
    odd = [
        '{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"content":[{"type":"reasoning_text",'
        '"text":"c"}],"encrypted_content":"enc"}',
        '{"type":"reasoning","summary":null,"content":[{"type":"reasoning_text","text":"only content"}]}',
        '{"type":"reasoning","summary":["no object"],"encrypted_content":""}',
        '{"type":"reasoning","summary":[{"type":"summary_text"},{"text":""},{"text":"last","text":"dup"}]}',
        '{"type":"reasoning","summary":"a string","content":{"text":"an object"}}',
        '{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"no"},{"type":"output_text"},'
        '{"type":"other","text":"x"},{"type":"text","text":null},{"type":"refusal"}]}',
        '{"type":"message","role":"assistant","content":null}',
        '{"type":"message","role":"assistant","content":"a string"}',
        '{"type":"message","role":"assistant","content":[1,{"type":"output_text","text":"y"}]}',
        '{"type":"message","role":"assistant"}',
    ]
    lines += [line(40 + index, "response_item", item) for index, item in enumerate(odd)]
    return "\r\n".join(lines).encode() + b"\n\n"


def _claude_edges() -> bytes:
    session = "0199aaaa-bbbb-4ccc-8ddd-eeeeffff0043"
    lines: list[str] = []
    parent = "null"
    for index, text in enumerate(CUT):
        stamp = f'"timestamp":"2026-01-02T03:05:{index:02d}.000Z","sessionId":"{session}","cwd":"/work/edges"'
        uid = [f'"00000000-0000-4000-8000-{index:04d}{part:08d}"' for part in range(6)]
        call = f"toolu_{index}"
        lines += [
            f'{{"parentUuid":{parent},"type":"user","uuid":{uid[0]},{stamp},"message":{{"role":"user","content":"{text}"}}}}',
            f'{{"parentUuid":{uid[0]},"type":"assistant","uuid":{uid[1]},{stamp},"message":{{"id":"msg_{index}","role":"assistant","model":"claude-edge","content":[{{"type":"text","text":"{text}"}}],"usage":{{"input_tokens":3}}}}}}',
            f'{{"parentUuid":{uid[1]},"type":"assistant","uuid":{uid[2]},{stamp},"message":{{"id":"msg_{index}","role":"assistant","model":"claude-edge","content":[{{"type":"tool_use","id":"{call}","name":"Bash","input":{{"command":"{text}"}}}}],"stop_reason":"tool_use"}}}}',
            f'{{"parentUuid":{uid[2]},"type":"user","uuid":{uid[3]},{stamp},"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{call}","content":"{text}","is_error":false}}]}},"toolUseResult":{{"stdout":"{text}"}}}}',
            f'{{"type":"api-request-blob","message":{{"role":"user","content":"{text}"}}}}',
            f'{{"parentUuid":{uid[3]},"type":"attachment","uuid":{uid[4]},{stamp},"attachment":{{"text":"{text}"}}}}',
            f'{{"parentUuid":{uid[4]},"type":"user","uuid":{uid[5]},{stamp},"message":"{text}"}}',  # no object
            f'{{"type":"cost-state","note":"{text}"}}',
            f'{{"parentUuid":{uid[5]},"type":"user","message":{{"content":"{text}"',  # torn
            f'["{text}"]',  # no object
            "",
        ]
        parent = uid[5]
    # Assistant content of every block kind the mapping knows, odd fields, and what it reads whole.
    contents = [
        '[{"type":"thinking","thinking":"no signature"},{"type":"redacted_thinking","data":"abc"}]',
        '[{"type":"server_tool_use","id":"srv_1","name":"web_search","input":{"query":"q"}}]',
        '[{"type":"tool_use","id":null,"input":["not","an","object"]},{"type":"text","text":null}]',
        '[{"type":"text","text":"a","extra":1,"text":"duplicate key"},{"type":"thinking","thinking":"t","signature":""}]',
        '[{"type":"image","source":{"type":"base64","data":"AA=="}},{"type":"text","text":"after"}]',
        '["no object",{"type":"text","text":"x"}]',
        "null",
        '"a string"',
        "[]",
    ]
    for index, content in enumerate(contents):
        stamp = f'"timestamp":"2026-01-02T03:06:{index:02d}.000Z","sessionId":"{session}"'
        uid = f'"00000000-0000-4000-8000-9999{index:08d}"'
        message = f'{{"id":"msg_odd_{index // 2}","role":"assistant","model":"claude-edge","content":{content}}}'
        lines.append(f'{{"parentUuid":{parent},"type":"assistant","uuid":{uid},{stamp},"message":{message}}}')
        parent = uid
    return "\r\n".join(lines).encode() + b"\n"


def _generated(kind: str, path: Path) -> None:
    """bench/imports.py's generator of ``kind``, run in its own process, for a small source."""
    script = (
        "import sys; from pathlib import Path; import imports; "
        f"imports.TARGET = {GENERATED_BYTES}; imports.generate_{kind}(Path(sys.argv[1]))"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], cwd=BENCH, check=True)


def sources(root: Path) -> dict[str, list[tuple[str, Path]]]:
    """(name, path) of every source, by tool: the fixtures', the generated, the hand-made."""
    for name in ("codex", "claude-code"):
        with tarfile.open(FIXTURES / f"{name}.tar.xz") as archive:
            archive.extractall(root / "fixtures", filter="data")
    codex = sorted((root / "fixtures" / ".codex").rglob("rollout-*.jsonl"))
    claude = sorted(p for p in (root / "fixtures" / ".claude").rglob("*.jsonl") if p.parent.name != "subagents")
    found = {
        "codex": [(f"fixture:{p.name}", p) for p in codex],
        "claude-code": [(f"fixture:{p.name}", p) for p in claude],
    }
    generated = root / "generated"
    _generated("codex", generated / "codex" / CODEX_RELATIVE)
    _generated("claude", generated / "claude" / CLAUDE_RELATIVE)
    found["codex"].append(("generated", generated / "codex" / CODEX_RELATIVE))
    found["claude-code"].append(("generated", generated / "claude" / CLAUDE_RELATIVE))
    edges = root / "edges"
    for tool, relative, made in (
        ("codex", CODEX_RELATIVE, _codex_edges()),
        ("claude-code", CLAUDE_RELATIVE, _claude_edges()),
    ):
        path = edges / tool / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(made)
        found[tool].append(("edges", path))
    return found


def digests(root: Path) -> dict[str, dict[str, object]]:
    """For each source: the sha256 of the file its import wrote and of its answer, with the folders
    of this run (the sources', the session root's) written as placeholders. Each source is imported into
    a root of its own (two of them share a session id: a second import into one root would find the first)."""
    source_root = root / "sources"
    out: dict[str, dict[str, object]] = {}
    for tool, named in sources(source_root).items():
        for name, path in named:
            session_root = root / "sessions" / f"{len(out)}"  # its own: a session imported before is not written again
            got = request(session_root, "session/import", {"tool": tool, "paths": [str(path)]})
            (session,) = got["sessions"]
            written = Path(session["path"]).read_bytes()
            answer = json.dumps(session, sort_keys=True).encode()
            for folder, placeholder in ((session_root, b"<root>"), (source_root, b"<src>")):
                written = written.replace(str(folder).encode(), placeholder)
                answer = answer.replace(str(folder).encode(), placeholder)
            out[f"{tool} {name}"] = {
                "entries": session["entries"],
                "damaged": len(session.get("damaged", [])),
                "file": hashlib.sha256(written).hexdigest(),
                "answer": hashlib.sha256(answer).hexdigest(),
            }
    return out


def test_every_imported_file_is_what_main_wrote(tmp_path):
    expected = json.loads(EXPECTED.read_text())
    got = digests(tmp_path)
    assert set(got) == set(expected)
    # (the edges hold damaged lines and stood-in surrogates: the cases the readers' fast paths skip)
    assert got["codex edges"]["damaged"] > 0 and got["claude-code edges"]["damaged"] > 0
    for name in expected:
        assert got[name] == expected[name], name


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        EXPECTED.write_text(json.dumps(digests(Path(work)), indent=1, sort_keys=True) + "\n")
