"""`ShellTurn`: a prompt `!COMMAND` runs COMMAND in the turn's shell, with no model call.

The command goes through the very path a model's `bash` call takes (input checks, the approval
rules and dialog, the sandbox, the tool-call events, the evidence), because the loop that runs it
is the agent loop itself, fed by a stand-in for the model that proposes exactly the user's command
and then answers with its output. The conversation keeps the command and its output as one user
message, which the next prompt's request sends as context:

```
<bash-input>ls</bash-input>
<bash-output>
app.py
</bash-output>
```
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Final

from tui_assist.core.agent import run_agent
from tui_assist.core.approval import ApprovalPolicy
from tui_assist.core.budget import Budget, BudgetTracker
from tui_assist.core.conversation import (
    Message,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from tui_assist.core.model import ModelRequest, ModelResponse, StreamSink
from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import TurnObserver
from tui_assist.core.tool_labels import BASH_TOOL
from tui_assist.core.tooling import ToolboxFactory
from tui_assist.core.turn import Stopwatch, StrategyName, TurnDeps, TurnRequest, TurnResult, TurnStrategy

SHELL_PREFIX: Final = "!"
NO_SHELL: Final = "this session has no shell (the bash tool is not available)"


def is_shell_prompt(prompt: str) -> bool:
    """Whether a prompt is a shell passthrough: `!` and a command."""
    return prompt.startswith(SHELL_PREFIX) and bool(prompt[1:].strip())


def shell_context(command: str, output: str) -> str:
    """The user message that keeps a command and its output as context for the next prompt."""
    return f"<bash-input>{command}</bash-input>\n<bash-output>\n{output.rstrip()}\n</bash-output>"


def _fenced(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}\n{text.rstrip() or '(no output)'}\n{ticks}"


class _Playback:
    """Stands in for the model: proposes the user's command, then answers with its output."""

    name = "shell"
    model = "shell"

    def __init__(self, command: str) -> None:
        self.command = command
        self.output: str | None = None
        self.failed = False
        """The call was refused, or the command failed (its result is an error)."""

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        results = [b for b in request.messages[-1].content if isinstance(b, ToolResultBlock)]
        if not results:
            call = ToolUseBlock("shell_1", BASH_TOOL, {"command": self.command})
            return ModelResponse(Message("assistant", (call,)), "tool_use", Usage(), self.model)
        self.output = results[0].content
        self.failed = results[0].is_error
        text = _fenced(self.output)
        sink.text(text)
        return ModelResponse(Message.assistant(text), "end_turn", Usage(), self.model)

    async def aclose(self) -> None:
        """Nothing to release."""


async def run_shell_command(
    command: str,
    toolbox_factory: ToolboxFactory,
    approvals: ApprovalPolicy,
    observer: TurnObserver,
    *,
    parent_id: str | None = None,
    label: str = "shell",
    before_side_effect: Callable[[], Awaitable[None]] | None = None,
) -> tuple[str, bool]:
    """Run `command` as `!COMMAND` does (input checks, rules, approvals, sandbox), outside a turn.

    For what runs before a turn is sent (a custom command's !`command` spans), and for a goal's
    checks (under the node `parent_id`, with the turn's snapshot gate `before_side_effect`).

    Returns:
        Its output (or why it did not run), and whether it failed or was refused.
    """
    playback = _Playback(command)
    deps = TurnDeps(
        playback, toolbox_factory, approvals, Budget(2, 1, None), before_side_effect=before_side_effect
    )
    toolbox = toolbox_factory()
    try:
        if not any(t.spec.name == BASH_TOOL for t in toolbox.tools):
            return NO_SHELL, True
        rt = deps.runtime(toolbox, observer, BudgetTracker(deps.budget))
        await run_agent(rt, [Message.user(SHELL_PREFIX + command)], parent_id=parent_id, label=label)
    finally:
        await toolbox.aclose()
    return playback.output or "", playback.failed


class ShellTurn(TurnStrategy):
    """Runs `!COMMAND` as one `bash` call; no model is asked anything."""

    name: StrategyName = "shell"

    def __init__(self, toolbox_factory: ToolboxFactory, approvals: ApprovalPolicy) -> None:
        self.toolbox_factory = toolbox_factory
        self.approvals = approvals

    async def play(self, request: TurnRequest, observer: TurnObserver) -> TurnResult:
        """Run the command and keep it and its output in the history."""
        conversation, prompt = request.conversation, request.prompt
        clock = Stopwatch()
        command = prompt.removeprefix(SHELL_PREFIX).strip()
        playback = _Playback(command)
        deps = TurnDeps(playback, self.toolbox_factory, self.approvals, Budget(2, 1, None))
        budget = BudgetTracker(deps.budget)
        with NodeScope(observer, "turn", "shell", None, detail=prompt, node_id=request.turn_id) as turn:
            toolbox = self.toolbox_factory()
            try:
                if not any(t.spec.name == BASH_TOOL for t in toolbox.tools):
                    error = NO_SHELL
                    turn.finish(outcome="error", error=error)
                    return TurnResult(turn.node_id, self.name, prompt, "", "error", Usage(), [], error=error)
                rt = deps.runtime(toolbox, observer, budget)
                result = await run_agent(rt, [Message.user(prompt)], parent_id=turn.node_id, label="shell")
            finally:
                await toolbox.aclose()
            output = playback.output or ""
            added = [Message.user(shell_context(command, output))]
            conversation.messages.extend(added)
            turn.finish(outcome="answered", output=result.answer)
            return TurnResult(
                turn.node_id,
                self.name,
                prompt,
                result.answer,
                "answered",
                Usage(),
                added,
                evidence=rt.evidence,
                duration=clock.elapsed,
            )
