"""What the store hands back: small frozen rows, plain data, no database handles."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tui_assist.core.conversation import Message, Usage
from tui_assist.core.evidence import ToolCallRecord


@dataclass(frozen=True, slots=True)
class ConversationRow:
    """One conversation, with how many turns it holds."""

    id: str
    title: str
    model: str
    workdir: str
    created_at: float
    """Unix seconds."""
    updated_at: float
    """Unix seconds of the last turn begun or finished."""
    turn_count: int


@dataclass(frozen=True, slots=True)
class TurnRow:
    """One turn, finished or not."""

    id: str
    conversation_id: str
    seq: int
    """1-based position in its conversation."""
    strategy: str
    prompt: str
    answer: str
    outcome: str
    """`running` until committed; then a closed outcome (`answered`, `cancelled`, ...)."""
    error: str | None
    usage: Usage
    rounds: int
    tool_calls: int
    duration: float
    started_at: float
    finished_at: float | None


@dataclass(frozen=True, slots=True)
class ToolCallRow:
    """One executed tool call of a turn."""

    turn_id: str
    seq: int
    """Execution order within the turn, from 0."""
    round_index: int | None
    """The refine round it belongs to; None for an agent turn's calls."""
    call: ToolCallRecord
    """The call as it ran (a piece of evidence)."""


@dataclass(frozen=True, slots=True)
class RoundRow:
    """One stored refine round."""

    turn_id: str
    index: int
    answer: str
    verdict: str
    feedback: str
    transcript: tuple[Message, ...]
    evidence: tuple[ToolCallRow, ...]
    """The round's tool calls, in execution order (sub-agents included)."""
    usage: Usage
    critic_usage: Usage


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A turn whose prompt or answer matched a search."""

    turn_id: str
    conversation_id: str
    conversation_title: str
    seq: int
    outcome: str
    started_at: float
    prompt_snippet: str
    """The prompt around the match, matched terms in `[...]`."""
    answer_snippet: str


@dataclass(frozen=True, slots=True)
class AuditLine:
    """The audit record of one turn: counts and sizes only, never prompt or answer text."""

    at: float
    conversation_id: str
    turn_id: str
    strategy: str
    """The route the turn took (`agent`, `refine`, later a flow's route)."""
    outcome: str
    rounds: int
    tool_calls: int
    usage: Usage
    duration: float
    hooks_run: int = 0
    """How many times the user's hooks ran in the turn."""
    hooks_blocked: int = 0
    """How many of those runs blocked (exit 2)."""

    def to_json(self) -> str:
        """The line as one compact JSON object."""
        return json.dumps(
            {
                "at": self.at,
                "conversation_id": self.conversation_id,
                "turn_id": self.turn_id,
                "strategy": self.strategy,
                "outcome": self.outcome,
                "rounds": self.rounds,
                "tool_calls": self.tool_calls,
                "hooks_run": self.hooks_run,
                "hooks_blocked": self.hooks_blocked,
                **self.usage.to_dict(),
                "duration": round(self.duration, 3),
            },
            separators=(",", ":"),
        )


@dataclass(frozen=True, slots=True)
class WeekStats:
    """Turn outcomes and token sums of one ISO week (local time), from the audit lines."""

    week: str
    """ISO week, e.g. `2025-W07`."""
    turns: int
    outcomes: dict[str, int]
    usage: Usage
    tool_calls: int
    rounds: int
    flow_runs: int = 0
    """Flow runs (e.g. grounded answers) started this week, from the flow audit lines."""
    flow_outcomes: dict[str, int] = field(default_factory=lambda: dict[str, int]())
    """Flow runs per closed outcome (an approved run counts under its final outcome)."""


@dataclass(frozen=True, slots=True)
class FlowRunRow:
    """One stored flow run: its final (or pending) state and its audit line."""

    run_id: str
    flow: str
    """Which flow ran (`grounded`, ...)."""
    outcome: str
    """The closed outcome; `awaiting_approval` while a person has yet to approve it."""
    state: dict[str, Any]
    """The flow's typed state as JSON data (question and draft included)."""
    audit: dict[str, Any]
    """The run's audit line (counts, ids and sizes only)."""
    created_at: float
    updated_at: float
