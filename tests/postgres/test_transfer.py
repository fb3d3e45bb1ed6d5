"""migrate and export-root: a file root into PostgreSQL and back, byte for byte (issue 12 part 4),
run as the real command (a subprocess) against a real server."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
from conftest import PI_FIXTURES
from session_builders import append, assistant, labelled_session, msg, service, user

from sidecar import wire
from sidecar.store.payload import BlobStore

COMMAND = (
    [os.environ["SESSION_SIDECAR_BIN"]] if os.environ.get("SESSION_SIDECAR_BIN") else [sys.executable, "-m", "sidecar"]
)


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=300, env=env)


def tree_of(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` by relative path, without the host-local folders (index, terminals)."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and rel.parts[0] not in (".index", ".terminals", ".snapshots"):
            found[str(rel)] = path.read_bytes()
    return found


def generated_root(root: Path) -> None:
    """Sessions with labels, names, custom entries, compactions, forks, an image blob;
    archived and trashed ones; a torn last line; an oh-my-pi title line; an unparseable line."""
    svc = service(root)
    first, _ = labelled_session(svc)
    second = svc.create(wire.CreateParams(cwd="/work/other")).sessionId
    png = base64.b64encode(b"\x89PNG" + os.urandom(3000)).decode()
    append(
        svc,
        second,
        msg(
            {
                "role": "user",
                "content": [{"type": "text", "text": "see"}, {"type": "image", "data": png, "mimeType": "image/png"}],
                "timestamp": 1,
            }
        ),
        msg(assistant("seen")),
    )
    svc.set_name(wire.SetNameParams(sessionId=second, name="with an image"))
    third = svc.create(wire.CreateParams(cwd="/work/proj")).sessionId
    append(svc, third, msg(user("to be archived")), msg(assistant("ok")))
    fourth = svc.create(wire.CreateParams(cwd="/work/proj")).sessionId
    append(svc, fourth, msg(user("to be trashed")), msg(assistant("ok")))
    svc.fork(wire.ForkParams(sessionId=first))
    svc.close_all()
    BlobStore(root).put(b"an image stored apart, as a blob: " + os.urandom(64))
    svc.archive(wire.ArchiveParams(sessionId=third))
    svc.delete(wire.DeleteParams(sessionId=fourth))
    svc.close_all()
    folder = root / "--work-proj--"
    torn = folder / "2026-01-01T00-00-00-000Z_torn.jsonl"
    torn.write_bytes(
        b'{"type":"session","version":3,"id":"torn","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/proj"}\n'
        b'not json at all\n{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        b'"message":{"role":"user","content":"hi","timestamp":1}}\n{"type":"mess'
    )
    (folder / "notes.txt").write_bytes(b"not a session, kept as it is\n")
    assert (root / ".archive").is_dir() and (root / ".trash").is_dir()


def roundtrip(source: Path, url: str, target: Path) -> tuple[str, str]:
    first = run("migrate", "--from", str(source), "--database-url", url)
    assert first.returncode == 0, first.stderr
    out = run("export-root", "--database-url", url, "--to", str(target))
    assert out.returncode == 0, out.stderr
    return first.stdout, out.stdout


def test_pi_fixtures_round_trip_byte_identical(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "root"
    folder = source / "--work-fixtures--"
    folder.mkdir(parents=True)
    for fixture in sorted(PI_FIXTURES.glob("*.jsonl")):
        shutil.copyfile(fixture, folder / fixture.name)
    assert len(list(folder.iterdir())) >= 2
    imported, _ = roundtrip(source, pg_url, tmp_path / "back")
    assert "imported 2 sessions" in imported
    assert tree_of(tmp_path / "back") == tree_of(source)


def test_generated_root_round_trip_and_second_run_changes_nothing(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "root"
    source.mkdir()
    generated_root(source)
    files = tree_of(source)
    assert any(k.startswith(".archive/") for k in files) and any(k.startswith(".trash/") for k in files)
    assert any(k.startswith(".blobs/") for k in files)
    imported, _ = roundtrip(source, pg_url, tmp_path / "back")
    exported = tree_of(tmp_path / "back")
    assert exported == files
    again = run("migrate", "--from", str(source), "--database-url", pg_url)
    assert again.returncode == 0
    count = imported.split()[1]
    assert f"imported 0 sessions, {count} already there, 0 replaced" in again.stdout
    with psycopg.connect(pg_url) as conn:
        lines = conn.execute("SELECT count(*) FROM sidecar_lines").fetchone()[0]
    assert lines == sum(data.count(b"\n") for name, data in files.items() if name.endswith(".jsonl"))


def test_a_run_killed_halfway_resumes(tmp_path: Path, pg_url: str) -> None:
    source = tmp_path / "root"
    folder = source / "--work-many--"
    folder.mkdir(parents=True)
    big = (PI_FIXTURES / "before-compaction.jsonl").read_bytes()
    header_end = big.index(b"\n")
    for n in range(12):
        head = big[:header_end].replace(b'"id":"', f'"id":"copy{n:02d}-'.encode(), 1)
        (folder / f"2026-01-01T00-00-{n:02d}-000Z_s{n}.jsonl").write_bytes(head + big[header_end:])
    proc = subprocess.Popen(
        [*COMMAND, "migrate", "--from", str(source), "--database-url", pg_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    import time

    deadline = time.monotonic() + 60
    with psycopg.connect(pg_url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            try:
                if conn.execute("SELECT count(*) FROM sidecar_sessions").fetchone()[0] >= 3:
                    break
            except psycopg.errors.UndefinedTable:
                pass
            time.sleep(0.01)
    proc.kill()
    proc.wait()
    with psycopg.connect(pg_url) as conn:
        partial = conn.execute("SELECT count(*) FROM sidecar_sessions").fetchone()[0]
    assert 0 < partial < 12, "the kill should land halfway"
    _, _ = roundtrip(source, pg_url, tmp_path / "back")
    assert tree_of(tmp_path / "back") == tree_of(source)


def test_bad_urls_are_clear_errors(tmp_path: Path, pg_url: str, cluster) -> None:
    (tmp_path / "root").mkdir()
    cases = {
        "mysql://x@localhost/db": "must start with postgresql://",
        "postgresql://sidecar:wrong@127.0.0.1:%d/sidecar" % cluster.port: "password",
        "postgresql://sidecar:sidecar@127.0.0.1:1/sidecar": "check that the server runs",
        "postgresql://sidecar:sidecar@127.0.0.1:%d" % cluster.port: "names no database",
    }
    for url, said in cases.items():
        out = run("migrate", "--from", str(tmp_path / "root"), "--database-url", url)
        assert out.returncode != 0 and said in out.stderr, (url, out.stderr)
        assert "Traceback" not in out.stderr and "wrong" not in out.stderr
    # A database without our schema: export-root says what to run, and changes nothing.
    out = run("export-root", "--database-url", pg_url, "--to", str(tmp_path / "out"))
    assert out.returncode == 1 and "schema is version 0" in out.stderr and "migrate" in out.stderr
