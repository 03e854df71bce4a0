"""The user's hooks: commands run at fixed points of a session, as Claude Code users write them.

Hooks are read where Claude Code reads them and where this program keeps its settings: the
user's `config.toml` (`[[hooks.EVENT]]`) and `~/.claude/settings.json` (unless `[claude]
import_user = false`), the project's `.tui-assist/settings.toml`, `.claude/settings.json` and
`.claude/settings.local.json` (those run only once the project is trusted, see
`session/trust.py`). An entry is Claude Code's matcher group (`matcher`, `hooks = [{type,
command, timeout}]`) or this program's flat table (`command`, `matcher`, `timeout`); one it
cannot honour is one warning naming the file, the event and the entry, and the rest still loads.

A hook gets one JSON object on stdin in Claude Code's vocabulary (`tool_name` `Bash`, `Edit`,
`mcp__SERVER__TOOL`, `tool_input.file_path`, ... see `core/claude_names.py`) and runs in the
workdir with the shell's environment (secrets left out, `[tools.bash] pass_env` honoured) and
`$CLAUDE_PROJECT_DIR` (and `$CLAUDE_PLUGIN_ROOT` for a plugin's hook). Its exit status decides:

- 0: go on; the stdout of `SessionStart` and `UserPromptSubmit` is added to the prompt sent,
  unless it is a JSON object, which is read as Claude Code's hook output (see `HookReply`);
- 2: block: `PreToolUse` refuses the call (stderr is the tool result), `UserPromptSubmit`
  refuses the prompt (no model call), `PostToolUse` hands stderr to the model with the result,
  `Stop`/`SubagentStop` send the model back to work with stderr as its instruction (at most 3
  times a run), `PermissionRequest` denies the call;
- anything else, or a timeout: a warning, and the session goes on.

Every run is a node of its own (kind `hook`) under what it belongs to, with its output, so the
tree shows it and the store counts it in the turn's audit line. The tool-call, sub-agent and
Stop points are the agent loop's (`core/hooks.py`), so sub-agents' calls get the same hooks; the
session calls the others itself.

Reading the tables is `session/hook_table.py`, running one hook `session/hook_run.py`, and
reading its reply (Claude Code's JSON) `session/hook_reply.py`; this module is the session's set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tui_assist.core.claude_names import (
    CLAUDE_CODE_MODES,
    claude_code_aliases,
    claude_code_name,
    tool_input_for_hooks,
    tool_input_from_hooks,
)
from tui_assist.core.hooks import GO_ON, HookedCall, HookPermission, HookStop, ToolGate
from tui_assist.core.hooks import with_context as with_context
from tui_assist.core.nodes import NodeScope
from tui_assist.core.text import clip
from tui_assist.session.factory import SetupError
from tui_assist.session.hook_reply import HookReply as HookReply
from tui_assist.session.hook_reply import json_reply, text_of
from tui_assist.session.hook_run import BLOCK_EXIT as BLOCK_EXIT
from tui_assist.session.hook_run import HookRun as HookRun
from tui_assist.session.hook_run import run_hook as run_hook
from tui_assist.session.hook_table import HOOK_EVENTS as HOOK_EVENTS
from tui_assist.session.hook_table import UNMATCHED_EVENTS
from tui_assist.session.hook_table import HookDefinition as HookDefinition
from tui_assist.session.hook_table import HookSource as HookSource
from tui_assist.session.hook_table import claude_settings_hooks as claude_settings_hooks
from tui_assist.session.hook_table import parse_hooks as parse_hooks
from tui_assist.session.hook_table import project_claude_hooks as project_claude_hooks
from tui_assist.session.hook_table import project_hooks as project_hooks

if TYPE_CHECKING:
    from tui_assist.core.observer import TurnObserver
    from tui_assist.tools.processes import ProcessScope


LABEL_COMMAND_CHARS: Final = 40
"""How much of a hook's command its node's label shows."""


class PromptRefused(SetupError):
    """A `UserPromptSubmit` hook refused the prompt (exit 2): no turn runs; the message says why."""


@dataclass(slots=True)
class SessionHooks:
    """The hooks a session runs: the agent loop's `ToolHooks`, and the session's own points."""

    hooks: Sequence[HookDefinition]
    workdir: Path
    pass_env: frozenset[str] = frozenset()
    session_id: str | None = None
    """The conversation id, once there is one."""
    turn_id: str | None = None
    """The running turn's id."""
    warnings: list[str] = field(default_factory=lambda: list[str]())
    """One line per hook that failed or timed out, or said a `systemMessage`, for the host to show
    (drained per turn)."""
    warn: Callable[[str], None] | None = None
    mode: Callable[[], str] | None = None
    """The current approval mode (hooks get it as Claude Code's `permission_mode`)."""
    key_variables: frozenset[str] = frozenset()
    """The providers' configured key variables: never passed to a hook (unless in `pass_env`)."""
    survivors: list[ProcessScope] = field(default_factory=lambda: list["ProcessScope"]())
    """What hooks that exited left running: ended by `aclose`."""

    async def aclose(self) -> None:
        """End everything the hooks left running (daemons): the session is over."""
        scopes, self.survivors = self.survivors, []
        for scope in scopes:
            await asyncio.to_thread(scope.close)

    def of(self, event: str) -> list[HookDefinition]:
        """The hooks configured for `event`."""
        return [hook for hook in self.hooks if hook.event == event]

    async def run(
        self,
        event: str,
        observer: TurnObserver,
        parent_id: str | None,
        *,
        call: HookedCall | None = None,
        subject: str | None = None,
        **fields: Any,
    ) -> HookReply:
        """Run `event`'s matching hooks in order, each under a node of its own.

        Args:
            event: The event.
            observer: Where the hook nodes are reported.
            parent_id: The node they hang under.
            call: For a tool event: the call (its Claude Code name and input go in the payload).
            subject: For another event with a matcher: what the matcher is tried on.
            **fields: The rest of the event's payload.

        Returns:
            What they said; the hooks after one that blocked (or stopped) do not run.
        """
        payload: dict[str, Any] = {
            "hook_event_name": event,
            "session_id": self.session_id,
            "turn_id": self.turn_id,
            "cwd": str(self.workdir),
        }
        if self.mode is not None:
            payload["permission_mode"] = CLAUDE_CODE_MODES.get(self.mode(), self.mode())
        subjects: tuple[str, ...] = () if subject is None else (subject,)
        if call is not None:
            name = claude_code_name(call.name, call.input, mcp_server=call.mcp_server, mcp_tool=call.mcp_tool)
            subjects = (call.name, name, *claude_code_aliases(call.name, call.input))
            payload["tool_name"] = name
            payload["tool_input"] = tool_input_for_hooks(call.name, call.input, self.workdir)
            payload["tool_use_id"] = call.call_id
        payload |= fields
        reply = HookReply()
        for hook in self.of(event):
            if not hook.matches(() if event in UNMATCHED_EVENTS else subjects):
                continue
            label = f"hook: {event} {clip(hook.command, LABEL_COMMAND_CHARS)}"
            with NodeScope(observer, "hook", label, parent_id, detail=hook.command) as node:
                ran = await run_hook(
                    hook, payload, self.workdir, self.pass_env, key_variables=self.key_variables
                )
                if ran.survivors is not None:
                    self.survivors.append(ran.survivors)
                if ran.blocked:
                    output = "\n".join(part for part in (ran.stdout, ran.stderr) if part)
                    node.finish(outcome="blocked", output=output)
                    reply.blocked = ran.stderr or f"blocked by a {event} hook ({hook.command})"
                    return reply
                if ran.exit_status != 0:
                    output = "\n".join(part for part in (ran.stdout, ran.stderr) if part)
                    why = ran.problem or f"exit status {ran.exit_status}"
                    node.finish(outcome="warning", output=output, error=why)
                    self._warn(
                        f"{event} hook `{clip(hook.command, 60)}` {why}; going on" + _first_line(ran.stderr)
                    )
                    continue
                data = json_reply(ran.stdout)
                shown = ran.stdout if data is None or data.get("suppressOutput") is not True else ""
                output = "\n".join(part for part in (shown, ran.stderr) if part)
                if data is None:
                    if ran.stdout:
                        reply.said.append(ran.stdout)
                else:
                    if message := text_of(data, "systemMessage"):
                        self._warn(f"{event} hook: {message}")
                    reply.fold_json(event, hook.command, data)
                node.finish(outcome="blocked" if reply.settled else "done", output=output)
                if reply.settled:
                    return reply
        return reply

    def _stopped(self, event: str, reason: str) -> HookStop:
        """The stop a hook asked for (`"continue": false`), its reason told to the user."""
        self._warn(f"a {event} hook stopped the turn: {reason}")
        return HookStop(reason)

    def _warn(self, line: str) -> None:
        self.warnings.append(line)
        if self.warn is not None:
            self.warn(line)

    def take_warnings(self) -> list[str]:
        """The warnings since the last call."""
        taken, self.warnings = self.warnings, []
        return taken

    # -- the agent loop's points (core.hooks.ToolHooks) ------------------------------------------

    async def before_tool(self, call: HookedCall, observer: TurnObserver) -> ToolGate:
        """`PreToolUse`: a hook may refuse the call, allow it unasked, force the dialog, or change its input.

        Raises:
            HookStop: when a hook says `"continue": false`.
        """
        if not self.of("PreToolUse"):
            return GO_ON
        reply = await self.run("PreToolUse", observer, call.node_id, call=call)
        if reply.stop is not None:
            raise self._stopped("PreToolUse", reply.stop)
        if reply.blocked is not None:
            return ToolGate(refusal=f"Blocked by a PreToolUse hook: {reply.blocked}")
        updated = None
        if reply.updated_input is not None:
            updated = tool_input_from_hooks(call.name, call.input, reply.updated_input, self.workdir)
        return ToolGate(permission=reply.permission, updated_input=updated)

    async def permission_request(self, call: HookedCall, observer: TurnObserver) -> HookPermission | None:
        """`PermissionRequest`, then (when no hook answered) `Notification`: an approval waits."""
        reply = await self.run("PermissionRequest", observer, call.node_id, call=call)
        if reply.answer is not None:
            return reply.answer
        if reply.blocked is not None:
            return HookPermission(False, reply.blocked)
        name = claude_code_name(call.name, call.input, mcp_server=call.mcp_server, mcp_tool=call.mcp_tool)
        await self.run(
            "Notification",
            observer,
            call.node_id,
            subject="permission_prompt",
            message=f"tui-assist needs your permission to use {name}",
            notification_type="permission_prompt",
        )
        return None

    async def after_tool(
        self, call: HookedCall, output: str, is_error: bool, observer: TurnObserver
    ) -> str | None:
        """`PostToolUse` (or `PostToolUseFailure` for an error): what a hook says goes to the model.

        A hook exiting 2 (or `decision: "block"`) hands its reason to the model with the result,
        and `additionalContext` joins it too.

        Raises:
            HookStop: when a hook says `"continue": false`.
        """
        event = "PostToolUseFailure" if is_error else "PostToolUse"
        if not self.of(event):
            return None
        if is_error:
            reply = await self.run(event, observer, call.node_id, call=call, error=output, is_interrupt=False)
        else:
            response = {"output": output, "is_error": is_error}
            reply = await self.run(event, observer, call.node_id, call=call, tool_response=response)
        if reply.stop is not None:
            raise self._stopped(event, reply.stop)
        notes = [f"{event} hook: {reply.blocked}"] if reply.blocked is not None else []
        notes += [f"{event} hook context: {context}" for context in reply.context]
        return "\n".join(notes) or None

    async def subagent_start(self, call: HookedCall, agent_type: str, observer: TurnObserver) -> str | None:
        """`SubagentStart` (matcher: the agent type): `additionalContext` is added to the sub-agent's task."""
        if not self.of("SubagentStart"):
            return None
        reply = await self.run(
            "SubagentStart", observer, call.node_id, subject=agent_type, agent_type=agent_type
        )
        return "\n".join(reply.context) or None

    async def before_answer(
        self,
        answer: str,
        node_id: str,
        observer: TurnObserver,
        *,
        agent_type: str | None = None,
        again: bool = False,
    ) -> str | None:
        """`Stop` (or `SubagentStop`): a hook that blocks sends the model on, its reason the instruction."""
        event = "Stop" if agent_type is None else "SubagentStop"
        if not self.of(event):
            return None
        fields: dict[str, Any] = {
            "stop_hook_active": again,
            "last_answer": answer,
            "last_assistant_message": answer,
        }
        if agent_type is not None:
            fields["agent_type"] = agent_type
        reply = await self.run(event, observer, node_id, subject=agent_type, **fields)
        return None if reply.stop is not None else reply.blocked

    # -- the session's points ---------------------------------------------------------------------

    async def prompt_submit(self, prompt: str, observer: TurnObserver) -> str:
        """`UserPromptSubmit`: the context its hooks add (stdout, `additionalContext`), or a refusal.

        Raises:
            PromptRefused: when a hook blocks (exit 2, `decision: "block"`) or says not to continue.
        """
        reply = await self.run("UserPromptSubmit", observer, None, prompt=prompt)
        refused = reply.blocked if reply.blocked is not None else reply.stop
        if refused is not None:
            raise PromptRefused(f"a UserPromptSubmit hook refused the prompt: {refused}")
        return reply.everything_said()

    async def session_start(self, observer: TurnObserver, source: str) -> str:
        """`SessionStart` (`source`, its matcher: `startup`, `resume`, `clear`, `compact`): context to add."""
        reply = await self.run("SessionStart", observer, None, subject=source, source=source)
        return reply.everything_said()

    async def session_end(self, observer: TurnObserver, reason: str) -> None:
        """`SessionEnd` (`reason`, its matcher: `clear`, `prompt_input_exit`, `other`); it stops nothing."""
        await self.run("SessionEnd", observer, None, subject=reason, reason=reason)

    async def pre_compact(self, observer: TurnObserver, parent_id: str | None, trigger: str) -> None:
        """`PreCompact` (`trigger`, its matcher: `manual` or `auto`); it cannot stop the compaction."""
        await self.run("PreCompact", observer, parent_id, subject=trigger, trigger=trigger)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return f": {clip(line, 120)}" if line else ""
