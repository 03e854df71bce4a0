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
from tui_assist.session.claude_dirs import CLAUDE_SETTINGS_FILES
from tui_assist.session.factory import SetupError

if TYPE_CHECKING:
    from tui_assist.core.observer import TurnObserver
    from tui_assist.session.trust import ProjectFiles
    from tui_assist.tools.processes import ProcessScope

log = logging.getLogger(__name__)

HOOK_EVENTS: Final = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "PreCompact",
)
"""Claude Code's events, every one of which runs here."""
UNMATCHED_EVENTS: Final = frozenset({"UserPromptSubmit", "Stop"})
"""Events with no subject: a matcher on them is ignored."""
QUIET_KEYS: Final = frozenset({"statusMessage"})
"""Claude Code handler keys that need nothing here (what its spinner says)."""
SYNCHRONOUS_KEYS: Final = frozenset({"async", "asyncRewake"})
"""Claude Code handler keys asking to run in the background: here the hook runs in line."""
HANDLER_KEYS: Final = frozenset({"type", "command", "timeout"})
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
    plugin_root: Path | None = None
    """For a plugin's hook: the plugin's folder (`$CLAUDE_PLUGIN_ROOT`)."""

    def matches(self, subjects: Sequence[str]) -> bool:
        """Whether this hook runs for an event about `subjects` (no subjects: it always runs).

        A tool event's subjects are the tool's name here and Claude Code's (`Bash`, `Edit`, `Task`,
        `mcp__SERVER__TOOL`), so a matcher written for Claude Code works too; `SessionStart`'s is
        its source. The matcher is a regular expression the whole subject must match.
        """
        if not subjects or self.matcher in ("", "*"):
            return True
        return any(re.fullmatch(self.matcher, subject) is not None for subject in subjects)

    def describe(self) -> str:
        """One line for `/hooks` and the trust dialog."""
        shown = self.matcher and self.matcher != "*" and self.event not in UNMATCHED_EVENTS
        return f"{self.event}{f' [{self.matcher}]' if shown else ''}: {self.command}"


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


# -- reading hooks -------------------------------------------------------------------------------


def parse_hooks(
    table: object, source: HookSource, origin: Path | None, *, plugin_root: Path | None = None
) -> tuple[list[HookDefinition], list[str]]:
    """The hooks of a `hooks` table (TOML or Claude Code's JSON), and one warning per entry not loaded.

    Args:
        table: The value of `hooks` (event name -> list of entries, each a matcher group
            `{matcher?, hooks: [handler, ...]}` or one flat handler `{command, matcher?, timeout?}`).
        source: `user` or `project`.
        origin: The file it was read from, named in warnings.
        plugin_root: For a plugin's hooks: its folder.
    """
    reader = _HookTableReader(source, origin, plugin_root)
    reader.read(table)
    return reader.hooks, reader.warnings


@dataclass(slots=True)
class _HookTableReader:
    """Reads one file's `hooks` table, entry by entry, into hooks and one warning per entry."""

    source: HookSource
    origin: Path | None
    plugin_root: Path | None
    hooks: list[HookDefinition] = field(default_factory=lambda: list[HookDefinition]())
    warnings: list[str] = field(default_factory=lambda: list[str]())

    @property
    def where(self) -> str:
        return str(self.origin) if self.origin is not None else "config"

    def read(self, table: object) -> None:
        if table is None:
            return
        if not isinstance(table, Mapping):
            self.warnings.append(f"{self.where}: hooks must map each event to a list of entries; ignored")
            return
        for event, entries in table.items():
            if event not in HOOK_EVENTS:
                self.warnings.append(
                    f"{self.where}: unknown hook event {event!r} (one of {', '.join(HOOK_EVENTS)}); ignored"
                )
            elif not isinstance(entries, list):
                self.warnings.append(f"{self.where}: hooks.{event} must be a list of entries; ignored")
            else:
                for index, entry in enumerate(entries):
                    self._entry(str(event), f"hooks.{event}[{index}]", entry)

    def _entry(self, event: str, label: str, entry: object) -> None:
        if not isinstance(entry, Mapping):
            self.warnings.append(f"{self.where}: {label} is not a table; ignored")
            return
        group: Mapping[str, Any] = entry
        if "hooks" not in group:  # this program's flat shape: the entry is the handler
            self._handler(event, label, group, None)
            return
        matcher, handlers = group.get("matcher", ""), group["hooks"]
        problem = _matcher_problem(matcher)
        if problem is None and not isinstance(handlers, list):
            problem = "its hooks must be a list of handlers"
        if problem is not None:
            self.warnings.append(f"{self.where}: {label}: {problem}; ignored")
            return
        if extra := sorted(set(group) - {"matcher", "hooks"}):
            self.warnings.append(f"{self.where}: {label}: unknown key {', '.join(map(repr, extra))} ignored")
        for position, handler in enumerate(handlers):
            self._handler(event, f"{label}.hooks[{position}]", handler, str(matcher))

    def _handler(self, event: str, label: str, raw: object, group_matcher: str | None) -> None:
        """Add one handler, or say in one warning why it is not loaded (or not honoured in full)."""
        from pydantic import ValidationError

        from tui_assist.session.config import HookSettings

        if not isinstance(raw, Mapping):
            self.warnings.append(f"{self.where}: {label} is not a table; ignored")
            return
        data: dict[str, Any] = {str(k): v for k, v in raw.items()}
        command = data.get("command")
        named = f"{self.where}: {label}"
        if isinstance(command, str) and command:
            named += f" ({clip(command, 60)})"
        kind = data.get("type", "command")
        if kind != "command":
            self.warnings.append(
                f'{named}: "type": {json.dumps(kind)} hooks are not supported here (only "command"); ignored'
            )
            return
        if "if" in data:  # running it unconditioned would run it where its author did not want it
            self.warnings.append(f"{named}: `if` conditions are not supported here; ignored")
            return
        reasons = [
            f"`{key}` is not supported: it runs in line" for key in sorted(SYNCHRONOUS_KEYS & set(data))
        ]
        allowed = HANDLER_KEYS | ({"matcher"} if group_matcher is None else set())
        if unknown := sorted(set(data) - allowed - QUIET_KEYS - SYNCHRONOUS_KEYS):
            reasons.append(f"unknown key {', '.join(map(repr, unknown))} ignored")
        fields = {key: value for key, value in data.items() if key in allowed}
        if group_matcher is not None:
            fields["matcher"] = group_matcher
        try:
            valid = HookSettings.model_validate(fields)
        except ValidationError as exc:
            error = exc.errors()[0]
            at = ".".join(str(part) for part in error["loc"])
            message = error["msg"].removeprefix("Value error, ")
            self.warnings.append(
                f"{named}: {at + ': ' if at else ''}{message[:1].lower() + message[1:]}; ignored"
            )
            return
        if reasons:
            self.warnings.append(f"{named}: {'; '.join(reasons)}")
        self.hooks.append(
            HookDefinition(
                event, valid.command, valid.matcher, valid.timeout, self.source, self.origin, self.plugin_root
            )
        )


