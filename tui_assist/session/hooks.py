"""The user's hooks: commands run at fixed points of a session, as Claude Code users write them.

A hook is a `[[hooks.EVENT]]` table (`command`, `matcher`, `timeout`) in the user's `config.toml`
or in the project's `.tui-assist/settings.toml` (those run only once the project is trusted, see
`session/trust.py`). It gets one JSON object on stdin and runs in the workdir with the shell's
environment (secrets left out, `[tools.bash] pass_env` honoured). Its exit status decides:

- 0: go on; the stdout of `SessionStart` and `UserPromptSubmit` is added to the prompt sent;
- 2: block: `PreToolUse` refuses the call (stderr is the tool result), `UserPromptSubmit`
  refuses the prompt (no model call), `PostToolUse` hands stderr to the model with the result,
  `Stop` sends the model back to work with stderr as its instruction (at most 3 times a run);
- anything else, or a timeout: a warning, and the session goes on.

Every run is a node of its own (kind `hook`) under what it belongs to, with its output, so the
tree shows it and the store counts it in the turn's audit line. The tool-call and Stop points are
the agent loop's (`core/hooks.py`), so sub-agents' calls get the same hooks; the session calls
the others itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from tui_assist.core.hooks import HookedCall
from tui_assist.core.nodes import NodeScope
from tui_assist.core.text import clip
from tui_assist.session.factory import SetupError

if TYPE_CHECKING:
    from tui_assist.core.observer import TurnObserver
    from tui_assist.tools.processes import ProcessScope

log = logging.getLogger(__name__)

HOOK_EVENTS: Final = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact")
BLOCK_EXIT: Final = 2
"""The exit status with which a hook blocks what it was asked about."""
LABEL_COMMAND_CHARS: Final = 40
"""How much of a hook's command its node's label shows."""
OUTPUT_CHARS: Final = 4_000
"""How much of a hook's stdout and stderr is kept (for the model, the tree and warnings)."""

HookSource = Literal["user", "project"]


class PromptRefused(SetupError):
    """A `UserPromptSubmit` hook refused the prompt (exit 2): no turn runs; the message says why."""


@dataclass(frozen=True, slots=True)
class HookDefinition:
    """One configured hook and where it came from."""

    event: str
    command: str
    matcher: str = ""
    timeout: float = 60.0
    source: HookSource = "user"
    origin: Path | None = None
    """The file that defines it."""

    def matches(self, tool_name: str | None, tool_input: Mapping[str, Any] | None = None) -> bool:
        """Whether this hook runs for the call (a matcher only narrows the tool-call events).

        The matcher is tried on the tool's name and on the name Claude Code gives the same call
        (`Bash`, `Read`, `Write`, `Edit`), so a matcher written for Claude Code works here too.
        """
        if tool_name is None or self.matcher in ("", "*"):
            return True
        names = (tool_name, *claude_code_names(tool_name, tool_input or {}))
        return any(re.fullmatch(self.matcher, name) is not None for name in names)

    def describe(self) -> str:
        """One line for `/hooks` and the trust dialog."""
        matcher = f" [{self.matcher}]" if self.matcher and self.event in ("PreToolUse", "PostToolUse") else ""
        return f"{self.event}{matcher}: {self.command}"


def claude_code_names(tool_name: str, tool_input: Mapping[str, Any]) -> tuple[str, ...]:
    """What Claude Code calls this call's tool (its editor is several tools), if it has the tool."""
    if tool_name == "bash":
        return ("Bash",)
    if tool_name == "str_replace_based_edit_tool":
        match tool_input.get("command"):
            case "view":
                return ("Read",)
            case "create":
                return ("Write",)
            case _:
                return ("Edit", "MultiEdit")
    return ()


@dataclass(frozen=True, slots=True)
class HookRun:
    """What one run of a hook did."""

    exit_status: int | None
    """None after a timeout (or when it could not start)."""
    stdout: str = ""
    stderr: str = ""
    problem: str | None = None
    """Why it did not run to an exit status (a timeout, a command that could not start)."""
    survivors: ProcessScope | None = None
    """What the hook left running (a daemon), to end with the session; None: nothing."""

    @property
    def blocked(self) -> bool:
        """It exited with 2."""
        return self.exit_status == BLOCK_EXIT


