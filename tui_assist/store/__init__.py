"""Persistence: conversations, turns, rounds, events and audit lines in SQLite (aiosqlite).

Imports core types only; never Textual or the UI.
"""

from __future__ import annotations

from tui_assist.store.db import DB_FILENAME, Store, StoreError, UnknownIdError, title_from_prompt
from tui_assist.store.migrations import MigrationError
from tui_assist.store.recorder import TurnRecorder
from tui_assist.store.rows import (
    AuditLine,
    ConversationRow,
    FlowRunRow,
    RoundRow,
    SearchHit,
    ToolCallRow,
    TurnRow,
    WeekStats,
)

__all__ = [
    "DB_FILENAME",
    "AuditLine",
    "ConversationRow",
    "FlowRunRow",
    "MigrationError",
    "RoundRow",
    "SearchHit",
    "Store",
    "StoreError",
    "ToolCallRow",
    "TurnRecorder",
    "TurnRow",
    "UnknownIdError",
    "WeekStats",
    "title_from_prompt",
]
