"""Events: plain, frozen, serializable facts about running nodes.

Every running thing is a node (`node_id`, `parent_id`, `node_kind`, `label`). Hosts turn these
facts into whatever they like (a tree, a panel, a log line); the store keeps them so a finished
turn can be redrawn as the same tree. `kind` is the discriminator used for (de)serialization.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from tui_assist.core.conversation import Usage

NodeKind = Literal[
    "turn",
    "round",
    "generate",
    "critic",
    "agent",
    "tool",
    "step",
    "chain",
    "route",
    "parallel",
    "orchestrator",
    "refine",
    "flow",
    "compact",
    "hook",
]
NodeStatus = Literal["done", "failed", "cancelled"]
Verdict = Literal["pass", "revise"]
GoalState = Literal["running", "achieved", "unmet", "budget-limited", "paused", "blocked"]
"""A goal's state: `running` until it ends in one of the others (a DESIGN.md contract)."""


def _now() -> float:
    return time.time()


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeStarted:
    """A node began: a turn, a round, a model call, a workflow step..."""

    node_id: str
    parent_id: str | None
    node_kind: NodeKind
    label: str
    detail: str = ""
    """What the node was given (a prompt, an input summary), for review panels."""
    at: float = field(default_factory=_now)
    kind: Literal["node_started"] = "node_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeFinished:
    """A node ended, well or not."""

    node_id: str
    status: NodeStatus = "done"
    outcome: str | None = None
    """For turns and flows: the closed outcome (`answered`, `unverified`, ...)."""
    output: str = ""
    error: str | None = None
    at: float = field(default_factory=_now)
    kind: Literal["node_finished"] = "node_finished"


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """A piece of streamed model text."""

    node_id: str
    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDelta:
    """A piece of streamed extended thinking (shown dimmed; never part of the answer)."""

    node_id: str
    text: str
    kind: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True, slots=True)
class FileDiff:
    """What one file write changed, from the tool's own before and after.

    Hosts draw it as a diff; the ACP host sends it as `{path, oldText, newText}`.
    """

    path: str
    """The absolute path written."""
    old_text: str | None
    """The file's text before the write; None when the write created it."""
    new_text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamRetried:
    """A model stream broke and is being retried: text streamed so far for the node is void."""

    node_id: str
    attempt: int
    error: str
    kind: Literal["stream_retried"] = "stream_retried"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted:
    """The runtime is executing a tool call; the call is a node of its own."""

    node_id: str
    parent_id: str
    call_id: str
    name: str
    input: dict[str, Any]
    at: float = field(default_factory=_now)
    kind: Literal["tool_call_started"] = "tool_call_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFinished:
    """A tool call returned a result (an error result included)."""

    node_id: str
    call_id: str
    name: str
    output: str
    is_error: bool = False
    duration: float = 0.0
    diff: FileDiff | None = None
    """For a file write by the editor tool: the file's text before and after."""
    at: float = field(default_factory=_now)
    kind: Literal["tool_call_finished"] = "tool_call_finished"


@dataclass(frozen=True, slots=True, kw_only=True)
class VerdictReached:
    """A critic judged a round."""

    node_id: str
    round: int
    verdict: Verdict
    feedback: str
    kind: Literal["verdict_reached"] = "verdict_reached"


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageRecorded:
    """Tokens spent by one model call."""

    node_id: str
    usage: Usage
    model: str = ""
    cut: bool = False
    """The call was cancelled before it finished: `usage` is what the API had reported by then
    (a finished call's usage marks the end of a response; a cut call's does not)."""
    kind: Literal["usage_recorded"] = "usage_recorded"


@dataclass(frozen=True, slots=True, kw_only=True)
class GoalCheck:
    """One check command of a goal as it last ran: its exit code (None: it did not run to an end)."""

    command: str
    exit_code: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class GoalUpdated:
    """A goal's state after its checks ran: before any attempt, after each attempt, at its end."""

    node_id: str
    """The goal's turn node."""
    state: GoalState
    attempts: int
    """Attempts made so far."""
    checks: tuple[GoalCheck, ...] = ()
    kind: Literal["goal_updated"] = "goal_updated"


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptJoined:
    """A prompt the user sent while the turn ran joined it: it goes with the agent's next request."""

    node_id: str
    """The agent (or refine generator) whose request it joined."""
    text: str
    """The prompt as typed."""
    kind: Literal["prompt_joined"] = "prompt_joined"


TurnEvent = (
    NodeStarted
    | NodeFinished
    | TextDelta
    | ThinkingDelta
    | StreamRetried
    | ToolCallStarted
    | ToolCallFinished
    | VerdictReached
    | UsageRecorded
    | GoalUpdated
    | PromptJoined
)

_EVENT_TYPES: dict[str, type[Any]] = {
    cls.__dataclass_fields__["kind"].default: cls
    for cls in (
        NodeStarted,
        NodeFinished,
        TextDelta,
        ThinkingDelta,
        StreamRetried,
        ToolCallStarted,
        ToolCallFinished,
        VerdictReached,
        UsageRecorded,
        GoalUpdated,
        PromptJoined,
    )
}


def event_to_dict(event: TurnEvent) -> dict[str, Any]:
    """A JSON-ready dict of an event (with its `kind`)."""
    return asdict(event)


def event_from_dict(data: dict[str, Any]) -> TurnEvent:
    """Rebuild an event from `event_to_dict`'s output.

    Raises:
        ValueError: on an unknown `kind`.
    """
    cls = _EVENT_TYPES.get(str(data.get("kind")))
    if cls is None:
        raise ValueError(f"unknown event kind: {data.get('kind')!r}")
    names = {f.name for f in fields(cls)}
    kwargs = {k: v for k, v in data.items() if k in names}
    if cls is UsageRecorded:
        kwargs["usage"] = Usage(**kwargs["usage"])
    if cls is ToolCallFinished and isinstance(kwargs.get("diff"), dict):
        kwargs["diff"] = FileDiff(**kwargs["diff"])
    if cls is GoalUpdated:
        kwargs["checks"] = tuple(GoalCheck(**c) for c in kwargs.get("checks", ()))
    event: TurnEvent = cls(**kwargs)
    return event
