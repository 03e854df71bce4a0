"""A turn's core events as ACP `session/update`s: the answer, thinking, tool calls and the refine plan.

`TurnUpdates` turns one turn's events (live, or replayed from the store) into the updates an ACP
client shows. It folds each event once, into its `NodeLog`, and asks the log what the event is
(the answer is what the log calls a main generator's text, as in the TUI):

- the answer's text deltas are `agent_message_chunk`s; thinking and the critic's reply are
  `agent_thought_chunk`s (a sub-agent's text stays inside its `think` tool call; a summariser's
  text is not sent);
- every tool call is a `tool_call`, then a `tool_call_update` when it returns: kind `execute` for
  bash (its output as content), `edit` for editor writes (a `diff` content with the absolute path,
  the file as it was before the call and as it is after), `read` for views, `think` for
  sub-agents;
- the refine rounds are the entries of a `plan` (each round's generate step and critic verdict),
  sent whole each time one moves; a `todo_write` call's todo list is sent as the `plan` too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import helpers
from acp.schema import PlanEntry, ToolCallProgress, ToolCallStart, ToolCallUpdate

from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    StreamRetried,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    VerdictReached,
)
from tui_assist.core.plan import plan_of
from tui_assist.core.text import clip
from tui_assist.core.tree import NodeLog

if TYPE_CHECKING:
    from acp.helpers import SessionUpdate, ToolCallContentVariant
    from acp.schema import ToolKind

    from tui_assist.core.events import TurnEvent

log = logging.getLogger(__name__)

EDITOR = "str_replace_based_edit_tool"
MAX_DIFF_BYTES = 1_000_000
"""Files larger than this get no diff content (the editor reads them whole)."""
MAX_OUTPUT_CHARS = 20_000
"""Characters of a tool's output sent as its content."""


@dataclass(slots=True)
class _Call:
    """What is known of a tool call between its start and its end."""

    name: str
    input: dict[str, Any]
    kind: ToolKind
    title: str
    path: Path | None = None
    """The absolute path an editor call works on."""
    before: str | None = None
    """The file's text before an editor write (None: it did not exist, or could not be read)."""


def tool_kind(name: str, data: dict[str, Any]) -> ToolKind:
    """The ACP kind of a tool call: `execute`, `edit`, `read`, `think`, `fetch` or `other`."""
    if name == "bash":
        return "execute"
    if name == EDITOR:
        return "read" if data.get("command") == "view" else "edit"
    if name == "agent":
        return "think"
    if name == "web_fetch":
        return "fetch"
    return "other"


def _title(name: str, data: dict[str, Any]) -> str:
    if name == "bash":
        return clip(str(data.get("command", "bash")), 200)
    if name == EDITOR:
        return f"{data.get('command', 'edit')} {data.get('path', '')}".strip()
    if name == "agent":
        return f"agent: {clip(str(data.get('description', '')), 120)}"
    return name


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_DIFF_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


