"""Secrets out of text and entries: typed placeholders, the same secret the same placeholder.

    redactor = Redactor()
    clean = redactor.value(entry_dict)      # a new structure; the input is left as it is
    redactor.report()                       # {"aws-access-key": 2, ...}: kinds and counts, never values
"""

from __future__ import annotations

from typing import Any

from .rules import RULES, Rule, has_long_run, has_password_hint, line_may_hold_secret

# Fields that hold the tree's structure or an identity, never free text: changing
# them would break parentId links or tool-call pairing.
STRUCTURAL_KEYS = frozenset(
    {"type", "id", "parentId", "timestamp", "targetId", "firstKeptEntryId", "fromId", "toolCallId", "role",
     "api", "provider", "model", "modelId", "stopReason", "mimeType", "customType", "thinkingSignature"}
)


class Redactor:
    """One export's (or one append's) redaction state: which secret got which placeholder, and counts."""

    def __init__(self, rules: tuple[Rule, ...] = RULES) -> None:
        self._rules = rules
        self._order = {rule.kind: index for index, rule in enumerate(rules)}
        self._placeholders: dict[str, str] = {}
        self._per_kind: dict[str, int] = {}
        self.counts: dict[str, int] = {}

    def placeholder(self, kind: str, secret: str) -> str:
        known = self._placeholders.get(secret)
        if known is None:
            number = self._per_kind.get(kind, 0) + 1
            self._per_kind[kind] = number
            known = f"[REDACTED:{kind}:{number}]"
            self._placeholders[secret] = known
        return known

    def text(self, text: str) -> str:
        """``text`` with every secret found replaced by its placeholder."""
        spans: list[tuple[int, int, str]] = []
        # Most text (prose, numbers, short words) holds no run of 12 non-space characters and
        # no password name: no row can match it, and it is passed over at C speed. Other text
        # is searched by the rows whose needles it holds.
        long_run = has_long_run(text)
        password = has_password_hint(text)
        if not long_run and not password:
            return text
        lower = text.lower()
        for rule in self._rules:
            if not (long_run if rule.long_run else password):
                continue
            haystack = lower if rule.lowercase_needles else text
            if rule.needles and not any(needle in haystack for needle in rule.needles):
                continue
            for match in rule.pattern.finditer(text):
                start, end = _secret_span(match, rule.group)
                if start < 0:
                    continue
                if rule.accept is not None and not rule.accept(text[start:end]):
                    continue
                spans.append((start, end, rule.kind))
        if not spans:
            return text
        # Earlier rows win an overlap (they are the specific shapes); then left to right.
        spans = _disjoint(sorted(spans, key=lambda span: self._order[span[2]]))
        out: list[str] = []
        cursor = 0
        for start, end, kind in spans:
            out.append(text[cursor:start])
            out.append(self.placeholder(kind, text[start:end]))
            self.counts[kind] = self.counts.get(kind, 0) + 1
            cursor = end
        out.append(text[cursor:])
        return "".join(out)

    def value(self, value: Any) -> Any:
        """A JSON value with its strings redacted (structural fields and image data are left alone).

        Walked with a stack of its own, not by recursion: a value nested as deep as the protocol reads
        (hundreds of levels) ran out of Python's stack. Strings are met in document order, as the
        placeholders' numbers follow the order secrets first appear in."""
        top: list[Any] = [None]
        pending: list[tuple[Any, Any, Any]] = [(value, top, 0)]  # (a value, the copy holding it, its key there)
        while pending:
            item, holder, key = pending.pop()
            if isinstance(item, str):
                holder[key] = self.text(item)
            elif isinstance(item, list):
                copy: Any = [None] * len(item)
                holder[key] = copy
                pending.extend((child, copy, index) for index, child in reversed(list(enumerate(item))))
            elif isinstance(item, dict):
                copy = dict.fromkeys(item)  # (the keys in their order; each value set below)
                holder[key] = copy
                image = item.get("type") == "image"
                walked = []
                for name, child in item.items():
                    if name in STRUCTURAL_KEYS or (image and name == "data"):
                        copy[name] = child
                    else:
                        walked.append((child, copy, name))
                pending.extend(reversed(walked))
            else:
                holder[key] = item
        return top[0]

    def line(self, obj: dict[str, Any], raw: bytes | None) -> dict[str, Any]:
        """``value`` for an entry read from a session file: ``raw``, its line as written, is looked
        at first, and a line no row can match is returned as it is without a walk through it."""
        if raw is not None and not line_may_hold_secret(raw):
            return obj
        return self.value(obj)

    def report(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


def _secret_span(match: Any, group: int) -> tuple[int, int]:
    if group == 0:
        return match.span()
    # A row whose alternatives each capture their own group: the one that matched.
    for index in range(group, (match.re.groups or 0) + 1):
        if match.group(index) is not None:
            return match.span(index)
    return -1, -1


def _disjoint(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Keep spans in rule order, dropping any that overlaps one already kept; return them by position."""
    kept: list[tuple[int, int, str]] = []
    for span in spans:
        if all(span[1] <= other[0] or span[0] >= other[1] for other in kept):
            kept.append(span)
    kept.sort()
    return kept
