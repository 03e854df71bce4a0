"""Steering: prompts the user sent while a turn ran, joining it at its next model request.

The host holds such prompts; the agent loop asks for them (`Steering`) before each model request
after the first, and adds each one as user text after the tool results (so the roles still
alternate), where the model reads it as a correction to the task it is working on. The message
keeps it, so the turn's history does too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from tui_assist.core.conversation import Message, TextBlock

Steering = Callable[[], Sequence[str]]
"""Hands over (and forgets) the prompts that join the running turn now, oldest first."""

JOINED_NOTE: Final = "[The user sent this while you were working; take it into account from here on.]"


def joined_block(text: str) -> TextBlock:
    """A joined prompt as the model reads it: marked as sent mid-turn."""
    return TextBlock(f"{JOINED_NOTE}\n{text}")


def with_joined(message: Message, texts: Sequence[str]) -> Message:
    """`message` (the user message going out next) with the joined prompts `texts` after its blocks."""
    return Message(message.role, (*message.content, *(joined_block(t) for t in texts)))


def task_with_joined(task: str, texts: Sequence[str]) -> str:
    """A task's text with the prompts that joined it while it ran (what a critic judges against)."""
    return "\n\n".join([task, *(joined_block(t).text for t in texts)])