def _matcher_problem(matcher: object) -> str | None:
    if not isinstance(matcher, str):
        return "matcher must be a string"
    try:
        re.compile(matcher)
    except re.error as exc:
        return f"matcher {matcher!r} is not a regular expression ({exc})"
    return None


def claude_settings_hooks(
    path: Path,
    source: HookSource,
    *,
    plugin_root: Path | None = None,
    snapshot: ProjectFiles | None = None,
) -> tuple[list[HookDefinition], list[str], bool]:
    """The hooks of a Claude Code settings file (`{"hooks": {...}}`), its warnings, and whether it has any.

    A missing file has none; one that cannot be read or is not JSON is one warning. A plugin's
    `hooks/hooks.json` has the same shape: pass its folder as `plugin_root`. A project's file is
    read through `snapshot`, the bytes the trust digest covers.
    """
    try:
        text = snapshot.text(path) if snapshot is not None else path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], [], False
    except (OSError, UnicodeDecodeError) as exc:
        return (
            [],
            [f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc}); its hooks are ignored"],
            False,
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}); its hooks are ignored"], False
    if not isinstance(data, dict) or "hooks" not in data:
        return [], [], False
    hooks, warnings = parse_hooks(data["hooks"], source, path, plugin_root=plugin_root)
    return hooks, warnings, True


def project_claude_hooks(
    workdir: Path, snapshot: ProjectFiles | None = None
) -> tuple[list[HookDefinition], list[str], list[Path]]:
    """The hooks of the project's `.claude/settings.json` and `.claude/settings.local.json`.

    `snapshot`: the project's files as the trust digest reads them (read now when omitted).

    Returns:
        The hooks, their warnings, and the files that define hooks (for the trust digest).
    """
    hooks: list[HookDefinition] = []
    warnings: list[str] = []
    files: list[Path] = []
    for name in CLAUDE_SETTINGS_FILES:
        path = workdir / ".claude" / name
        found, said, has_hooks = claude_settings_hooks(path, "project", snapshot=snapshot)
        hooks += found
        warnings += said
        if has_hooks:
            files.append(path)
    return hooks, warnings, files


def project_hooks(
    workdir: Path, snapshot: ProjectFiles | None = None
) -> tuple[list[HookDefinition], list[str], Path | None]:
    """The hooks of the project's `.tui-assist/settings.toml`, its warnings, and the file (None: none).

    `snapshot`: the project's files as the trust digest reads them (read now when omitted).
    """
    from tui_assist.core.rule_files import PermissionsError, project_settings_path
    from tui_assist.session.rule_files import read_rules_file
    from tui_assist.session.trust import ProjectFiles

    path = project_settings_path(workdir)
    files = snapshot or ProjectFiles(workdir)
    if not files.is_file(path):
        return [], [], None
    try:
        data = read_rules_file(path, files)
    except PermissionsError as exc:
        return [], [str(exc)], None
    if "hooks" not in data:
        return [], [], None
    hooks, warnings = parse_hooks(data["hooks"], "project", path)
    return hooks, warnings, path