class TurnUpdates:
    """One turn's events as ACP session updates, read off the turn's `NodeLog`."""

    def __init__(self, workdir: Path, *, live: bool = True) -> None:
        """Fold events of a turn run in `workdir`.

        Args:
            workdir: Where relative editor paths point.
            live: Whether the events happen now (editor diffs then read the file before and
                after the call); a replayed turn's diffs show what the call's input says.
        """
        self._workdir = workdir
        self._live = live
        self.log = NodeLog()
        """The one fold of the turn's events here: every question about a node is asked of it."""
        self._calls: dict[str, _Call] = {}
        """What was read for each tool call (its title, the file before an editor write)."""
        self._plan: list[PlanEntry] = []
        self._entries: dict[str, int] = {}
        """Node id (a generate or critic node) -> its plan entry."""
        self._streamed: set[str] = set()
        """Nodes whose text went out as the answer since their stream (re)started."""

    # -- events --------------------------------------------------------------------------------

    def updates(self, event: TurnEvent) -> list[SessionUpdate]:
        """Fold one event into the log; the updates it makes (often none)."""
        self.log.apply(event)
        match event:
            case NodeStarted(node_id=node_id, node_kind=kind):
                return self._node_started(node_id, kind)
            case NodeFinished(node_id=node_id):
                return self._node_finished(node_id)
            case TextDelta(node_id=node_id, text=text) if text:
                return self._text(node_id, text)
            case StreamRetried(node_id=node_id) if node_id in self._streamed:
                # What was streamed can't be taken back: say that it starts over.
                self._streamed.discard(node_id)
                return [helpers.update_agent_message_text("\n\n*(the stream broke; starting over)*\n\n")]
            case ToolCallStarted(name="todo_write", input=todos):  # the model's plan is the plan
                entries = [helpers.plan_entry(item.label, status=item.status) for item in plan_of(todos)]
                return [self._tool_started(event), helpers.update_plan(entries)]
            case ToolCallStarted():
                return [self._tool_started(event)]
            case ToolCallFinished():
                return [self._tool_finished(event)]
            case VerdictReached(node_id=node_id, verdict=verdict, feedback=feedback):
                return self._verdict(node_id, verdict, feedback)
            case ThinkingDelta(node_id=node_id, text=text) if text and not self._in_subagent(node_id):
                return [helpers.update_agent_thought_text(text)]
            case _:
                pass
        return []

    def _text(self, node_id: str, text: str) -> list[SessionUpdate]:
        if self._is_critic(node_id):
            return [helpers.update_agent_thought_text(text)]
        if self.log.is_main_generator(node_id):
            self._streamed.add(node_id)
            return [helpers.update_agent_message_text(text)]
        return []  # a sub-agent's or a summariser's text is not the answer

    def _in_subagent(self, node_id: str) -> bool:
        """Whether the node runs under a tool call (an `agent` tool's sub-agent)."""
        return any(a.kind == "tool" for a in self.log.ancestors(node_id))

    def _is_critic(self, node_id: str) -> bool:
        record = self.log.nodes.get(node_id)
        return record is not None and record.kind == "critic" and not self._in_subagent(node_id)

    # -- the refine plan -----------------------------------------------------------------------

    def _round_name(self, node_id: str) -> str:
        """`Round N` for the node's round, or `Attempt N` where a goal labels its rounds attempts."""
        record = self.log.nodes.get(node_id)
        line = [*([record] if record is not None else []), *self.log.ancestors(node_id)]
        enclosing = next((r for r in line if r.kind == "round"), None)
        word = "Attempt" if enclosing is not None and enclosing.label.startswith("attempt") else "Round"
        return f"{word} {self.log.round_of(node_id) or 1}"

    def _node_started(self, node_id: str, kind: str) -> list[SessionUpdate]:
        name = self._round_name(node_id)
        if kind == "generate" and self.log.is_main_generator(node_id):
            updates: list[SessionUpdate] = []
            if (self.log.round_of(node_id) or 1) > 1:  # the next draft follows the previous one
                updates.append(helpers.update_agent_message_text(f"\n\n---\n**{name}**\n\n"))
            return [*updates, self._add_entry(node_id, f"{name}: generate")]
        if self._is_critic(node_id):
            return [self._add_entry(node_id, f"{name}: critic")]
        return []

    def _node_finished(self, node_id: str) -> list[SessionUpdate]:
        index = self._entries.get(node_id)
        if index is None or self._plan[index].status == "completed":
            return []
        self._plan[index] = self._plan[index].model_copy(update={"status": "completed"})
        return [helpers.update_plan(self._plan)]

    def _verdict(self, node_id: str, verdict: str, feedback: str) -> list[SessionUpdate]:
        index = self._entries.get(node_id)
        if index is None:
            return []
        said = f": {clip(feedback, 200)}" if feedback.strip() else ""
        content = f"{self._round_name(node_id)}: critic {verdict.upper()}{said}"
        self._plan[index] = self._plan[index].model_copy(update={"content": content, "status": "completed"})
        return [helpers.update_plan(self._plan)]

    def _add_entry(self, node_id: str, content: str) -> SessionUpdate:
        self._entries[node_id] = len(self._plan)
        self._plan.append(helpers.plan_entry(content, status="in_progress"))
        return helpers.update_plan(self._plan)

    # -- tool calls ----------------------------------------------------------------------------

    def _tool_started(self, event: ToolCallStarted) -> ToolCallStart:
        kind = tool_kind(event.name, event.input)
        call = _Call(event.name, event.input, kind, _title(event.name, event.input))
        self._calls[event.node_id] = call
        content: list[ToolCallContentVariant] = []
        if event.name == EDITOR and isinstance(event.input.get("path"), str):
            call.path = path = (self._workdir / event.input["path"]).resolve()
            if kind == "edit":
                call.before = _read(path) if self._live else None
                if (diff := self._proposed_diff(call)) is not None:
                    content.append(diff)
        return helpers.start_tool_call(
            event.node_id,
            call.title,
            kind=kind,
            status="pending",
            content=content or None,
            locations=[_location(call.path)] if call.path else None,
            raw_input=event.input,
        )

    def _tool_finished(self, event: ToolCallFinished) -> ToolCallProgress:
        call = self._calls.get(event.node_id) or _Call(event.name, {}, tool_kind(event.name, {}), event.name)
        content: list[ToolCallContentVariant] = []
        if call.kind == "edit" and call.path is not None and not event.is_error:
            after = _read(call.path) if self._live and call.path is not None else None
            if after is not None:
                content.append(helpers.tool_diff_content(str(call.path), after, call.before))
            elif (diff := self._proposed_diff(call)) is not None:
                content.append(diff)
        elif event.output and (call.kind != "edit" or event.is_error):
            output = (
                event.output
                if len(event.output) <= MAX_OUTPUT_CHARS
                else event.output[:MAX_OUTPUT_CHARS] + "…"
            )
            content.append(helpers.tool_content(helpers.text_block(output)))
        return helpers.update_tool_call(
            event.node_id,
            status="failed" if event.is_error else "completed",
            content=content or None,
            raw_output={"output": event.output, "is_error": event.is_error},
        )

    def _proposed_diff(self, call: _Call) -> ToolCallContentVariant | None:
        """The diff an editor call's input describes (for the permission request and replays)."""
        assert call.path is not None
        data, before = call.input, call.before
        match data.get("command"):
            case "create" if isinstance(data.get("file_text"), str):
                return helpers.tool_diff_content(str(call.path), data["file_text"], before)
            case "str_replace" if isinstance(data.get("old_str"), str):
                old, new = data["old_str"], str(data.get("new_str", ""))
                if before is not None and before.count(old) == 1:
                    return helpers.tool_diff_content(str(call.path), before.replace(old, new), before)
                return helpers.tool_diff_content(str(call.path), new, old)  # the edited region alone
            case _:
                return None

    def permission_call(self, node_id: str) -> ToolCallUpdate:
        """The tool call a permission request is about (the one started with `node_id`)."""
        call = self._calls.get(node_id)
        if call is None:
            return ToolCallUpdate(tool_call_id=node_id)
        diff = self._proposed_diff(call) if call.kind == "edit" and call.path is not None else None
        return ToolCallUpdate(
            tool_call_id=node_id,
            title=call.title,
            kind=call.kind,
            status="pending",
            content=[diff] if diff is not None else None,
            locations=[_location(call.path)] if call.path else None,
            raw_input=call.input,
        )


def _location(path: Path) -> Any:
    from acp.schema import ToolCallLocation

    return ToolCallLocation(path=str(path))
