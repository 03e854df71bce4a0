"""Shell commands as permission rules see them: a command split into its simple commands.

A command is parsed with a real bash parser (`bashlex`), never split with a regex: `a && b`,
`a; b`, `a | b`, `$(...)`, backticks, subshells, loops, process substitutions and the commands
inside `sudo`/`env`/`timeout`/`bash -c`/`eval` are each a *simple command*. Output redirections to
files are collected too (no rule allows a write by redirection). A command the parser cannot read,
or whose effect it does not expose (`$(...)` inside an unquoted here-document), is reported as
unparsed, with its whole text. `tui_assist.core.permissions` matches the rules against the result.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["INTERPRETERS", "WRAPPERS", "CommandAnalysis", "analyse_command"]

WRAPPERS = frozenset(
    {"sudo", "doas", "env", "nohup", "nice", "timeout", "stdbuf", "xargs", "command", "exec"}
)
"""Programs that run the rest of their words as a command: that command is checked as well."""
INTERPRETERS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
"""`bash -c STRING` runs STRING: it is parsed and checked as well."""
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


@dataclass(frozen=True, slots=True)
class CommandAnalysis:
    """A shell command as the rules see it."""

    commands: tuple[str, ...]
    """Every simple command, normalised: its words (quotes removed) joined by one space."""
    writes: tuple[str, ...] = ()
    """Files that output redirections write to (`> out.txt`): no rule allows those."""
    parsed: bool = True
    """False when the parser could not read the command (`commands` is then the whole text)."""


@functools.lru_cache(maxsize=512)
def analyse_command(command: str) -> CommandAnalysis:
    """Split a shell command into its simple commands with a real bash parser.

    Args:
        command: Bash source, possibly compound and multi-line.

    Returns:
        The simple commands and written files; `parsed=False` (with the whole text, whitespace
        collapsed) when the command cannot be parsed or holds what the parser does not see into
        (such as `$(...)` inside an unquoted here-document).
    """
    whole = " ".join(command.split())
    try:
        found = _Walker().command(command)
    except Exception:  # bashlex raises several types (ParsingError, NotImplementedError, ...)
        return CommandAnalysis((whole,), parsed=False)
    if found is None or not found.commands:
        return CommandAnalysis((whole,), parsed=False)
    return found


class _Unreadable(Exception):
    """A construct whose effect the parser does not expose."""


class _Walker:
    """Collects simple commands and written files from bashlex's tree."""

    def __init__(self) -> None:
        self.commands: list[str] = []
        self.writes: list[str] = []
        self.depth = 0

    def command(self, source: str) -> CommandAnalysis | None:
        parse = _bashlex_parse()

        self.depth += 1
        if self.depth > 8:
            raise _Unreadable("nested too deep")
        # A final newline lets the parser find a here-document's closing word on the last line.
        for tree in parse(source if source.endswith("\n") else source + "\n"):
            self._visit(tree, source)
        self.depth -= 1
        return CommandAnalysis(tuple(dict.fromkeys(self.commands)), tuple(dict.fromkeys(self.writes)))

    def _visit(self, node: Any, source: str) -> None:
        kind: str = node.kind
        if kind == "command":
            self._simple(node, source)
            return
        if kind == "redirect":
            self._redirect(node, source)
            return
        if kind in ("commandsubstitution", "processsubstitution"):
            self._visit(node.command, source)
            return
        for child in _children(node):
            self._visit(child, source)

    def _simple(self, node: Any, source: str) -> None:
        words: list[str] = []
        for part in node.parts:
            if part.kind in ("word", "assignment"):
                words.append(part.word)
                for child in getattr(part, "parts", []):
                    self._visit(child, source)
            elif part.kind == "redirect":
                self._redirect(part, source)
            else:
                self._visit(part, source)
        if words:
            self.commands.append(" ".join(words))
            self._inner(words)

    def _inner(self, words: list[str]) -> None:
        """Also check the command a wrapper (`sudo`, `timeout`, `bash -c`, `eval`) runs."""
        program = os.path.basename(words[0]) if "=" not in words[0] else ""
        rest = words[1:]
        if program == "eval" and rest:
            self.command(" ".join(rest))
        elif program in INTERPRETERS and "-c" in rest[:-1]:
            self.command(rest[rest.index("-c") + 1])
        elif program in WRAPPERS:
            index = 0
            while index < len(rest) and (
                rest[index].startswith("-") or (program == "env" and "=" in rest[index])
            ):
                index += 1
            if program == "timeout" and index < len(rest):
                index += 1  # the duration
            if index < len(rest):
                inner = rest[index:]
                self.commands.append(" ".join(inner))
                self._inner(inner)

    def _redirect(self, node: Any, source: str) -> None:
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None:
            delimiter = source[node.output.pos[0] : node.output.pos[1]]
            quoted = any(q in delimiter for q in ("'", '"', "\\"))
            if not quoted and ("$(" in heredoc.value or "`" in heredoc.value):
                raise _Unreadable("command substitution in a here-document")
            return
        target = getattr(node, "output", None)
        if node.type in _WRITE_REDIRECTS and target is not None and not isinstance(target, int):
            for child in getattr(target, "parts", []):
                self._visit(child, source)
            name: str = target.word
            if name not in _HARMLESS_TARGETS and not name.isdigit() and name != "-":
                self.writes.append(name)
        elif target is not None and not isinstance(target, int):
            for child in getattr(target, "parts", []):
                self._visit(child, source)


@functools.cache
def _bashlex_parse() -> Callable[[str], list[Any]]:
    """The `parse` of bashlex, imported on first use (a slow import, not paid at startup), with one fix.

    bashlex 0.18 compares a here-document's closing line with the delimiter *as written*, so
    `<<'EOF'` (the usual way to write a file from a shell) never ends and fails to parse. Bash
    removes the quotes first; the patched step does too. (Whether the delimiter was quoted, which
    decides if the body is expanded, is read from the source by `_Walker._redirect`.)
    """
    import bashlex  # pyright: ignore[reportMissingTypeStubs]
    import bashlex.heredoc  # pyright: ignore[reportMissingTypeStubs]

    module = cast(Any, bashlex.heredoc)
    original = cast(Callable[..., Any], module.makeheredoc)

    def makeheredoc(tokenizer: Any, redirnode: Any, lineno: int, killleading: bool) -> Any:
        word: str = redirnode.output.word
        redirnode.output.word = word.replace("'", "").replace('"', "").replace("\\", "")
        return original(tokenizer, redirnode, lineno, killleading)

    module.makeheredoc = makeheredoc
    return cast(Callable[[str], list[Any]], cast(Any, bashlex).parse)


def _children(node: Any) -> Iterable[Any]:
    for attribute in ("parts", "list", "redirects"):
        value = getattr(node, attribute, None)
        if isinstance(value, list):
            yield from cast(list[Any], value)
    for attribute in ("command", "output"):
        value = getattr(node, attribute, None)
        if value is not None and hasattr(value, "kind"):
            yield value
