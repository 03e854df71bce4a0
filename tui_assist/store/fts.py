"""Turning what a user types into a safe FTS5 query.

FTS5 has its own query language, in which `"`, `-`, `*`, `:`, `(`, `AND` and friends mean
something, and a stray one is a syntax error. Users type search terms, not queries, so every
whitespace-separated term becomes a quoted phrase (inner quotes doubled) with a prefix star, and
the terms are ANDed: `foo"bar -x` searches for the phrase `foo bar*` and the prefix `x*`.
"""

from __future__ import annotations


def fts_query(text: str) -> str | None:
    """Build an FTS5 MATCH expression from free text.

    Args:
        text: What the user typed.

    Returns:
        The expression, or None when the text holds no searchable characters (then nothing
        can match and the caller should not query at all).
    """
    terms = [term for term in text.split() if any(ch.isalnum() for ch in term)]
    if not terms:
        return None
    return " ".join('"' + term.replace('"', '""') + '"*' for term in terms)
