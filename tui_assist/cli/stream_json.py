"""`ask --output-format stream-json`: the turn as it runs, one JSON object per line on stdout.

Each line has a `type`: `turn_started` (`conversation_id`, `turn_id`, `strategy`), `text`
(`node_id`, `text`: a delta), `thinking` (`node_id`, `text`), `tool_call` (`node_id`, `call_id`,
`name`, `input`), `tool_result` (`call_id`, `is_error`, `output`, clipped), `round` (`index`,
`verdict`, `feedback`), `goal` (`state`, `attempts`, `checks`: `[{command, exit_code}]`; a goal's
state when its checks ran: before any attempt, after each, and at its end), `usage` (`node_id`,
`model`, `usage`, and `session`: the session's meter after the call, `usage`, `cost`,
`context`); `todo` (`node_id`, `call_id`, `todos`: the plan a `todo_write` call set, after its
`tool_call` line); `shell` (`shell_id`, `command`, `status`: running|completed|failed|killed,
`exit_code`) when a background shell starts or ends (those still running are killed at exit, so
their `killed` lines come before the end); the last line is `result`, the object `--json` prints.
Every line is flushed as it is written, so a pipe sees each step as it happens.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from tui_assist.core.events import (
    GoalUpdated,
    NodeStarted,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    UsageRecorded,
    VerdictReached,
)
from tui_assist.core.plan import TODO_TOOL, plan_of, todo_dicts
from tui_assist.core.text import truncation_marker
from tui_assist.session.headless import HeadlessHost

if TYPE_CHECKING:
    from tui_assist.tools.background import ShellInfo

MAX_OUTPUT_CHARS = 4_000
"""Characters of a tool's output a `tool_result` line carries (the rest is cut with a marker)."""


class StreamJsonHost(HeadlessHost):
    """The `ask` host that writes each step of the turn as one JSON line."""

    def __init__(self, out: TextIO | None = None) -> None:
        """Write the lines to `out` (stdout); no progress lines on stderr."""
        super().__init__(progress=False)
        self._stream = out or sys.stdout
        self._strategy = "agent"
        self._following_shells = False

    def emit(self, data: dict[str, Any]) -> None:
        """Write one line, and flush it."""
        self._stream.write(json.dumps(data, ensure_ascii=False) + "\n")
        self._stream.flush()

    def turn_started(self, prompt: str, strategy: str) -> None:
        """Keep the strategy for the `turn_started` line (written when the turn's node starts)."""
        self._strategy = strategy
        shells = self.controller.session.shells if self.controller is not None else None
        if shells is not None and not self._following_shells:
            self._following_shells = True
            shells.subscribe(self._shell_line)

    def _shell_line(self, info: ShellInfo) -> None:
        self.emit(
            {
                "type": "shell",
                "shell_id": info.shell_id,
                "command": info.command,
                "status": info.status,
                "exit_code": info.exit_code,
            }
        )

    def on_event(self, event: TurnEvent) -> None:
        """Write the line the event makes, if any."""
        line = self._line(event)
        if line is not None:
            self.emit(line)
        if isinstance(event, ToolCallStarted) and event.name == TODO_TOOL:
            todos = todo_dicts(plan_of(event.input))
            self.emit({"type": "todo", "node_id": event.node_id, "call_id": event.call_id, "todos": todos})

    def _line(self, event: TurnEvent) -> dict[str, Any] | None:
        match event:
            case NodeStarted(node_kind="turn", node_id=node_id):
                conversation_id = self.controller.session.conversation_id if self.controller else None
                return {
                    "type": "turn_started",
                    "conversation_id": conversation_id,
                    "turn_id": node_id,
                    "strategy": self._strategy,
                }
            case TextDelta(node_id=node_id, text=text):
                return {"type": "text", "node_id": node_id, "text": text}
            case ToolCallStarted(node_id=node_id, call_id=call_id, name=name, input=input_):
                return {
                    "type": "tool_call",
                    "node_id": node_id,
                    "call_id": call_id,
                    "name": name,
                    "input": input_,
                }
            case ToolCallFinished(call_id=call_id, is_error=is_error, output=output):
                return {
                    "type": "tool_result",
                    "call_id": call_id,
                    "is_error": is_error,
                    "output": _clipped(output),
                }
            case VerdictReached(round=index, verdict=verdict, feedback=feedback):
                return {"type": "round", "index": index, "verdict": verdict, "feedback": feedback}
            case UsageRecorded(node_id=node_id, model=model, usage=usage):
                return {
                    "type": "usage",
                    "node_id": node_id,
                    "model": model,
                    "usage": usage.to_dict(),
                    "session": self._meter(),
                }
            case GoalUpdated(state=state, attempts=attempts, checks=checks):
                return {
                    "type": "goal",
                    "state": state,
                    "attempts": attempts,
                    "checks": [{"command": c.command, "exit_code": c.exit_code} for c in checks],
                }
            case ThinkingDelta(node_id=node_id, text=text):
                return {"type": "thinking", "node_id": node_id, "text": text}
            case _:
                pass
        return None

    def _meter(self) -> dict[str, Any] | None:
        """The session's meter after this call (the controller counts a call before showing it)."""
        if self.controller is None:
            return None
        session = self.controller.session
        meter = session.meter
        return {"usage": meter.usage.to_dict(), "cost": meter.cost, "context": session.context_fill}


def _clipped(output: str) -> str:
    if len(output) <= MAX_OUTPUT_CHARS:
        return output
    return output[:MAX_OUTPUT_CHARS] + truncation_marker(len(output) - MAX_OUTPUT_CHARS)
