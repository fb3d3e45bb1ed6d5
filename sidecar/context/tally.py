"""Context size kept up to date as entries are appended, instead of rebuilt per append.

``session/append`` reports the context's size after every batch. Rebuilding
the context for that costs time in proportion to the session (6 ms per append
at 700 entries, so a long session pays quadratically). The size only changes
in simple ways while the path grows at its leaf: a new message adds its
estimate, a new assistant usage resets the count. Anything else (a branch, a
compaction, a prune) rebuilds once.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..format.jsonl import Entry
from .build import build_context, message_of
from .pruned import PRUNE_CUSTOM_TYPE
from .tokens import estimate_tokens, reported_usage

_PRUNE_MARK = PRUNE_CUSTOM_TYPE.encode()


@dataclass(slots=True)
class TokenTally:
    """The context size at ``leaf_id``: last trusted usage plus estimates after it."""

    leaf_id: str | None
    usage: int  # tokens the last trusted assistant usage reported, 0 when none since the compaction
    trailing: int  # estimated tokens of the messages after it (all messages when no usage)

    @property
    def total(self) -> int:
        return self.usage + self.trailing

    @classmethod
    def of_path(cls, path: list[Entry]) -> TokenTally:
        ctx = build_context(path)
        usage, last = 0, None
        for index in range(len(ctx.messages) - 1, ctx.after_compaction - 1, -1):
            usage = reported_usage(ctx.messages[index])
            if usage > 0:
                last = index
                break
        start = 0 if last is None else last + 1
        trailing = sum(estimate_tokens(m) for m in ctx.messages[start:])
        return cls(path[-1].id if path else None, usage if last is not None else 0, trailing)

    def extended(self, appended: list[Entry], objs: list[dict] | None = None) -> TokenTally | None:
        """The tally after ``appended`` (a chain below ``leaf_id``), or None when it must be rebuilt.

        ``objs``: the appended lines as dicts, when the caller has them (saves decoding each line).
        """
        if not appended or appended[0].parent_id != self.leaf_id:
            return None
        usage, trailing = self.usage, self.trailing
        for index, entry in enumerate(appended):
            kind = entry.type
            if kind in ("compaction", "context_edit") or (kind == "custom" and _PRUNE_MARK in entry.raw):
                return None  # the overlay changes what earlier messages count for
            if objs is not None and kind == "message":
                message = objs[index].get("message")
                if type(message) is dict:
                    content = message.get("content")
                    if type(content) is str and message.get("role") == "user":
                        # (most appends: estimate_tokens of it, without building the message)
                        trailing += -(-len(content) // 4)
                        continue
                    if content is not None:  # (message_of would give it as it is: no call to build it)
                        # (A message without usage reports none, whatever its role: most of a batch's.)
                        reported = reported_usage(message) if "usage" in message else 0
                        if reported > 0:
                            usage, trailing = reported, 0
                        else:
                            trailing += estimate_tokens(message)
                        continue
            message = message_of(entry, objs[index] if objs is not None else None)
            if message is None:
                continue
            reported = reported_usage(message)
            if reported > 0:
                usage, trailing = reported, 0
            else:
                trailing += estimate_tokens(message)
        return TokenTally(appended[-1].id, usage, trailing)
