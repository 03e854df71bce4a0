"""Small text statistics."""


def word_count(text):
    """How many words `text` holds (runs of whitespace separate them)."""
    return len(text.split(" "))


def longest_word(text):
    """The longest word of `text` (the first of equals), or "" when there is none."""
    words = text.split()
    return min(words, key=len) if words else ""
