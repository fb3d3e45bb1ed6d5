"""Whether a model's summary can stand in for the messages it replaces.

An empty, blank or garbled answer (a model that stopped at once, a proxy
that mangled the stream, a degenerate loop) must never become a compaction:
the messages would be gone and nothing would replace them. Such an answer is
replaced by the offline summary, and the compaction says so.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

Reason = Literal["empty", "garbage"]

# Letters and digits. Deliberately low: a terse model (or a client's own summarizer) may
# answer in two words, and that is its right; "ok", "." or a bare "## Goal" are not summaries.
MIN_ALNUM = 5
MIN_READABLE_SHARE = 0.7  # letters, digits, spaces and ordinary punctuation
# In an answer of LOOP_MIN_WORDS words or more: a loop repeats one word, or very few.
LOOP_MIN_WORDS = 20
MAX_TOP_WORD_SHARE = 0.5
MIN_DISTINCT_SHARE = 0.1
# Words; in scripts written without spaces (CJK, kana, hangul) each character counts as one.
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+", re.UNICODE)
_READABLE_PUNCT = set(".,;:!?'\"`()[]{}<>-_/\\*#|=+~@$%^&…–—«»“”‘’，。、；：！？（）「」『』")


def unusable_reason(text: str) -> Reason | None:
    """None when ``text`` reads as a summary; else why it cannot be one."""
    stripped = text.strip()
    if not stripped:
        return "empty"
    alnum = sum(1 for ch in stripped if ch.isalnum())
    if alnum < MIN_ALNUM:
        return "garbage"
    readable = sum(1 for ch in stripped if ch.isalnum() or ch.isspace() or ch in _READABLE_PUNCT)
    if readable / len(stripped) < MIN_READABLE_SHARE or "\ufffd" * 3 in stripped:
        return "garbage"
    words = [w.lower() for w in _WORD.findall(stripped)]
    counts = Counter(words)
    if len(words) >= LOOP_MIN_WORDS and (
        counts.most_common(1)[0][1] / len(words) > MAX_TOP_WORD_SHARE or len(counts) / len(words) < MIN_DISTINCT_SHARE
    ):
        return "garbage"
    return None
