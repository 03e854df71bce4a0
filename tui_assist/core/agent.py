"""The agent loop: stream a model call, run the tools it proposes, feed results back, repeat.

The runtime, not the model, executes tools: it validates each call's input, asks the approval
policy, charges the budget before the spend, and records every call in order as *evidence* (the
ground truth a critic judges). Sub-agents run through the same loop under their tool's node and
append to the same evidence list.

Only valid messages enter the transcript: blank text blocks are dropped from a reply, and a
reply left with nothing (no text, no tool call) is asked for again once and then fails the call,
because the API rejects every later request of a history that holds an empty message. A
reply's thinking blocks stay in the transcript just as they came (the provider must send them
back before the tool results), but thinking alone counts as an empty reply.

Each request goes through the runtime's `ContextGuard` (if any), which may send a compacted
history instead; a request the provider refuses as too long (`ContextOverflow`) is handed back
to the guard to compact further and retried once.

Before each request after the first, the runtime's `steering` (if any) hands over the prompts
the user sent meanwhile; they join that request after the tool results (see `core.steering`).

A call that may change files (`may_change_files`) first awaits the runtime's `before_side_effect`
(the host's snapshot of the workdir, taken while the first model request streams); read-only
calls never wait for it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, cast

from tui_assist.core.approval import ApprovalPolicy, McpBackedTool, approval_request, may_change_files
from tui_assist.core.budget import BudgetExhausted, BudgetTracker, stop_outcome
from tui_assist.core.context import ContextGuard
from tui_assist.core.conversation import (
    THINKING_TYPES,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from tui_assist.core.events import NodeKind, PromptJoined, UsageRecorded
from tui_assist.core.evidence import ToolCallRecord
from tui_assist.core.hooks import MAX_STOP_CONTINUES, NO_HOOKS, HookedCall, HookStop, ToolHooks, with_context
from tui_assist.core.model import ContextOverflow, ModelRequest, ModelResponse, Provider, ProviderError
from tui_assist.core.nodes import NodeScope, ToolCallScope
from tui_assist.core.observer import NodeSink, TurnObserver
from tui_assist.core.prompts import SUBAGENT_SYSTEM_SUFFIX
from tui_assist.core.server_tools import cited_sources, server_tool_calls, sources_note
from tui_assist.core.steering import Steering, with_joined
from tui_assist.core.text import plural
from tui_assist.core.tooling import SubagentSpec, Tool, Toolbox, ToolContext, ToolInputError, ToolOutput

GENERAL_AGENT_TYPE: Final = "general-purpose"
"""The type hooks see for a sub-agent that is not a custom one (Claude Code's name for it)."""
EMPTY_REPLY_RETRIES: Final = 1
"""How often a reply with neither text nor a tool call is asked for again before the call fails."""


@dataclass(slots=True)
class AgentResult:
    """What one agent run produced."""

    answer: str
    outcome: Literal["answered", "budget_exhausted", "budget"]
    messages: list[Message]
    """The messages the run added after its input: assistant replies and tool results."""
    usage: Usage
    detail: str = ""
    """Why the run stopped early, when it did."""
    halted: bool = False
    """A hook ended it (`"continue": false`; `detail` says why): the whole turn ends, not just this run."""
    joined: list[str] = field(default_factory=lambda: list[str]())
    """The prompts the user sent meanwhile that joined the run (as typed, oldest first)."""


@dataclass(slots=True)
class AgentRuntime:
    """Everything an agent run needs besides its messages."""

    provider: Provider
    toolbox: Toolbox
    observer: TurnObserver
    approvals: ApprovalPolicy
    budget: BudgetTracker
    system: str
    evidence: list[ToolCallRecord] = field(default_factory=lambda: list[ToolCallRecord]())
    max_depth: int = 2
    """How deep sub-agents may nest (a sub-agent of a sub-agent is depth 2)."""
    max_tokens: int = 8192
    context: ContextGuard | None = None
    """Fits each request to the model's context window (None: requests go as they are)."""
    hooks: ToolHooks = NO_HOOKS
    """The user's hooks around tool calls and the answer (sub-agents get them too)."""
    model: str | None = None
    """The model every request asks for (a custom sub-agent's); None: the provider's."""
    tool_names: frozenset[str] | None = None
    """The tools this run may offer (a custom sub-agent's subset); None: all of the toolbox's."""
    read_only_tools: frozenset[str] = frozenset()
    """Tools this run may only read with (a sub-agent given `Read` but not `Edit`): a call of
    theirs that would change anything is refused."""
    before_side_effect: Callable[[], Awaitable[None]] | None = None
    """Awaited before each call that may change files (None: nothing to wait for)."""
    steering: Steering | None = None
    """The prompts that join the run's next request (the top-level agent's; sub-agents get none)."""


async def run_agent(
    rt: AgentRuntime,
    messages: list[Message],
    *,
    parent_id: str | None,
    node_kind: NodeKind = "agent",
    label: str = "agent",
    depth: int = 0,
    stable_prefix: int = 0,
    agent_type: str | None = None,
) -> AgentResult:
    """Run the agent loop until the model stops asking for tools, under a node of its own.

    Args:
        rt: The runtime (provider, tools, observer, policy, budget, evidence).
        messages: The input, ending with the user message to answer.
        parent_id: The node this run hangs under.
        node_kind: How the run's node is shown (`generate` in a refine round, `agent` otherwise).
        label: The node's label.
        depth: Sub-agent nesting depth of this run.
        stable_prefix: Leading messages that are stable history (cacheable).
        agent_type: A sub-agent's type, for its `SubagentStop` hooks (None: the top-level agent).

    Returns:
        The answer and the messages added. A budget stop is an outcome, not an exception.

    Raises:
        ProviderError: when a model call fails for good, including a reply that stays empty.
    """
    prompt = messages[-1].text if messages else ""
    with NodeScope(rt.observer, node_kind, label, parent_id, detail=prompt) as node:
        result = await _AgentRun(rt, node.node_id, depth, agent_type).run(list(messages), stable_prefix)
        node.finish(outcome=result.outcome, output=result.answer)
        return result


class _AgentRun:
    def __init__(self, rt: AgentRuntime, node_id: str, depth: int, agent_type: str | None) -> None:
        self.rt = rt
        self.node_id = node_id
        self.depth = depth
        self.agent_type = agent_type
        self.stopped = False
        """The user chose "stop" in an approval: later calls of this run are not asked about."""
        self.halted: str | None = None
        """Why a hook ended the run (`"continue": false`): no later call runs, no request follows."""
        allowed = rt.tool_names
        offered = [t for t in rt.toolbox.tools if allowed is None or t.spec.name in allowed]
        self.tools: dict[str, Tool] = {t.spec.name: t for t in offered}
        self.specs = [t.spec for t in offered]

    async def run(self, transcript: list[Message], stable_prefix: int) -> AgentResult:
        rt = self.rt
        added: list[Message] = []
        usage = Usage()
        answer = ""
        sink = NodeSink(rt.observer, self.node_id)
        empty_replies = 0
        invalid_before = False
        """Whether the previous reply had tool arguments that were not a JSON object."""
        stop_continues = 0
        joined: list[str] = []
        first_request = True
        while True:
            # A cancel the host asked for while the tools ran (escape, "deny and stop") lands here,
            # before another request: a pooled connection can send one without ever yielding.
            await asyncio.sleep(0)
            try:
                rt.budget.before_model_request()
            except BudgetExhausted as exc:
                return AgentResult(answer, stop_outcome(exc), added, usage, str(exc), joined=joined)
            if not first_request:
                joined += self._join(transcript, added)
            first_request = False
            request = ModelRequest(
                system=rt.system,
                messages=tuple(transcript),
                tools=self.specs,
                max_tokens=rt.max_tokens,
                stable_prefix=stable_prefix,
                model=rt.model,
                thinking=True,
            )
            try:
                response = await self._complete(request, sink)
            except BudgetExhausted as exc:  # the spend cap, reached by compacting for this request
                return AgentResult(answer, stop_outcome(exc), added, usage, str(exc), joined=joined)
            rt.budget.record(response.usage)
            usage = usage + response.usage
            rt.observer.on_event(
                UsageRecorded(node_id=self.node_id, usage=response.usage, model=response.model)
            )
            reply = _without_blank_text(response.message)
            if all(isinstance(b, THINKING_TYPES) for b in reply.content):  # nothing said or done
                empty_replies += 1
                why = f"empty reply ({plural(empty_replies, 'attempt')}, stop reason {response.stop_reason})"
                if empty_replies > EMPTY_REPLY_RETRIES:
                    raise ProviderError(f"the model sent an {why}")
                sink.retrying(empty_replies, why)
                continue
            empty_replies = 0
            invalid = response.invalid_tool_inputs
            if invalid and invalid_before:
                # The model was told, and did it again: it won't correct itself this turn.
                raise ProviderError(f"{next(iter(invalid.values()))}, again after being told")
            invalid_before = bool(invalid)
            transcript.append(reply)
            added.append(reply)
            self._report_server_tools(reply)
            note = sources_note(cited_sources(reply))
            if note:
                sink.text(note)  # the sources are listed under the answer, as streamed and as kept
            answer = (reply.text + note) or answer
            uses = reply.tool_uses
            if not uses and response.stop_reason == "pause_turn":
                continue  # a server tool paused a long turn: sending the reply back resumes it
            if not uses:
                again = None
                if stop_continues < MAX_STOP_CONTINUES:
                    again = await rt.hooks.before_answer(
                        answer,
                        self.node_id,
                        rt.observer,
                        agent_type=self.agent_type,
                        again=stop_continues > 0,
                    )
                if again is None:
                    return AgentResult(answer, "answered", added, usage, joined=joined)
                # A Stop hook sends the model back to work, with its words as the next instruction.
                stop_continues += 1
                instruction = Message.user(again)
                transcript.append(instruction)
                added.append(instruction)
                continue
            results: list[ToolResultBlock] = []
            stop: str | None = None
            for use in uses:
                if stop is None:
                    try:
                        rt.budget.before_tool_call()
                    except BudgetExhausted as exc:
                        stop = str(exc)
                if stop is not None or self.halted is not None:
                    why = stop if stop is not None else f"a hook stopped the turn ({self.halted})"
                    results.append(ToolResultBlock(use.id, f"Not run: {why}.", is_error=True))
                else:
                    results.append(await self._call(use, invalid.get(use.id)))
            tool_message = Message("user", tuple(results))
            transcript.append(tool_message)
            added.append(tool_message)
            if stop is not None:
                return AgentResult(answer, "budget_exhausted", added, usage, stop, joined=joined)
            if self.halted is not None:
                return AgentResult(answer, "answered", added, usage, self.halted, halted=True, joined=joined)

    def _join(self, transcript: list[Message], added: list[Message]) -> list[str]:
        """Add the prompts the user sent meanwhile to the user message going out next; they are returned.

        Only a user message (tool results, a Stop hook's instruction) takes them, so the roles
        still alternate; after a paused server tool the reply goes back as it is.
        """
        steering = self.rt.steering
        if steering is None or not transcript or transcript[-1].role != "user":
            return []
        texts = list(steering())
        if not texts:
            return []
        last = transcript[-1]
        transcript[-1] = with_joined(last, texts)
        if added and added[-1] is last:
            added[-1] = transcript[-1]
        for text in texts:
            self.rt.observer.on_event(PromptJoined(node_id=self.node_id, text=text))
        return texts

    async def _complete(self, request: ModelRequest, sink: NodeSink) -> ModelResponse:
        """Send `request` as the context guard fits it; a prompt too long is compacted and retried once."""
        rt = self.rt
        guard = rt.context
        if guard is None:
            return await rt.provider.complete(request, sink)
        fitted = await guard.fit(request, rt.observer, self.node_id)
        rt.budget.record(fitted.usage)
        try:
            response = await rt.provider.complete(fitted.request, sink)
        except ContextOverflow as overflow:
            fitted = await guard.fit(request, rt.observer, self.node_id, overflow=overflow)
            rt.budget.record(fitted.usage)
            response = await rt.provider.complete(fitted.request, sink)
        if self.depth == 0:  # the meter shows the conversation's context, not a sub-agent's
            guard.measured(fitted.request, response.usage)
        return response

    def _report_server_tools(self, reply: Message) -> None:
        """Show the calls the provider ran itself (web searches) as tool calls, and keep them as evidence."""
        rt = self.rt
        for call in server_tool_calls(reply):
            with ToolCallScope(rt.observer, self.node_id, call.call_id, call.name, call.input) as scope:
                scope.finish(call.output, is_error=call.is_error)
            rt.evidence.append(
                ToolCallRecord(
                    scope.node_id, self.node_id, call.name, call.input, call.output, call.is_error, 0.0
                )
            )

    async def _call(self, use: ToolUseBlock, invalid_input: str | None = None) -> ToolResultBlock:
        rt = self.rt
        scope = ToolCallScope(rt.observer, self.node_id, use.id, use.name, use.input)
        try:
            with scope:
                if invalid_input is not None:
                    output = ToolOutput(
                        f"Not run: the {invalid_input}. Call {use.name} again "
                        "with its arguments as a JSON object, as its input schema says.",
                        is_error=True,
                    )
                else:
                    try:
                        output = await self._execute(use, scope.node_id)
                    except HookStop as stopped:
                        self.halted = stopped.reason
                        output = ToolOutput(f"A hook stopped the turn: {stopped.reason}", is_error=True)
                scope.finish(output.content, is_error=output.is_error, diff=output.diff)
        finally:
            rt.evidence.append(
                ToolCallRecord(
                    scope.node_id,
                    self.node_id,
                    use.name,
                    use.input,
                    scope.output,
                    scope.is_error,
                    scope.duration,
                )
            )
        return ToolResultBlock(use.id, scope.output, scope.is_error)

    async def _execute(self, use: ToolUseBlock, tool_node: str) -> ToolOutput:
        tool = self.tools.get(use.name)
        if tool is None:
            known = ", ".join(self.tools) or "none"
            return ToolOutput(f"Unknown tool {use.name!r}. Available tools: {known}.", is_error=True)
        raw = cast(object, use.input)  # typed as an object, but a provider or script may hand over anything
        if not isinstance(raw, dict):
            return ToolOutput(
                f"Invalid input for {use.name}: expected a JSON object, got {type(raw).__name__}.",
                is_error=True,
            )
        try:
            args = tool.parse(use.input)
        except ToolInputError as exc:
            return ToolOutput(f"Invalid input for {use.name}: {exc}", is_error=True)
        call = HookedCall(use.name, use.input, tool_node, call_id=use.id)
        if isinstance(tool, McpBackedTool):
            call = dataclasses.replace(call, mcp_server=tool.server, mcp_tool=tool.remote_name)
        gate = await self.rt.hooks.before_tool(call, self.rt.observer)
        if gate.refusal is not None:
            return ToolOutput(gate.refusal, is_error=True)
        if gate.updated_input is not None:
            try:
                args = tool.parse(gate.updated_input)
            except ToolInputError as exc:
                return ToolOutput(
                    f"Invalid input for {use.name} from a PreToolUse hook: {exc}", is_error=True
                )
            call = dataclasses.replace(call, input=gate.updated_input)
        output = await self._approved_run(tool, args, call, gate.permission)
        try:
            note = await self.rt.hooks.after_tool(call, output.content, output.is_error, self.rt.observer)
        except HookStop as stopped:  # the call ran: its result stays, and the run ends after it
            self.halted = stopped.reason
            note = f"A hook stopped the turn: {stopped.reason}"
        if note is None:
            return output
        return ToolOutput(f"{output.content}\n\n{note}", is_error=output.is_error)

    async def _approved_run(
        self, tool: Tool, args: Any, call: HookedCall, hook_permission: Literal["allow", "ask"] | None
    ) -> ToolOutput:
        """Run the parsed call once the approval policy lets it (a refusal is its output).

        `hook_permission` is what a `PreToolUse` hook said (`allow`, `ask`); `PermissionRequest`
        hooks answer in the person's place when the policy would ask.
        """
        tool_node = call.node_id
        if tool.side_effecting(args):
            if call.name in self.rt.read_only_tools:
                return ToolOutput(
                    f"Not run: this agent may only read with {call.name} (it was given Read, not Edit "
                    "or Write).",
                    is_error=True,
                )
            if self.stopped:
                return ToolOutput("Not run: the user stopped the turn.", is_error=True)
            request = approval_request(
                tool,
                args,
                name=call.name,
                raw_input=call.input,
                node_id=tool_node,
                workdir=Path(self.rt.toolbox.workdir),
            )
            outcome = await self.rt.approvals.check(
                request,
                self.rt.observer,
                hook_permission=hook_permission,
                before_asking=lambda: self.rt.hooks.permission_request(call, self.rt.observer),
            )
            if not outcome.allowed:
                # After "stop" the host ends the turn; until it does, ask nothing more.
                self.stopped = self.stopped or outcome.stop_turn
                return ToolOutput(outcome.message, is_error=True)

        async def run_subagent(description: str, prompt: str, agent: SubagentSpec | None = None) -> str:
            return await self._subagent(description, prompt, call, agent)

        if self.rt.before_side_effect is not None and may_change_files(tool, args):
            await self.rt.before_side_effect()
        ctx = ToolContext(workdir=self.rt.toolbox.workdir, node_id=tool_node, run_subagent=run_subagent)
        return await tool.run(args, ctx)

    async def _subagent(
        self, description: str, prompt: str, call: HookedCall, agent: SubagentSpec | None
    ) -> str:
        if self.depth + 1 > self.rt.max_depth:
            raise RuntimeError(f"sub-agent depth limit of {self.rt.max_depth} reached; do the task yourself")
        tool_node = call.node_id
        agent_type = agent.name if agent is not None else GENERAL_AGENT_TYPE
        context = await self.rt.hooks.subagent_start(call, agent_type, self.rt.observer)
        if context:
            prompt = with_context(prompt, context, "SubagentStart")
        system = self.rt.system + SUBAGENT_SYSTEM_SUFFIX
        if agent is not None:
            system = f"{agent.system_prompt}{SUBAGENT_SYSTEM_SUFFIX}"
        child = AgentRuntime(
            provider=self.rt.provider,
            toolbox=self.rt.toolbox,
            observer=self.rt.observer,
            approvals=self.rt.approvals,
            budget=self.rt.budget,
            system=system,
            evidence=self.rt.evidence,
            max_depth=self.rt.max_depth,
            max_tokens=self.rt.max_tokens,
            context=self.rt.context,
            hooks=self.rt.hooks,
            model=agent.model if agent is not None and agent.model else self.rt.model,
            # A general sub-agent of a restricted one gets no more tools than its parent.
            tool_names=self.rt.tool_names if agent is None else self._tools_of(agent),
            read_only_tools=self.rt.read_only_tools
            if agent is None
            else frozenset(t.spec.name for t in self.rt.toolbox.tools if agent.reads_only(t.spec.name)),
            before_side_effect=self.rt.before_side_effect,
        )
        label = f"{agent.name}: {description}" if agent is not None else description
        result = await run_agent(
            child,
            [Message.user(prompt)],
            parent_id=tool_node,
            label=label,
            depth=self.depth + 1,
            agent_type=agent_type,
        )
        if result.halted:  # a sub-agent's hook ends its parent's run too, after this call
            self.halted = result.detail
        if result.outcome != "answered":
            return f"[sub-agent stopped: {result.detail}] {result.answer}".strip()
        return result.answer

    def _tools_of(self, agent: SubagentSpec) -> frozenset[str] | None:
        """The toolbox's tools a custom sub-agent may use (its `tools`, less its disallowed ones)."""
        if agent.tools is None and not agent.disallowed_tools:
            return self.rt.tool_names
        return frozenset(t.spec.name for t in self.rt.toolbox.tools if agent.allows(t.spec.name))


def _without_blank_text(message: Message) -> Message:
    """`message` without its empty or whitespace-only text blocks, which the API rejects."""
    kept = tuple(b for b in message.content if not (isinstance(b, TextBlock) and not b.text.strip()))
    return message if len(kept) == len(message.content) else Message(message.role, kept)
