"""Exit codes and the one error line every command prints."""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


def error_line(command: str, message: str) -> str:
    """`tui-assist: <command>: <what went wrong> (<what to do>)`, on one line."""
    return f"tui-assist: {command}: {' '.join(message.split())}"