def parse_hooks(
    table: object, source: HookSource, origin: Path | None
) -> tuple[list[HookDefinition], list[str]]:
    """The hooks of a `[hooks]` table as read from TOML, and one warning per table that is not valid.

    Args:
        table: The value of `hooks` (event name -> list of tables).
        source: `user` or `project`.
        origin: The file it was read from, named in warnings.
    """
    from pydantic import ValidationError

    from tui_assist.session.config import HookSettings

    hooks: list[HookDefinition] = []
    warnings: list[str] = []
    where = str(origin) if origin is not None else "config"
    if table is None:
        return hooks, warnings
    if not isinstance(table, Mapping):
        return hooks, [f"{where}: hooks must be a table of [[hooks.EVENT]] entries; ignored"]
    for event, entries in table.items():
        if event not in HOOK_EVENTS:
            warnings.append(
                f"{where}: unknown hook event {event!r} (one of {', '.join(HOOK_EVENTS)}); ignored"
            )
            continue
        if not isinstance(entries, list):
            warnings.append(f"{where}: hooks.{event} must be a list of tables ([[hooks.{event}]]); ignored")
            continue
        for entry in entries:
            try:
                valid = HookSettings.model_validate(entry)
            except ValidationError as exc:
                reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
                warnings.append(f"{where}: a hooks.{event} entry is invalid ({reason}); ignored")
                continue
            hooks.append(HookDefinition(event, valid.command, valid.matcher, valid.timeout, source, origin))
    return hooks, warnings


def project_hooks(workdir: Path) -> tuple[list[HookDefinition], list[str], Path | None]:
    """The hooks of the project's `.tui-assist/settings.toml`, its warnings, and the file (None: none)."""
    from tui_assist.core.rule_files import PermissionsError, project_settings_path
    from tui_assist.session.rule_files import read_rules_file

    path = project_settings_path(workdir)
    if not path.is_file():
        return [], [], None
    try:
        data = read_rules_file(path)
    except PermissionsError as exc:
        return [], [str(exc)], None
    if "hooks" not in data:
        return [], [], None
    hooks, warnings = parse_hooks(data["hooks"], "project", path)
    return hooks, warnings, path


async def run_hook(
    hook: HookDefinition,
    payload: Mapping[str, Any],
    workdir: Path,
    pass_env: frozenset[str],
    *,
    key_variables: frozenset[str] = frozenset(),
) -> HookRun:
    """Run `hook` once: `payload` as JSON on stdin, in `workdir`, with the shell's environment.

    The hook runs in a process group of its own and in a `ProcessScope`: a timeout (at most
    `HOOK_TIMEOUT_MAX`) or a cancelled turn kills all it started, a `setsid` daemon too. A daemon
    left running by a hook that exited is handed back in `HookRun.survivors` (the session ends it
    when it ends; the program's exit at the latest).
    """
    from tui_assist.session.config import HOOK_TIMEOUT_MAX
    from tui_assist.tools.processes import ProcessScope, end_at_exit
    from tui_assist.tools.shell import shell_env

    end_at_exit()
    scope = ProcessScope("hook")
    env = scope.environ(shell_env(workdir, pass_env, key_variables))
    env["TUI_ASSIST_PROJECT_DIR"] = str(workdir)
    timeout = min(hook.timeout, HOOK_TIMEOUT_MAX)
    try:
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=workdir,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        scope.release()
        return HookRun(None, problem=f"could not start: {exc.strerror or exc}")
    data = json.dumps(payload, ensure_ascii=False, default=str).encode()
    try:
        out, err = await asyncio.wait_for(process.communicate(data), timeout)
    except TimeoutError:
        await asyncio.to_thread(_kill_group, process)  # reads /proc: off the event loop
        await asyncio.to_thread(scope.close, started=(process.pid,))
        await process.wait()
        return HookRun(None, problem=f"timed out after {timeout:g} s")
    except asyncio.CancelledError:
        _kill_group(process)
        scope.close(started=(process.pid,))
        raise
    if not await asyncio.to_thread(scope.pids):  # reads /proc: off the event loop
        scope.release()
        return HookRun(process.returncode, _text(out), _text(err))
    return HookRun(process.returncode, _text(out), _text(err), survivors=scope)