# -- running hooks -------------------------------------------------------------------------------


async def run_hook(
    hook: HookDefinition,
    payload: Mapping[str, Any],
    workdir: Path,
    pass_env: frozenset[str],
    *,
    key_variables: frozenset[str] = frozenset(),
) -> HookRun:
    """Run `hook` once: `payload` as JSON on stdin, in `workdir`, with the shell's environment.

    `$CLAUDE_PROJECT_DIR` is the workdir and `$CLAUDE_PLUGIN_ROOT` a plugin hook's folder, in
    the environment, so the shell expands them in the command as Claude Code's does.

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
    env["TUI_ASSIST_PROJECT_DIR"] = env["CLAUDE_PROJECT_DIR"] = str(workdir)
    if hook.plugin_root is not None:
        env["CLAUDE_PLUGIN_ROOT"] = str(hook.plugin_root)
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
class HookReply:
    """What the hooks of one event said together, from their exit statuses and Claude Code's JSON.

    JSON on a hook's stdout (exit 0) is read as Claude Code's hook output: `continue: false` with
    `stopReason`, `systemMessage` (a warning line), `suppressOutput` (the tree shows no stdout),
    `decision: "block"` with `reason`, and `hookSpecificOutput` (`permissionDecision`,
    `permissionDecisionReason`, `updatedInput`, `additionalContext`, and `PermissionRequest`'s
    `decision.behavior`).
    """

    said: list[str] = field(default_factory=lambda: list[str]())
    """Plain stdout of the hooks that exited 0."""
    context: list[str] = field(default_factory=lambda: list[str]())
    """Their `additionalContext`."""
    blocked: str | None = None
    """Why the first hook that blocked did (exit 2, `decision: "block"`, `permissionDecision: "deny"`)."""
    stop: str | None = None
    """Why a hook said `"continue": false`."""
    permission: Literal["allow", "ask"] | None = None
    updated_input: dict[str, Any] | None = None
    """In Claude Code's field names."""
    answer: HookPermission | None = None
    """A `PermissionRequest` hook's allow or deny."""

    @property
    def settled(self) -> bool:
        """Whether no later hook of the event need run."""
        return (
            self.blocked is not None
            or self.stop is not None
            or (self.answer is not None and not self.answer.allowed)
        )

    def everything_said(self) -> str:
        """Plain stdout and `additionalContext` together (what becomes context for the model)."""
        return "\n".join(part for part in (*self.said, *self.context) if part.strip())


def _json_reply(stdout: str) -> dict[str, Any] | None:
    """The JSON object on a hook's stdout, or None when it printed something else."""
    if not stdout.startswith("{"):
        return None
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _text_of(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value.strip() if isinstance(value, str) else ""


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
                data = _json_reply(ran.stdout)
                shown = ran.stdout if data is None or data.get("suppressOutput") is not True else ""
                output = "\n".join(part for part in (shown, ran.stderr) if part)
                if data is None:
                    if ran.stdout:
                        reply.said.append(ran.stdout)
                else:
                    self._read_json(event, hook, data, reply)
                node.finish(outcome="blocked" if reply.settled else "done", output=output)
                if reply.settled:
                    return reply
        return reply

    def _read_json(self, event: str, hook: HookDefinition, data: Mapping[str, Any], reply: HookReply) -> None:
        """Fold one hook's JSON output into `reply`."""
        default = f"blocked by a {event} hook ({clip(hook.command, 60)})"
        if message := _text_of(data, "systemMessage"):
            self._warn(f"{event} hook: {message}")
        if data.get("continue") is False:
            reply.stop = _text_of(data, "stopReason") or f"a {event} hook said not to continue"
            return
        match data.get("decision"):
            case "block":
                reply.blocked = _text_of(data, "reason") or default
                return
            case "approve" if reply.permission is None:  # the older spelling of `allow`
                reply.permission = "allow"
            case _:
                pass
        specific = data.get("hookSpecificOutput")
        if not isinstance(specific, Mapping):
            return
        specific_map: Mapping[str, Any] = specific
        if context := _text_of(specific_map, "additionalContext"):
            reply.context.append(context)
        match specific_map.get("permissionDecision"):
            case "deny":
                reply.blocked = _text_of(specific_map, "permissionDecisionReason") or default
                return
            case "ask":
                reply.permission = "ask"
            case "allow" if reply.permission is None:
                reply.permission = "allow"
            case _:
                pass
        updated = specific_map.get("updatedInput")
        if isinstance(updated, Mapping):
            reply.updated_input = {str(k): v for k, v in updated.items()}
        decision = specific_map.get("decision")
        if event == "PermissionRequest" and isinstance(decision, Mapping):
            decision_map: Mapping[str, Any] = decision
            match decision_map.get("behavior"):
                case "allow":
                    reply.answer = HookPermission(True)
                case "deny":
                    reply.answer = HookPermission(False, _text_of(decision_map, "message") or default)
                case _:
                    pass

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
