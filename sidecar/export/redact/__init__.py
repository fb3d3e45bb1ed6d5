"""Secrets out of text and entries: typed placeholders, the same secret the same placeholder.

redactor = Redactor()
clean = redactor.value(entry_dict)      # the input is left as it is; only what changed is copied
redactor.written(export_text)           # the export as written, checked again
redactor.report()                       # {"aws-access-key": 2, ...}: kinds and counts, never values
"""

from __future__ import annotations

import json
import re
from typing import TypeVar, cast

import msgspec

from .rules import (
    RULES,
    STRUCTURAL_KEYS,
    Rule,
    has_long_run,
    has_name_hint,
    line_gate,
    name_kind,
    named_value,
)

__all__ = ["Redactor", "STRUCTURAL_KEYS"]

_encode = msgspec.json.Encoder().encode

# A JSON container met on the walk, its key in its parent (a name or an index; None at the top),
# and the parent's frame: the way back up to the value walked.
_Container = dict[str, object] | list[object]
_Frame = tuple[_Container, "str | int | None", "_Frame | None"]
_Value = TypeVar("_Value")
# An auth scheme before a credential held under a secret-sounding key ({"Authorization": "Bearer ..."}).
_SCHEMES = ("Bearer ", "Basic ", "Token ", "token ", "bearer ", "basic ", "Bot ", "Digest ")


