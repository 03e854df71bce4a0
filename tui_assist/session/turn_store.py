"""The store's steps at the end of a turn, as `ChatSession.run_turn` takes them.

Saving never fails the turn: what could not be saved becomes a warning (or a log line, for a
cancelled turn).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_assist.core.conversation import Message
    from tui_assist.core.tree import NodeLog
    from tui_assist.core.turn import TurnResult
    from tui_assist.session.mentions import Attachments
    from tui_assist.store import Store

log = logging.getLogger(__name__)


@dataclass(slots=True)
class TurnOutcome:
    """What running one persisted turn produced, for the host to show."""

    result: TurnResult
    conversation_id: str | None
    saved: bool
    """Whether the turn is in the store (false without a store, or when storing it failed)."""
    warnings: list[str] = field(default_factory=lambda: list[str]())
    """One line each: what the user should know about this turn (e.g. that it was not saved)."""
    attachments: Attachments | None = None
    """The files the prompt's `@path` mentions attached (None when it mentions none)."""
    compacted: bool = False
    """Whether the history was compacted for this turn (its requests sent a shorter history)."""


async def commit_turn(
    store: Store | None, conversation_id: str | None, result: TurnResult, events: NodeLog, warnings: list[str]
) -> bool:
    """Commit a finished turn begun in `store`, from its log; False (and a warning) if it failed."""
    assert store is not None and conversation_id is not None, "a begun turn has both"
    try:
        await store.commit_turn(conversation_id, result, events)
    except Exception as exc:
        log.exception("store: cannot commit the turn")
        warnings.append(f"this turn could not be saved: {exc}")
        return False
    return True


async def store_cancelled(store: Store | None, turn_id: str, events: NodeLog, history: list[Message]) -> bool:
    """Store a cancelled turn begun in `store`, from its log; False if it failed."""
    assert store is not None, "a begun turn has a store"
    try:
        await store.mark_cancelled(turn_id, events, history)
    except Exception:
        log.exception("store: cannot mark the turn cancelled")
        return False
    return True
