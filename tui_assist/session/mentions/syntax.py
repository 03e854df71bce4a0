r"""How a mention is written, and finding the mentions of a prompt.

`@` starts a mention at the start of the text, after whitespace or after an opening bracket or
quote (`(`, `[`, `{`, `<`, `"`, `'`, a backtick), so `a@b.com` is not one. The path runs to the
next whitespace; trailing punctuation (`,;:!?` and closing brackets and quotes, and a final `.`
after a name) is not part of it, so `see @app.py.` names `app.py`. A path with spaces is quoted:
`@"my notes.txt"` (inside the quotes `\"` and `\\` stand for `"` and `\`). Mentions inside fenced
code blocks (```` ``` ````) are ignored: pasted code is full of decorators.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui_assist.core.text import CompletionSpan

_OPENERS = "([{<\"'`"
_MENTION = re.compile(r"""(?<![^\s([{<"'`])@(?:"(?P<quoted>(?:[^"\\\n]|\\.)*)"|(?P<bare>[^\s"]\S*))""")
_TRAILING = frozenset(",;:!?)]}>\"'`")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_UNESCAPE = re.compile(r"\\([\"\\])")


@dataclass(frozen=True, slots=True)
class Mention:
    """One `@path` in a prompt."""

    path: str
    """The path as written, without `@`, quotes or trailing punctuation."""
    start: int
    """Index of the `@` in the prompt."""
    end: int
    """Index just past the mention (past the closing quote, before trailing punctuation)."""


def find_mentions(prompt: str) -> list[Mention]:
    """The `@path` mentions of a prompt, in order (see the module docstring for the syntax).

    Args:
        prompt: The prompt as typed.

    Returns:
        Every mention outside fenced code blocks.
    """
    fences = [match.span() for match in _FENCE.finditer(prompt)]
    mentions: list[Mention] = []
    for match in _MENTION.finditer(prompt):
        if any(start <= match.start() < end for start, end in fences):
            continue
        quoted = match.group("quoted")
        if quoted is not None:
            if quoted:
                mentions.append(Mention(_UNESCAPE.sub(r"\1", quoted), match.start(), match.end()))
            continue
        path = _strip_trailing(match.group("bare"))
        if path:
            mentions.append(Mention(path, match.start(), match.start() + 1 + len(path)))
    return mentions


def _strip_trailing(token: str) -> str:
    while token:
        last = token[-1]
        # A final dot ends a sentence, but `..` and `dir/.` are paths.
        if last in _TRAILING or (last == "." and len(token) > 1 and token[-2] not in "./"):
            token = token[:-1]
        else:
            break
    return token


def mention_at(text: str, cursor: int) -> CompletionSpan | None:
    """The mention the cursor is in, if any, for completing it.

    Args:
        text: The prompt being typed.
        cursor: The cursor's index in `text`.

    Returns:
        The query typed so far and the span to replace with the chosen `Completion.mention`, or
        None when the cursor is not in a mention (after a space, in an e-mail address).
    """
    line_start = text.rfind("\n", 0, cursor) + 1
    at = text.rfind("@", line_start, cursor)
    while at >= 0:
        if at == 0 or text[at - 1].isspace() or text[at - 1] in _OPENERS:
            typed = text[at + 1 : cursor]
            if typed.startswith('"'):
                body = typed[1:]
                if re.fullmatch(r'(?:[^"\\]|\\.)*\\?', body):  # still inside the quotes
                    close = re.compile(r'(?:[^"\\\n]|\\.)*"?').match(text, cursor)
                    end = close.end() if close else cursor
                    return CompletionSpan(at, end, _UNESCAPE.sub(r"\1", body.rstrip("\\")))
                return None
            if any(char.isspace() for char in typed):
                return None
            after = re.compile(r"\S*").match(text, cursor)
            return CompletionSpan(at, after.end() if after else cursor, typed)
        at = text.rfind("@", line_start, at)
    return None


def format_mention(path: str) -> str:
    """The text that mentions `path`: `@path`, or `@"path"` when it holds spaces or quotes.

    Args:
        path: A relative path, as `Completion.path` gives it.

    Returns:
        A mention that `find_mentions` reads back as `path`.
    """
    if path and _strip_trailing(path) == path and not any(char.isspace() or char == '"' for char in path):
        return "@" + path
    return '@"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'
