"""Generate a sessions root of many small sessions (default 10,000 in 100 folders), seeded and deterministic.

Each session: a header and 6-30 entries of user and assistant messages, with
pi's file names and folder encoding. Written below ``bench/data/`` (never
committed).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from pathlib import Path

import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from sidecar.store.files.layout import encode_cwd, file_name  # noqa: E402

DATA = HERE / "data" / "many"
SEED = 20250102
WORDS = "parse refactor tokenizer branch session tree leaf context model test build deploy cache index query".split()


def _stamp(day: int, second: int) -> str:
    return f"2025-{1 + day // 28:02d}-{1 + day % 28:02d}T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"


def generate(root: Path, sessions: int = 10_000, folders: int = 100, seed: int = SEED) -> Path:
    rng = random.Random(seed)
    encode = msgspec.json.Encoder().encode
    if root.exists():
        shutil.rmtree(root)
    for number in range(sessions):
        cwd = f"/work/project-{number % folders:03d}"
        day, second = rng.randrange(300), rng.randrange(86_400)
        session_id = f"{seed:08x}-0000-7000-8000-{number:012d}"
        timestamp = _stamp(day, second)
        lines = [encode({"type": "session", "version": 3, "id": session_id, "timestamp": timestamp, "cwd": cwd})]
        parent = None
        ms = 1_735_689_600_000 + day * 86_400_000 + second * 1000
        for index in range(rng.randrange(6, 31)):
            entry_id = f"{index:08x}"
            ms += rng.randrange(1000, 60_000)
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(5, 40)))
            if index % 2 == 0:
                body = {"role": "user", "content": text, "timestamp": ms}
            else:
                body = {
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                    "provider": "anthropic",
                    "model": "claude-bench",
                    "usage": {
                        "input": 100 + index,
                        "output": 20,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 120 + index,
                    },
                    "stopReason": "stop",
                    "timestamp": ms,
                }
            lines.append(
                encode({"type": "message", "id": entry_id, "parentId": parent, "timestamp": timestamp, "message": body})
            )
            parent = entry_id
        path = root / encode_cwd(cwd) / file_name(timestamp, session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\n".join(lines) + b"\n")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--folders", type=int, default=100)
    parser.add_argument("--root", type=Path, default=DATA)
    args = parser.parse_args()
    generate(args.root, args.sessions, args.folders)
    print(f"{args.sessions} sessions in {args.folders} folders below {args.root}")


if __name__ == "__main__":
    main()
