"""Context fidelity: what survives repeated compactions, on the offline default and on a forgetful model.

    python bench/fidelity.py                 # 72 turns, a compaction every 10 turns from turn 22 (6 in all)
    python bench/fidelity.py --turns 120     # longer
    python bench/fidelity.py --summarizer offline|forgetful|both
    python bench/fidelity.py --windowed      # compactions when the window fills, tool-result clearing off vs on

A generated coding session (seeded, deterministic) with facts planted along
the way:

- constraints, in varied phrasing and languages, some of them at the end of
  long messages with pasted logs (so the verbatim budget overflows and the
  digest must name them);
- tool errors never resolved later (exact text), and errors resolved later
  (which may go);
- files read and changed;
- initial instructions: the session_init system prompt and task, and a
  rules file the harness injected before the first message;
- at each compaction, the last user request and the last command with the
  last line of its output.

After each compaction it prints kept / planted per kind (a fact is kept when
its exact text is somewhere in the built context) and the built context's
size against the uncompacted one (chars / 4, every message estimated).
"forgetful" is a stub model that answers every summary request with the
same two vague lines, dropping everything it was given.

``--windowed`` runs the same session as an agent would: after every
appended entry, compact when the context passes ``window - reserve``; with
clearing on, first clear old tool outputs in batches as
``compaction.clearToolResults`` does (sidecar.compaction.clearing). It prints
the turns at which each compaction happened, off and on, the clearings (each
one breaks the provider's prompt cache once), and the facts kept at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from sidecar.compaction.clearing import clearing_due, plan_for_path  # noqa: E402
from sidecar.compaction.run import CompactionOptions, run_compaction  # noqa: E402
from sidecar.config import ClearToolResultsSettings  # noqa: E402
from sidecar.context.build import build_context  # noqa: E402
from sidecar.context.tokens import context_tokens as counted_tokens  # noqa: E402
from sidecar.context.tokens import estimate_tokens  # noqa: E402
from sidecar.format.jsonl import Entry  # noqa: E402
from sidecar.providers.base import SummaryRequest, SummaryResponse  # noqa: E402
from sidecar.providers.offline import OfflineProvider  # noqa: E402

SEED = 1313
KINDS = ("constraint", "error", "file", "initial", "lastRequest", "lastCommand")

# Constraints as people write them: most with no "never" or "must" in them.
CONSTRAINTS = [
    "Use pnpm, not npm.",
    "That signature has to stay as it is.",
    "Please keep the functions under forty lines.",
    "I'd rather you didn't pull in lodash.",
    "If a test fails, fix the code, not the test.",
    "Leave the generated folder alone.",
    "Stick to the fetch API for HTTP calls.",
    "No default exports in the new modules.",
    "Ideally the bundle stays under 200 KB.",
    "When you touch the router, update docs/routes.md.",
    "Ne modifie jamais le fichier de configuration.",
    "Benutze bitte keine Klassen in den Hooks.",
    "Let's not add a second state library.",
    "The API responses stay camelCase.",
    "Before you commit, run pnpm lint.",
    "Only the admin role may delete projects.",
    "Mantén los nombres de las rutas como están.",
    "Could you avoid touching the CI config?",
]
ERRORS = [
    "TS2307: Cannot find module '@acme/ui-kit' or its corresponding type declarations.",
    "ERR_PNPM_OUTDATED_LOCKFILE Cannot install with frozen-lockfile because pnpm-lock.yaml is not up to date",
    "Error: connect ECONNREFUSED 127.0.0.1:5433",
    "FAIL src/router/guard.test.ts > redirects anonymous users: expected '/login' to be '/signin'",
    "SyntaxError: Unexpected token '<' in JSON at position 0",
    "error TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.",
    "Segmentation fault (core dumped) in ./scripts/bench-native",
    "PermissionError: [Errno 13] Permission denied: '/var/cache/acme/index.db'",
]
INITIAL = [
    "You are a coding agent working in the acme-web monorepo; answer tersely.",
    "Migrate acme-web from webpack to vite without changing any public URL.",
    "House rule R-17: every exported function carries a JSDoc comment.",
]
AREAS = (
    "router",
    "store",
    "auth",
    "billing",
    "search",
    "settings",
    "editor",
    "upload",
    "theme",
    "i18n",
    "metrics",
    "api",
)
WORDS = "the a state value render cache route token user list item config module hook effect query result".split()


class Forgetful:
    """A model that drops everything: the same two vague lines whatever it is asked."""

    name = "forgetful"

    def model_for(self, requested: str | None) -> str:
        return "forgetful-1"

    async def summarize(self, request: SummaryRequest, on_text, on_retry=None) -> SummaryResponse:
        text = (
            "## Goal\n- Continue the work on the project.\n\n## Progress\n- Various changes were made to several files."
        )
        on_text(text)
        return SummaryResponse(text=text, model="forgetful-1")


class Session:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.entries: list[Entry] = []
        self.calls = 0
        self.planted: dict[str, list[str]] = {kind: [] for kind in KINDS}
        self.last_request = ""
        self.last_command: tuple[str, str] = ("", "")

    def add(self, obj: dict[str, Any]) -> None:
        parent = self.entries[-1].id if self.entries else None
        number = len(self.entries) + 1
        self.entries.append(
            Entry.from_obj(
                {
                    "id": f"e{number:05d}",
                    "parentId": parent,
                    "timestamp": f"2026-01-01T{number // 3600 % 24:02d}:{number // 60 % 60:02d}:{number % 60:02d}.000Z",
                    **obj,
                }
            )
        )

    def prose(self, words: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(words))

    def user(self, text: str) -> None:
        self.add(
            {
                "type": "message",
                "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
            }
        )
        self.last_request = text

    def tool(self, name: str, arguments: dict[str, Any], output: str, error: bool = False, say: str = "") -> None:
        self.calls += 1
        call_id = f"call_{self.calls}"
        content: list[dict[str, Any]] = [{"type": "text", "text": say}] if say else []
        content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
        self.add(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": content,
                    "provider": "anthropic",
                    "model": "claude-x",
                    "stopReason": "toolUse",
                    "timestamp": 2,
                },
            }
        )
        self.add(
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": output}],
                    "isError": error,
                    "timestamp": 3,
                },
            }
        )
        if name == "bash" and not error:
            self.last_command = (arguments["command"], output.strip().splitlines()[-1])

    def reply(self, text: str) -> None:
        self.add(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                    "provider": "anthropic",
                    "model": "claude-x",
                    "stopReason": "stop",
                    "timestamp": 2,
                },
            }
        )

    def start(self) -> None:
        self.add({"type": "session_init", "systemPrompt": INITIAL[0], "task": INITIAL[1]})
        self.add({"type": "custom_message", "customType": "rules", "content": INITIAL[2], "display": False})
        self.planted["initial"] = list(INITIAL)

    def turn(self, number: int, constraints: list[str], errors: list[str]) -> None:
        area = AREAS[number % len(AREAS)]
        request = f"Turn {number}: move the {area} module to vite and check its tests."
        if constraints and number % 4 == 0:
            # A pasted log, with the rule at its end: the message is long and the rule easy to miss.
            log = "\n".join(f"[{i:04d}] vite: transformed {self.prose(6)}" for i in range(60))
            request += f"\nHere is the log of my last run:\n{log}\n{constraints[0]}"
            self.planted["constraint"].append(constraints.pop(0))
        elif constraints and number % 3 == 0:
            request += " " + constraints[0]
            self.planted["constraint"].append(constraints.pop(0))
        self.user(request)
        source = f"src/{area}/index{number}.ts"
        self.tool(
            "read",
            {"path": source},
            f"// {source}\n" + "\n".join(f"export const v{i} = '{self.prose(8)}';" for i in range(50)),
        )
        self.planted["file"].append(source)
        if errors and number % 5 == 2:
            self.tool(
                "bash", {"command": f"pnpm --filter {area} test"}, errors[0], error=True, say="Running the tests."
            )
            self.planted["error"].append(errors.pop(0))
        if number % 7 == 3:
            # An error the agent then resolves by running the same command again successfully.
            self.tool("bash", {"command": f"pnpm --filter {area} build"}, "Error: vite.config.ts not found", error=True)
            self.tool("edit", {"path": f"src/{area}/vite.config.ts", "oldText": "a", "newText": "b"}, "edited")
            self.tool("bash", {"command": f"pnpm --filter {area} build"}, f"built {area}")
            self.planted["file"].append(f"src/{area}/vite.config.ts")
        target = f"src/{area}/module{number}.ts"
        self.tool(
            "edit", {"path": target, "oldText": "webpack", "newText": "vite"}, "edited", say="Editing the module."
        )
        self.planted["file"].append(target)
        self.tool(
            "bash",
            {"command": f"pnpm --filter {area} build --mode turn{number}"},
            "\n".join(f"build step {i}: {self.prose(10)}" for i in range(40))
            + f"\nbuilt {area} in {number * 37 % 900} ms",
        )
        self.reply(f"Moved the {area} module ({self.prose(25)}).")


def text_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in text_of(v)]
    if isinstance(value, list):
        return [t for v in value for t in text_of(v)]
    return []


def context_tokens(entries: list[Entry]) -> tuple[int, str]:
    messages = build_context(entries).messages
    return sum(estimate_tokens(m) for m in messages), "\n".join(text_of(messages))


def uncompacted(entries: list[Entry]) -> list[Entry]:
    """The same conversation with no compaction or prune entries (parents re-linked)."""
    kept: list[Entry] = []
    for entry in entries:
        if entry.type == "compaction" or (entry.type == "custom" and b"prune" in entry.raw):
            continue
        obj = entry.obj()
        obj["parentId"] = kept[-1].id if kept else None
        kept.append(Entry.from_obj(obj))
    return kept


def run(summarizer: str, turns: int, first: int, every: int, keep: int) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    session = Session(rng)
    session.start()
    constraints, errors = list(CONSTRAINTS), list(ERRORS)
    provider = OfflineProvider() if summarizer == "offline" else Forgetful()
    rows = []
    for number in range(1, turns + 1):
        session.turn(number, constraints, errors)
        if number >= first and (number - first) % every == 0:
            outcome = asyncio.run(run_compaction(session.entries, CompactionOptions(keep_recent_tokens=keep), provider))
            for obj in outcome.entries:
                session.add(obj)
            planted = dict(session.planted)
            planted["lastRequest"] = [session.last_request]
            planted["lastCommand"] = list(session.last_command)
            tokens, text = context_tokens(session.entries)
            full, _ = context_tokens(uncompacted(session.entries))
            kept = {kind: sum(1 for fact in facts if fact in text) for kind, facts in planted.items()}
            missing = [fact for kind, facts in planted.items() for fact in facts if fact not in text]
            rows.append(
                {
                    "turn": number,
                    "tokens": tokens,
                    "full": full,
                    "kept": kept,
                    "planted": {k: len(v) for k, v in planted.items()},
                    "missing": missing,
                    "carry": outcome.entries[-1]["details"]["carryOver"],
                }
            )
    return rows


class WatchedSession(Session):
    """The bench session, appended entry by entry, compacting (and clearing) as the sidecar would."""

    def __init__(
        self,
        rng: random.Random,
        provider: Any,
        window: int,
        reserve: int,
        keep: int,
        clearing: ClearToolResultsSettings,
    ) -> None:
        super().__init__(rng)
        self.provider, self.limit, self.keep, self.clearing = provider, window - reserve, keep, clearing
        self.turn_number = 0
        self.compactions: list[int] = []  # the turn of each compaction
        self.clearings: list[tuple[int, int, int]] = []  # (turn, outputs cleared, tokens freed)
        self.watching = False
        self.peak = 0

    def add(self, obj: dict[str, Any]) -> None:
        super().add(obj)
        if not self.watching:
            return
        self.watching = False  # the entries added below are not watched again
        try:
            tokens = self.tokens()
            if clearing_due(tokens, self.clearing):
                plan = plan_for_path(self.entries, self.clearing)
                if plan is not None:
                    super().add(plan.entry())
                    self.clearings.append((self.turn_number, len(plan.tool_result_ids), plan.tokens_freed))
                    tokens = self.tokens()
            if tokens > self.limit and obj.get("type") == "message" and obj["message"]["role"] == "assistant":
                outcome = asyncio.run(
                    run_compaction(self.entries, CompactionOptions(keep_recent_tokens=self.keep), self.provider)
                )
                for made in outcome.entries:
                    super().add(made)
                self.compactions.append(self.turn_number)
                tokens = self.tokens()
            self.peak = max(self.peak, tokens)
        finally:
            self.watching = True

    def tokens(self) -> int:
        ctx = build_context(self.entries)
        return counted_tokens(ctx.messages, ctx.after_compaction)


def run_windowed(
    summarizer: str, turns: int, window: int, reserve: int, keep: int, clearing: ClearToolResultsSettings
) -> dict[str, Any]:
    rng = random.Random(SEED)
    provider = OfflineProvider() if summarizer == "offline" else Forgetful()
    session = WatchedSession(rng, provider, window, reserve, keep, clearing)
    session.start()
    session.watching = True
    constraints, errors = list(CONSTRAINTS), list(ERRORS)
    for number in range(1, turns + 1):
        session.turn_number = number
        session.turn(number, constraints, errors)
    planted = dict(session.planted)
    planted["lastRequest"] = [session.last_request]
    planted["lastCommand"] = list(session.last_command)
    tokens, text = context_tokens(session.entries)
    if not session.compactions:
        # Nothing replaced the start: the harness sends session_init's prompt and task as it did from turn 1.
        text += "\n" + "\n".join(text_of(session.entries[0].obj()))
    full, _ = context_tokens(uncompacted(session.entries))
    return {
        "compactions": session.compactions,
        "clearings": session.clearings,
        "tokens": tokens,
        "full": full,
        "peak": session.peak,
        "kept": {kind: sum(1 for fact in facts if fact in text) for kind, facts in planted.items()},
        "planted": {k: len(v) for k, v in planted.items()},
        "missing": [fact for facts in planted.values() for fact in facts if fact not in text],
    }


def report_windowed(summarizer: str, off: dict[str, Any], on: dict[str, Any], args: argparse.Namespace) -> None:
    print(
        f"\n== {summarizer}, window {args.window}, reserve {args.reserve}, keepRecentTokens {args.keep}, "
        f"{args.turns} turns; clearing: trigger {args.trigger}, keep {args.clear_keep} results, at least {args.clear_min} tokens =="
    )
    for name, row in (("clearing off", off), ("clearing on ", on)):
        kept, planted = sum(row["kept"].values()), sum(row["planted"].values())
        print(
            f"{name}: {len(row['compactions']):>2} compactions at turns {row['compactions']}; "
            f"{len(row['clearings'])} clearings; facts kept {kept}/{planted}; context at the end {row['tokens']} "
            f"({row['tokens'] / row['full']:.1%} of uncompacted), peak {row['peak']}"
        )
        for fact in row["missing"]:
            print(f"        missing: {fact[:100]}")
    if on["clearings"]:
        sizes = ", ".join(f"turn {t}: {n} outputs / {f} tokens" for t, n, f in on["clearings"])
        print(f"clearings: {sizes}")
    avoided = len(off["compactions"]) - len(on["compactions"])
    later = [b - a for a, b in zip(off["compactions"], on["compactions"])]
    print(f"compactions avoided: {avoided} of {len(off['compactions'])}; each remaining one postponed by {later} turns")


def report(summarizer: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n== {summarizer} ==")
    header = "  #  turn  context / uncompacted        " + "  ".join(f"{k:>11}" for k in KINDS)
    print(header)
    for index, row in enumerate(rows, 1):
        ratio = row["tokens"] / row["full"]
        kinds = "  ".join(f"{row['kept'][k]:>5}/{row['planted'][k]:<5}" for k in KINDS)
        print(f"{index:>3} {row['turn']:>5}  {row['tokens']:>7} / {row['full']:>7} ({ratio:5.1%})   {kinds}")
        for fact in row["missing"]:
            print(f"        missing: {fact[:100]}")
    last = rows[-1]
    total_kept = sum(last["kept"].values())
    total = sum(last["planted"].values())
    carry = last["carry"]
    print(
        f"after {len(rows)} compactions: {total_kept}/{total} facts kept, context {last['tokens'] / last['full']:.1%} "
        f"of uncompacted; carry-over: {len(carry['userMessages'])} messages verbatim, {carry['digestedMessages']} digested "
        f"into {len(carry['digest'])} lines, {len(carry['errors'])} open errors"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=72)
    parser.add_argument("--first", type=int, default=22, help="the turn of the first compaction")
    parser.add_argument("--every", type=int, default=10, help="turns between compactions")
    parser.add_argument("--keep", type=int, default=20000, help="keepRecentTokens")
    parser.add_argument("--summarizer", choices=("offline", "forgetful", "both"), default="both")
    parser.add_argument("--windowed", action="store_true", help="compact when the window fills; clearing off vs on")
    parser.add_argument("--window", type=int, default=64000, help="--windowed: the context window")
    parser.add_argument("--reserve", type=int, default=16384, help="--windowed: reserveTokens")
    parser.add_argument("--trigger", type=int, default=32000, help="--windowed: clearToolResults.triggerTokens")
    parser.add_argument("--clear-keep", type=int, default=3, help="--windowed: clearToolResults.keepToolResults")
    parser.add_argument("--clear-min", type=int, default=8000, help="--windowed: clearToolResults.minimumTokens")
    args = parser.parse_args()
    if args.windowed:
        turns = args.turns if args.turns != 72 else 150
        args.turns = turns
        on = ClearToolResultsSettings(
            enabled=True, triggerTokens=args.trigger, keepToolResults=args.clear_keep, minimumTokens=args.clear_min
        )
        for summarizer in ("offline", "forgetful") if args.summarizer == "both" else (args.summarizer,):
            off = run_windowed(summarizer, turns, args.window, args.reserve, args.keep, ClearToolResultsSettings())
            report_windowed(
                summarizer, off, run_windowed(summarizer, turns, args.window, args.reserve, args.keep, on), args
            )
        return
    for summarizer in ("offline", "forgetful") if args.summarizer == "both" else (args.summarizer,):
        report(summarizer, run(summarizer, args.turns, args.first, args.every, args.keep))


if __name__ == "__main__":
    main()