class Redactor:
    """One export's (or one append's) redaction state: which secret got which placeholder, and counts."""

    def __init__(self, rules: tuple[Rule, ...] = RULES) -> None:
        self._rules = rules
        self._order = {rule.kind: index for index, rule in enumerate(rules)}
        # The named row names its passwords "password" (kinds a row reports beyond its own rank with it).
        self._order.setdefault("password", self._order.get("secret-assignment", len(rules)))
        self._placeholders: dict[str, str] = {}
        self._per_kind: dict[str, int] = {}
        self._names: dict[str, str | None] = {}
        self.counts: dict[str, int] = {}
        # The line gate of the core chosen now (compiled or Python: the same verdicts, one quicker).
        self._may_hold_secret = line_gate().may_hold_secret

    def placeholder(self, kind: str, secret: str) -> str:
        known = self._placeholders.get(secret)
        if known is None:
            number = self._per_kind.get(kind, 0) + 1
            self._per_kind[kind] = number
            known = f"[REDACTED:{kind}:{number}]"
            self._placeholders[secret] = known
        return known

    def text(self, text: str) -> str:
        """``text`` with every secret found replaced by its placeholder.

        A text holding a quote or a backslash is read twice: as it is, and as the JSON-escaped
        text an export writes it as (a tool call quoted in a summary, JSON inside a string), so
        that no way of writing it shows a secret the other way hid."""
        spans = self._find(text)
        if spans is not None and ('"' in text or "\\" in text):
            escaped = _encode(text).decode()[1:-1]
            for start, end, kind in self._find(escaped) or ():
                spans.extend(_decoded_spans(text, escaped[start:end], kind))
        if not spans:
            return text
        # Earlier rows win an overlap (they are the specific shapes); then left to right.
        spans = _disjoint(sorted(spans, key=lambda span: (self._order[span[2]], span[0])))
        out: list[str] = []
        cursor = 0
        for start, end, kind in spans:
            out.append(text[cursor:start])
            out.append(self.placeholder(kind, text[start:end]))
            self.counts[kind] = self.counts.get(kind, 0) + 1
            cursor = end
        out.append(text[cursor:])
        return "".join(out)

    def _find(self, text: str) -> list[tuple[int, int, str]] | None:
        """Every row's spans in ``text``; None when the gates say no row can match it.

        Most text (prose, numbers, short words) holds no run of 12 non-space characters and
        no stem of a secret-sounding name: no row can match it, and it is passed over at C
        speed. Other text is searched by the rows whose needles it holds."""
        long_run = has_long_run(text)
        # The named row needs a separator (=, :, ->) or a flag's dash: most prose has none.
        named = "=" in text or ":" in text or "-" in text
        # The rows whose match may be shorter than a run (a lone BEGIN line, a URL's short password).
        anchored = "PRIVATE KEY" in text or "://" in text
        if not long_run and not named and not anchored:
            return None
        lower = text.lower()
        named = named and has_name_hint(lower)
        if not long_run and not named and not anchored:
            return None
        spans: list[tuple[int, int, str]] = []
        for rule in self._rules:
            if not rule.needle_gated and not (long_run if rule.long_run else named):
                continue
            haystack = lower if rule.lowercase_needles else text
            if rule.needles and not any(needle in haystack for needle in rule.needles):
                continue
            if rule.scan is not None:
                spans.extend(rule.scan(text, lower))
                continue
            for match in rule.pattern.finditer(text):
                if rule.span is not None:
                    found = rule.span(text, match)
                    if found is not None:
                        spans.append(found)
                    continue
                start, end = _secret_span(match, rule.group)
                if start < 0:
                    continue
                if rule.accept is not None and not rule.accept(text[start:end]):
                    continue
                spans.append((start, end, rule.kind))
        return spans

    def _named(self, name: str, text: str) -> str | None:
        """A string held under a secret-sounding key ({"api_key": "..."}, {"Authorization": "Bearer ..."}):
        the key names it, whatever its alphabet. None when the key does not, or the value is no secret."""
        kind = self._names.get(name, "")
        if kind == "":
            kind = self._names[name] = name_kind(name) if len(name) <= 80 else None
        if kind is None:
            return None
        value = text.strip()
        prefix = next((scheme for scheme in _SCHEMES if value.startswith(scheme)), "")
        secret = value[len(prefix) :].strip()
        if len(secret.split(None, 1)) != 1 or not named_value(secret, kind):  # a secret is one token
            return None
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return text.replace(secret, self.placeholder(kind, secret))

    def value(self, value: _Value) -> _Value:
        """A JSON value with its strings redacted (structural fields and image data are left alone).

        Only what changes is copied: a value with no secret is returned as it is, and one with a
        secret gets new containers on the way down to each changed string only. Walked with a
        stack of its own, not by recursion (a value nested hundreds of levels deep ran out of
        Python's stack); strings are met in document order, as the placeholders' numbers follow
        the order secrets first appear in."""
        # A frame is (container, its key in its parent, the parent's frame): the way back up.
        changes: list[tuple[_Frame | None, str | int | None, str]] = []
        # (a value, its key, its container's frame)
        pending: list[tuple[object, str | int | None, _Frame | None]] = [(value, None, None)]
        while pending:
            item, key, frame = pending.pop()
            if isinstance(item, str):
                new = self.text(item)  # a shape's own kind first (a GitHub token under "token")
                if new is item and isinstance(key, str):
                    new = self._named(key, item) or item
                if new is not item and new != item:
                    changes.append((frame, key, new))
            elif isinstance(item, dict):
                own: _Frame = (item, key, frame)
                image = item.get("type") == "image"
                pending.extend(
                    (child, name, own)
                    for name, child in reversed(item.items())
                    if name not in STRUCTURAL_KEYS and not (image and name == "data")
                )
            elif isinstance(item, list):
                own = (item, key, frame)
                pending.extend((item[index], index, own) for index in range(len(item) - 1, -1, -1))
        if not changes:
            return value
        first_frame, _, first = changes[0]
        if first_frame is None:  # the value itself was a string
            return cast(_Value, first)
        copies: dict[int, _Container] = {}
        for frame, key, new in changes:
            _set(_copy_of(frame, copies), key, new)
        return cast(_Value, copies[id(value)])

    def line(self, obj: dict[str, object], raw: bytes | None) -> dict[str, object]:
        """``value`` for an entry read from a session file: ``raw``, its line as written, is looked
        at first, and a line no row can match (its structural fields aside) is returned as it is
        without a walk through it."""
        if raw is not None and not self._may_hold_secret(raw):
            return obj
        return self.value(obj)

    def written(self, text: str, *, json_text: bool = False, html: bool = False) -> str:
        """An export as written (the JSON document, the page's embedded data, the Markdown), checked
        again: every secret this export redacted is looked for in it as written (as it is, JSON-escaped,
        and, in the page, with its ``</`` escaped), and any copy still there is replaced too. A secret
        met in one place under its name is gone from every other place it stands bare in."""
        for secret, placeholder in sorted(self._placeholders.items(), key=lambda item: -len(item[0])):
            escaped = _encode(secret).decode()[1:-1]
            # JSON holds a string only escaped (a quote there as it is would end the string).
            forms = {escaped} if json_text else {secret, escaped}
            if html:
                forms.add(escaped.replace("</", "<\\/").replace("<!--", "\\u003c!--"))
            for form in forms:
                if len(form) >= 8 and form in text:
                    text = text.replace(form, placeholder)  # (counted where it was first met)
        return text

    @property
    def found_any(self) -> bool:
        return bool(self._placeholders)

    def report(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


def _set(container: _Container, key: str | int | None, value: object) -> None:
    if isinstance(container, dict):
        container[cast(str, key)] = value
    else:
        container[cast(int, key)] = value


def _copy_of(frame: _Frame | None, copies: dict[int, _Container]) -> _Container:
    """The copy of ``frame``'s container, made (with its parents' copies pointing at it) if it is not yet."""
    chain: list[_Frame] = []
    while frame is not None and id(frame[0]) not in copies:
        chain.append(frame)
        frame = frame[2]
    for container, key, parent in reversed(chain):
        copy: _Container = dict(container) if isinstance(container, dict) else list(container)
        copies[id(container)] = copy
        if parent is not None:
            _set(copies[id(parent[0])], key, copy)
    if chain:
        return copies[id(chain[0][0])]
    assert frame is not None  # a change's frame is never None past the first check in ``value``
    return copies[id(frame[0])]


def _decoded_spans(text: str, escaped_secret: str, kind: str) -> list[tuple[int, int, str]]:
    """Where a secret found in ``text``'s JSON-escaped form sits in ``text`` itself."""
    candidate = escaped_secret
    while candidate:
        try:
            secret = json.loads(f'"{candidate}"')
            break
        except ValueError:
            candidate = candidate[:-1]  # a cut escape at its end
    else:
        return []
    spans: list[tuple[int, int, str]] = []
    at = text.find(secret) if secret else -1
    while at >= 0:
        spans.append((at, at + len(secret), kind))
        at = text.find(secret, at + len(secret))
    return spans


def _secret_span(match: re.Match[str], group: int) -> tuple[int, int]:
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
