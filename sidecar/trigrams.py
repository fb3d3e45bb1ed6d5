"""FTS5 trigram lookups that stay cheap for any query: each trigram its own term, not one phrase.

A phrase query matches positions, and its cost grows with the query's length times the text's
(a 10,000-character query against a repetitive 10,000-character text took 0.46 s, ten times that
100 s). Asking for the rows that hold each of at most ``MAX_TERMS`` of the query's trigrams, spread
over it, and then checking the query itself in those rows' texts gives the same rows at the cost of
a few term lookups. It also works on an index that keeps no positions (``detail=none``).
"""

from __future__ import annotations

MAX_TERMS = 32


def trigram_terms(query: str) -> str:
    """An FTS5 query for the rows holding every trigram of ``query`` ("" when it has none, or holds NUL).

    Each trigram is its own quoted term, folded by the tokenizer as the texts were. FTS5 reads a
    text and a query as C strings: nothing past a NUL is indexed, so such a query is for the caller's
    scan of the texts themselves."""
    if "\x00" in query:
        return ""
    grams = list(dict.fromkeys(query[at : at + 3] for at in range(len(query) - 2)))
    if len(grams) > MAX_TERMS:
        step = len(grams) / MAX_TERMS
        grams = [grams[int(n * step)] for n in range(MAX_TERMS - 1)] + [grams[-1]]
    return " AND ".join('"' + gram.replace('"', '""') + '"' for gram in grams)
