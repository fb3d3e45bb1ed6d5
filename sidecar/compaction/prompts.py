"""What we ask the summarizer, in our own words, around pi's section layout.

The section names are a contract: the offline summarizer fills the same
sections, clients may parse them, and an update keeps them stable across
any number of compactions.
"""

from __future__ import annotations

import re

SYSTEM_PROMPT = (
    "You write handoff notes for a coding agent. You are given the transcript of a working session "
    "between a user and an AI coding assistant. Write the structured checkpoint you are asked for, and "
    "nothing else: do not answer questions found in the transcript, do not carry on with its work, and "
    "do not add greetings or commentary."
)

SECTIONS = (
    "Goal",
    "Constraints & Preferences",
    "Progress",
    "Key Decisions",
    "Next Steps",
    "Critical Context",
)

TEMPLATE = """## Goal
<what the user wants done; several items if the session covers several tasks>

## Constraints & Preferences
- <each requirement, rule or preference the user stated, in their words where possible; "(none)" if there were none>

## Progress
### Done
- [x] <finished work: changes made, things verified>

### In Progress
- [ ] <work started and not finished>

### Blocked
- <what stops progress, with the exact error; "(none)" if nothing>

## Key Decisions
- **<decision>**: <why it was taken>

## Next Steps
1. <the next concrete actions, in order>

## Critical Context
- <facts the next agent cannot rediscover cheaply: values, commands, error messages, references; "(none)" if none>"""

_EXACTNESS = (
    "Be brief in every section, but copy file paths, function and symbol names, commands and error "
    "messages exactly as they appear."
)

INITIAL_INSTRUCTIONS = f"""The transcript above, in <conversation> tags, is the older part of a coding session. \
Its messages are about to leave the agent's context; your notes will replace them, and another model will \
continue the work from your notes and the most recent messages alone.

Write the notes in exactly this layout:

{TEMPLATE}

{_EXACTNESS}"""

UPDATE_INSTRUCTIONS = f"""The transcript above, in <conversation> tags, continues a coding session that was \
already condensed once; the notes written then are in <previous-summary> tags. Produce one updated set of \
notes that covers both.

Rules for the update:
- Keep everything the previous notes say unless the new messages show it is obsolete.
- Add the new goals, constraints, progress, decisions and context from the transcript.
- Move items from "In Progress" to "Done" once the transcript shows them finished.
- Rewrite "Next Steps" for the state the work is in now.

Write the notes in exactly this layout:

{TEMPLATE}

{_EXACTNESS}"""

TURN_PREFIX_INSTRUCTIONS = """The transcript above, in <conversation> tags, is the beginning of a single long \
turn whose later part stays in the agent's context verbatim. Write short notes that let a reader understand \
that later part:

## Original Request
<what the user asked for in this turn>

## Early Progress
- <what was done and decided in this beginning>

## Context for the Rest of the Turn
- <facts the later messages depend on>

Be brief; copy paths, names and error messages exactly."""

BRANCH_INSTRUCTIONS = f"""The transcript above, in <conversation> tags, is a branch of a coding session that \
the user is leaving to continue from an earlier point. Write notes on that branch so its results are not \
lost when the work continues elsewhere.

Write the notes in exactly this layout:

{TEMPLATE}

{_EXACTNESS}"""

SPLIT_TURN_HEADING = "## Current Turn (its beginning was condensed)"
BRANCH_SUMMARY_PREAMBLE = "Notes on a branch the user explored before coming back to this point:\n\n"

# Blocks we append to summaries ourselves and regenerate on every compaction;
# a previous summary is handed to the model without them.
_MACHINE_BLOCKS = re.compile(r"\n*<(read-files|modified-files|initial-context|carry-over)>.*?</\1>", re.DOTALL)


def strip_machine_blocks(summary: str) -> str:
    return _MACHINE_BLOCKS.sub("", summary).rstrip()


def with_custom_instructions(instructions: str, custom: str | None) -> str:
    if custom and custom.strip():
        return f"{instructions}\n\nThe user asks for this emphasis: {custom.strip()}"
    return instructions


def build_prompt(conversation: str, instructions: str, previous_summary: str | None = None) -> str:
    parts = [f"<conversation>\n{conversation}\n</conversation>"]
    if previous_summary:
        parts.append(f"<previous-summary>\n{previous_summary}\n</previous-summary>")
    parts.append(instructions)
    return "\n\n".join(parts)


def merge_split_turn(history: str, turn_prefix: str) -> str:
    """The history summary, then the condensed start of the turn the cut split.

    With no history before that turn (the cut split the first turn) there is
    nothing to separate: the turn's part stands alone.
    """
    turn_part = f"{SPLIT_TURN_HEADING}\n\n{turn_prefix.strip()}"
    if not history.strip():
        return turn_part
    return f"{history.rstrip()}\n\n---\n\n{turn_part}"


def initial_context_block(text: str) -> str:
    return f"\n\n<initial-context>\n{text.strip()}\n</initial-context>" if text.strip() else ""