def _text(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text if len(text) <= OUTPUT_CHARS else text[:OUTPUT_CHARS] + "\n[... hook output truncated]"


def _kill_group(process: asyncio.subprocess.Process) -> None:
    from tui_assist.tools.processes import kill_group

    kill_group(process.pid, started=(process.pid,))


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
    """One line per hook that failed or timed out, for the host to show (drained per turn)."""
    warn: Callable[[str], None] | None = None
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
        tool_name: str | None = None,
        tool_input: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> tuple[str, str | None]:
        """Run `event`'s matching hooks in order, each under a node of its own.

        Returns:
            The exit-0 hooks' stdout (joined), and the stderr of the first hook that blocked (None
            when none did; the later ones then do not run).
        """
        payload: dict[str, Any] = {
            "hook_event_name": event,
            "session_id": self.session_id,
            "turn_id": self.turn_id,
            "cwd": str(self.workdir),
            **fields,
        }
        if tool_name is not None:
            payload["tool_name"] = tool_name
        if tool_input is not None:
            payload["tool_input"] = tool_input
        said: list[str] = []
        for hook in self.of(event):
            if not hook.matches(tool_name, tool_input):
                continue
            label = f"hook: {event} {clip(hook.command, LABEL_COMMAND_CHARS)}"
            with NodeScope(observer, "hook", label, parent_id, detail=hook.command) as node:
                ran = await run_hook(
                    hook, payload, self.workdir, self.pass_env, key_variables=self.key_variables
                )
                if ran.survivors is not None:
                    self.survivors.append(ran.survivors)
                output = "\n".join(part for part in (ran.stdout, ran.stderr) if part)
                if ran.blocked:
                    node.finish(outcome="blocked", output=output)
                    return "\n".join(said), ran.stderr or f"blocked by a {event} hook ({hook.command})"
                if ran.exit_status == 0:
                    node.finish(outcome="done", output=output)
                    if ran.stdout:
                        said.append(ran.stdout)
                    continue
                why = ran.problem or f"exit status {ran.exit_status}"
                node.finish(outcome="warning", output=output, error=why)
                self._warn(
                    f"{event} hook `{clip(hook.command, 60)}` {why}; going on" + _first_line(ran.stderr)
                )
        return "\n".join(said), None

    def _warn(self, line: str) -> None:
        self.warnings.append(line)
        if self.warn is not None:
            self.warn(line)

    def take_warnings(self) -> list[str]:
        """The warnings since the last call."""
        taken, self.warnings = self.warnings, []
        return taken

    # -- the agent loop's points (core.hooks.ToolHooks) ------------------------------------------

    async def before_tool(self, call: HookedCall, observer: TurnObserver) -> str | None:
        """`PreToolUse`: a hook exiting 2 refuses the call, its stderr the tool result."""
        _, blocked = await self.run(
            "PreToolUse", observer, call.node_id, tool_name=call.name, tool_input=call.input
        )
        return None if blocked is None else f"Blocked by a PreToolUse hook: {blocked}"

    async def after_tool(
        self, call: HookedCall, output: str, is_error: bool, observer: TurnObserver
    ) -> str | None:
        """`PostToolUse`: a hook exiting 2 hands its stderr to the model with the result."""
        _, blocked = await self.run(
            "PostToolUse",
            observer,
            call.node_id,
            tool_name=call.name,
            tool_input=call.input,
            tool_response={"output": output, "is_error": is_error},
        )
        return None if blocked is None else f"PostToolUse hook: {blocked}"

    async def before_answer(self, answer: str, node_id: str, observer: TurnObserver) -> str | None:
        """`Stop`: a hook exiting 2 sends the model on, its stderr the next instruction."""
        _, blocked = await self.run("Stop", observer, node_id, last_answer=answer)
        return blocked

    # -- the session's points ---------------------------------------------------------------------

    async def prompt_submit(self, prompt: str, observer: TurnObserver) -> str:
        """`UserPromptSubmit`: the context its hooks add (stdout), or a refusal.

        Raises:
            PromptRefused: when a hook exits 2 (its stderr is the message).
        """
        said, blocked = await self.run("UserPromptSubmit", observer, None, prompt=prompt)
        if blocked is not None:
            raise PromptRefused(f"a UserPromptSubmit hook refused the prompt: {blocked}")
        return said

    async def session_start(self, observer: TurnObserver, source: str) -> str:
        """`SessionStart` (`source`: `startup` or `resume`): the context its hooks add."""
        said, _ = await self.run("SessionStart", observer, None, source=source)
        return said

    async def pre_compact(self, observer: TurnObserver, parent_id: str | None, trigger: str) -> None:
        """`PreCompact` (`trigger`: `manual` or `auto`); it cannot stop the compaction."""
        await self.run("PreCompact", observer, parent_id, trigger=trigger)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return f": {clip(line, 120)}" if line else ""


def with_context(prompt: str, context: str, event: str) -> str:
    """`prompt` with what a hook said added as a reminder the model sees."""
    if not context.strip():
        return prompt
    return f'{prompt}\n\n<hook-context event="{event}">\n{context.strip()}\n</hook-context>'
