"""A round's evidence: the tool calls it ran, as they ran (what the critic judges, what the store keeps).

Its own module so that the store can read and write it without loading the agent loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One executed tool call, as it ran: a piece of a round's evidence."""

    node_id: str
    parent_id: str
    name: str
    input: dict[str, Any]
    output: str
    is_error: bool
    duration: float
