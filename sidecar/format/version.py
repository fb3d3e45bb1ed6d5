"""The file format's version and the entry types whose meaning it knows.

Apart from ``entries`` (the shapes an append is checked against), so that opening a
file, which needs these two names, does not build the shapes' types (~8 ms of imports).
"""

from __future__ import annotations

CURRENT_VERSION = 3

# Entry types whose meaning we know. Anything else is carried along untouched.
KNOWN_ENTRY_TYPES = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "ttsr_injection",
        "session_init",
        "mode_change",
        "context_edit",
    }
)
