"""Session/import: other tools' sessions as pi sessions."""

from __future__ import annotations

from .base import _Params, _Result


class ImportParams(_Params):
    # Which tool's sessions: "codex" (rollout-*.jsonl, or a folder of them), "claude-code"
    # (<session>.jsonl, or a project folder), "opencode" (opencode.db, or the folder holding it),
    # "spec" (a spec-format session folder <ULID>/, or a spec root holding them).
    tool: str
    paths: list[str]
    # Read and report only: nothing is written.
    dryRun: bool = False


class ImportKindCount(_Result):
    kind: str
    # outcome ("mapped", "kept", "skipped") -> why records of this kind went that way
    reasons: dict[str, str]
    mapped: int = 0
    kept: int = 0
    skipped: int = 0


class DamagedLine(_Result):
    line: int
    error: str


class ImportedSession(_Result):
    sessionId: str
    # The pi session file ("" on a dry run).
    path: str
    # False when an earlier import of the same source is there (then nothing is written) or on a dry run.
    created: bool
    tool: str
    originalId: str
    source: str
    entries: int
    counts: list[ImportKindCount] = []
    damaged: list[DamagedLine] = []
    # Record kinds the importer did not know (kept as custom entries).
    unrecognised: list[str] = []
    # Subagent transcripts / sessions imported as branches of this one.
    subagents: list[str] = []


class ImportResult(_Result):
    sessions: list[ImportedSession]
