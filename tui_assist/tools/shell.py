"""The `bash` tool: one persistent shell per toolset.

Why one long-lived process rather than one per command: the model works like a person at a
terminal (`cd src`, then `ls`, then `export X=1`), so state must persist between calls. A toolset
lives for one turn or one refine round, so a `cd` never leaks into the next round.

How a command's end is found: the command is handed to bash through a quoted heredoc (so an
unbalanced quote in it is a syntax error of that command, not a shell stuck waiting for more
input), run with `eval` with stdin from `/dev/null`, and followed by a `printf` of a random
sentinel and `$?`. Reading stops at the sentinel. The sentinel is printed as two separate words,
so even `set -x` tracing never shows it whole.

Bash runs in its own session (process group), so a timeout or a cancellation kills the command
and everything it started with one `killpg`; the next command then starts a fresh shell.

Why a lifeline pipe ties the shell to the program's life: its own session means nothing kills it
when the program dies without cleaning up (SIGKILL, a crash). A parent-death signal
(`PR_SET_PDEATHSIG`) would reach bash only, not the command it is running, and fires when the
*thread* that spawned it ends rather than the process. Instead, bash gets the read end of a pipe
whose write end only this process holds, and starts a small disowned watcher in its own process
group that blocks reading it. The kernel closes the write end however the program ends, the read
returns, and the watcher SIGKILLs the whole group: bash, the command, and itself. Closing the
write end is also how `aclose` releases a shell.

Why secrets are left out of the shell's environment: with approval off, a model could simply
`echo $ANTHROPIC_API_KEY`, and the key would be stored in the history. What is left out (names
that look like secrets, the providers' key variables and copies of their keys, URLs with a
password) is `tools/environment.py`'s to say; `pass_env` keeps what it names.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict, model_validator

from tui_assist.core.model import ToolSpec
from tui_assist.core.observer import SandboxUse
from tui_assist.core.text import truncate_middle, truncation_marker
from tui_assist.core.tooling import ToolContext, ToolOutput
from tui_assist.tools.background import (
    BACKGROUND_DESCRIPTION,
    BACKGROUND_PROPERTY,
    BackgroundShells,
    start_output,
)
from tui_assist.tools.base import validate_input
from tui_assist.tools.environment import is_secret_variable, without_secrets
from tui_assist.tools.processes import kill_group
from tui_assist.tools.sandbox import Sandbox

__all__ = ["BashArgs", "BashTool", "CommandResult", "ShellSession", "is_secret_variable", "shell_env"]

_SENTINEL_PREFIX = "__TUI_ASSIST_DONE_"
_READ_CHUNK = 65_536
_REAP_TIMEOUT = 2.0
"""Seconds to wait for a killed shell to be reaped before giving up on it."""

_DROPPED_ENV = ("BASH_ENV", "ENV", "PROMPT_COMMAND", "CDPATH")
"""Variables that would make a non-interactive bash run user scripts or change `cd`."""

_FIXED_ENV = {
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}
"""Nothing may wait for a human at a terminal that does not exist."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What one command produced."""

    output: str
    """Everything it wrote to stdout and stderr, interleaved, already truncated."""
    exit_status: int | None
    """The command's exit status, or the shell's when it exited; None after a timeout."""
    timed_out: bool = False
    """The command ran past its timeout and the shell was killed."""
    shell_exited: bool = False
    """The shell itself ended (e.g. the command ran `exit`); its state is gone."""


class _OutputCollector:
    """Keeps a bounded head and tail of a byte stream, so a flood of output costs no memory."""

    def __init__(self, max_chars: int) -> None:
        self._max_chars = max_chars
        # UTF-8 needs at most 4 bytes per character, so these caps always hold enough text.
        self._cap = 4 * max_chars
        self._head = bytearray()
        self._tail = bytearray()
        self._dropped = 0

    def feed(self, data: bytes) -> None:
        room = self._cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data
        excess = len(self._tail) - self._cap
        if excess > 0:
            del self._tail[:excess]
            self._dropped += excess

    def text(self) -> str:
        if not self._dropped:
            whole = bytes(self._head + self._tail).decode("utf-8", errors="replace")
            return truncate_middle(whole, self._max_chars)
        head_text = bytes(self._head).decode("utf-8", errors="replace")
        tail_text = bytes(self._tail).decode("utf-8", errors="replace")
        keep_head = self._max_chars // 2
        keep_tail = self._max_chars - keep_head
        # Dropped bytes are counted as characters: exact for ASCII, close enough otherwise.
        omitted = len(head_text) - keep_head + len(tail_text) - keep_tail + self._dropped
        return head_text[:keep_head] + truncation_marker(omitted) + tail_text[len(tail_text) - keep_tail :]


def shell_env(
    workdir: Path, pass_env: frozenset[str], key_variables: frozenset[str] = frozenset()
) -> dict[str, str]:
    """The environment the shell (and the user's hooks) run with: this process's, minus secrets.

    Args:
        workdir: Becomes `PWD`.
        pass_env: Variables kept although their names look like secrets (`is_secret_variable`).
        key_variables: The providers' configured key variables, never passed unless in `pass_env`
            (`tools.environment.without_secrets` says what else is left out).
    """
    env = without_secrets(os.environ, pass_env=pass_env, key_variables=key_variables)
    for name in _DROPPED_ENV:
        env.pop(name, None)
    env.update(_FIXED_ENV)
    env["PWD"] = str(workdir)
    return env


def _watcher(lifeline_fd: int) -> str:
    """The first line fed to a new shell: start the lifeline watcher, then close its fd.

    The watcher is disowned so `wait` and `jobs` in the model's commands never see it, and its
    stdio points at /dev/null so it never keeps the output pipe open after bash exits.
    """
    return (
        f"{{ read -r -u {lifeline_fd} _; kill -KILL 0; }} </dev/null >/dev/null 2>&1 & disown; "
        f"exec {lifeline_fd}<&-\n"
    )


def _wrap(command: str, token: str) -> str:
    """The script fed to bash's stdin for one command."""
    delimiter = f"__TUI_ASSIST_EOF_{token}"
    return (
        f"IFS= read -r -d '' __tui_assist_cmd <<'{delimiter}'\n"
        f"{command}\n"
        f"{delimiter}\n"
        '{ eval "$__tui_assist_cmd"\n} < /dev/null\n'
        f"printf '%s%s %d\\n' '{_SENTINEL_PREFIX}' '{token}' \"$?\"\n"
    )


_RESTART_NOTE = (
    "[the shell was restarted (earlier cd and variables are gone): {names} appeared, "
    "and the sandbox keeps it read-only]\n"
)


class ShellSession:
    """A persistent `bash --noprofile --norc` process, started lazily in the workdir.

    Commands run one at a time (concurrent callers queue). After a timeout, a cancellation or the
    shell's own exit, the process is gone and the next command starts a fresh one in the workdir.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        max_output_chars: int = 30_000,
        pass_env: Iterable[str] = (),
        sandbox: Sandbox | None = None,
        key_variables: Iterable[str] = (),
    ) -> None:
        """Prepare a session; no process starts until the first command.

        Args:
            workdir: Where the shell starts.
            max_output_chars: Output beyond this many characters is cut in the middle.
            pass_env: Variables passed to the shell even though their names look like secrets
                (see `is_secret_variable`; the `[tools.bash] pass_env` setting).
            sandbox: Run the shell inside this OS sandbox (None: unsandboxed).
            key_variables: The providers' configured key variables (kept out, see `shell_env`).
        """
        self._workdir = workdir
        self._key_variables = frozenset(key_variables)
        self._sandbox = sandbox
        self._max_output_chars = max_output_chars
        self._pass_env = frozenset(pass_env)
        self._proc: asyncio.subprocess.Process | None = None
        self._lifeline: BinaryIO | None = None
        """The write end of the pipe the shell's watcher reads; closing it kills the shell."""
        self._lock = asyncio.Lock()
        self._unbound: tuple[Path, ...] = ()
        """The sandbox's guarded paths that did not exist when the shell started (so are not bound
        read-only): one a command creates is removed, one that appears between commands restarts it."""
        self._restarted_note = ""

    @property
    def workdir(self) -> Path:
        """Where the shell starts."""
        return self._workdir

    @property
    def running(self) -> bool:
        """Whether a shell process is alive right now."""
        return self._proc is not None and self._proc.returncode is None

    @property
    def pid(self) -> int | None:
        """The shell's process id (also its process group id), if it is running."""
        return self._proc.pid if self.running and self._proc is not None else None

    async def run(self, command: str, *, timeout: float) -> CommandResult:
        """Run one command in the shell and collect its output.

        Args:
            command: Bash source; may span lines.
            timeout: Seconds before the command (and the shell) is killed.

        Returns:
            The command's output and status. A timeout is a result, not an exception.

        Raises:
            OSError: if bash cannot be started (e.g. the workdir is gone).
            asyncio.CancelledError: after killing the command, when the caller is cancelled.
        """
        async with self._lock:
            proc = await self._ensure_started()
            assert proc.stdin is not None and proc.stdout is not None
            unbound = self._unbound
            token = secrets.token_hex(12)
            collector = _OutputCollector(self._max_output_chars)
            try:
                async with asyncio.timeout(timeout):
                    proc.stdin.write(_wrap(command, token).encode())
                    await proc.stdin.drain()
                    status = await self._read_until_sentinel(
                        proc.stdout, f"{_SENTINEL_PREFIX}{token}".encode(), collector
                    )
            except TimeoutError:
                await self._kill()
                return CommandResult(collector.text(), None, timed_out=True)
            except asyncio.CancelledError:
                await self._kill()
                raise
            except (BrokenPipeError, ConnectionResetError):
                # The shell died before it read the command (e.g. killed from outside).
                returncode = await self._kill()
                return CommandResult(collector.text(), returncode, shell_exited=True)
            if status is None:
                returncode = await self._kill(grace=_REAP_TIMEOUT)
                return CommandResult(collector.text(), returncode, shell_exited=True)
            output, self._restarted_note = self._restarted_note + collector.text(), ""
            for path in _existing(unbound):
                output += await self._undo_created(path)
            return CommandResult(output, status)

    async def _undo_created(self, path: Path) -> str:
        """Remove a guarded path a sandboxed command just made (it decides what runs outside)."""
        name = self._name(path)
        if path.is_dir() and not path.is_symlink():
            await asyncio.to_thread(shutil.rmtree, path, True)
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        return (
            f"\n[the sandbox removed {name}, which this command created: it decides what "
            "runs outside the sandbox (the project's permission rules, the user's settings, trusted "
            "scripts), which no sandboxed command may write]"
        )

    def _name(self, path: Path) -> str:
        """`path` as the model knows it: relative to the workdir, a folder with a final `/`."""
        try:
            name = str(path.relative_to(self._workdir.resolve()))
        except ValueError:
            name = str(path)
        return f"{name}/" if path.is_dir() else name

    async def restart(self) -> None:
        """Kill the shell (and anything it started); the next command gets a fresh one."""
        async with self._lock:
            await self._kill()

    async def aclose(self) -> None:
        """Kill the shell and everything in its process group."""
        await self.restart()

    async def _ensure_started(self) -> asyncio.subprocess.Process:
        appeared = _existing(self._unbound)
        if self._proc is not None and self._proc.returncode is None and not appeared:
            return self._proc
        if self._proc is not None:
            # Also when a guarded path appeared since the shell started (the app saved a rule):
            # only a fresh sandbox can bind it read-only.
            await self._kill()
            names = ", ".join(self._name(path) for path in appeared)
            self._restarted_note = _RESTART_NOTE.format(names=names) if appeared else ""
        # Both ends are close-on-exec; only the read end is handed to bash, under the same number.
        argv = ["bash", "--noprofile", "--norc"]
        if self._sandbox is not None:
            argv = self._sandbox.wrap(argv, self._workdir)
            bound = set(argv)  # what `wrap` found, not a second look that could differ
            self._unbound = tuple(p for p in self._sandbox.guarded(self._workdir) if str(p) not in bound)
        read_end, write_end = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=self._workdir,
                env=shell_env(self._workdir, self._pass_env, self._key_variables),
                start_new_session=True,
                pass_fds=(read_end,),
            )
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        self._proc = proc
        self._lifeline = open(write_end, "wb", buffering=0)  # closed by _kill
        assert proc.stdin is not None
        proc.stdin.write(_watcher(read_end).encode())
        return proc

    @staticmethod
    async def _read_until_sentinel(
        stdout: asyncio.StreamReader, sentinel: bytes, collector: _OutputCollector
    ) -> int | None:
        """Feed output to `collector` up to the sentinel; return the exit status (None at EOF)."""
        pending = b""
        while True:
            chunk = await stdout.read(_READ_CHUNK)
            if not chunk:
                collector.feed(pending)
                return None
            data = pending + chunk
            index = data.find(sentinel)
            if index >= 0:
                rest = data[index + len(sentinel) :]
                newline = rest.find(b"\n")
                if newline >= 0:
                    collector.feed(data[:index])
                    # Anything after the status line is late output of a background job: dropped.
                    try:
                        return int(rest[:newline].decode("ascii", errors="replace").strip())
                    except ValueError:
                        return -1
                collector.feed(data[:index])
                pending = data[index:]
                continue
            # Hold back a sentinel-sized tail: the sentinel may straddle two chunks.
            split = max(0, len(data) - (len(sentinel) - 1))
            collector.feed(data[:split])
            pending = data[split:]

    async def _kill(self, *, grace: float = 0.0) -> int | None:
        """Kill the shell's whole process group and reap it; return its exit status if known.

        With a `grace` period, a shell that is already exiting on its own gets that long to do
        so first, so its real exit status is reported rather than SIGKILL's.
        """
        proc, self._proc = self._proc, None
        lifeline, self._lifeline = self._lifeline, None
        if lifeline is not None:
            lifeline.close()
        if proc is None:
            return None
        if grace > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(grace):
                    await proc.wait()
        # Also reaps what the command started, re-parented to us (`processes.end_at_exit`).
        kill_group(proc.pid, started=(proc.pid,))
        if proc.stdin is not None:
            proc.stdin.close()
        # A process that escaped the group (setsid) may still hold the pipe open: wait boundedly.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_REAP_TIMEOUT):
                await proc.wait()
        return proc.returncode


class BashArgs(BaseModel):
    """Validated input of the `bash` tool."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    command: str | None = None
    """Bash source to run; may be absent only when `restart` is true."""
    restart: bool = False
    """Kill the shell first; the next command runs in a fresh shell in the workdir."""
    sandbox: bool = True
    """False asks to run outside the OS sandbox (the user is always asked)."""
    run_in_background: bool = False
    """Start the command in a background shell of its own (`tools/background.py`)."""

    @model_validator(mode="after")
    def _command_present(self) -> BashArgs:
        if self.command is None:
            if not self.restart:
                raise ValueError("command is required (unless restart is true)")
        elif not self.command.strip():
            raise ValueError("command must not be empty")
        elif "\x00" in self.command:
            raise ValueError("command must not contain NUL characters")
        return self


_DESCRIPTION = """\
Run a command in a persistent bash shell (non-interactive, no TTY).
State persists between calls: the working directory (`cd`), exported variables and shell \
functions. The shell starts in the project's working directory.
- stdout and stderr are merged; stdin is /dev/null, so interactive programs get no input.
- Each command has a timeout of {timeout}; on timeout the shell is killed and restarted fresh.
- Output longer than {max_chars} characters is cut in the middle with a marker; pipe through \
`head`, `tail` or `grep` to see what you need.
- A non-zero exit status is reported as a final line `[exit status N]`.
- Pass `restart: true` to start a fresh shell.
- Environment variables whose names look like secrets (API keys, tokens, passwords) are not \
passed to the shell."""

_SANDBOX_DESCRIPTION = """
- Commands run in a sandbox: files outside the working directory are read-only, and so is \
its `.git` (so `git commit` and other writes to the repository need `"sandbox": false`), /tmp is \
private{network}. They run without asking the user. If a command really needs more (e.g. to \
write outside the working directory or to `.git`{or_network}), pass `"sandbox": false`: the user is asked, \
and it runs in a separate unsandboxed shell that does not share the sandboxed shell's state."""

_SANDBOX_HINT = (
    "[this ran in the sandbox (read-only outside the working directory{network}); if it needs more, "
    'run it again with "sandbox": false and the user will be asked]'
)
_SANDBOX_SYMPTOMS = (
    "Read-only file system",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
)
"""What a command prints when the sandbox stopped it."""


def _format_seconds(seconds: float) -> str:
    return f"{seconds:g}s"


class BashTool:
    """The `bash` tool: runs commands in the toolset's persistent shell.

    Exit statuses: a non-zero status is reported as a trailing `[exit status N]` line but is
    *not* an error result. Commands such as `grep` or `test` fail routinely as part of normal
    work, and the model reads the status either way; `is_error` is kept for failures of the tool
    itself: a timeout, a shell that cannot start.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        timeout: float = 120.0,
        max_output_chars: int = 30_000,
        pass_env: Iterable[str] = (),
        sandbox: Sandbox | None = None,
        key_variables: Iterable[str] = (),
        background: BackgroundShells | None = None,
    ) -> None:
        """Create the tool and its (not yet started) shell, which takes the other arguments.

        `timeout` is per command, in seconds. With a `sandbox`, a call with `"sandbox": false` runs
        in a second, unsandboxed shell (after the user approved it). With `background` (the
        session's), `run_in_background` is offered.
        """
        self._timeout = timeout
        self._background = background
        self._sandbox = sandbox
        pass_env, key_variables = tuple(pass_env), tuple(key_variables)
        self._session = ShellSession(
            workdir,
            max_output_chars=max_output_chars,
            pass_env=pass_env,
            sandbox=sandbox,
            key_variables=key_variables,
        )
        self._outside: ShellSession | None = (
            ShellSession(
                workdir, max_output_chars=max_output_chars, pass_env=pass_env, key_variables=key_variables
            )
            if sandbox is not None
            else None
        )
        description = _DESCRIPTION.format(timeout=_format_seconds(timeout), max_chars=max_output_chars)
        properties: dict[str, Any] = {
            "command": {"type": "string", "description": "The bash command to run."},
            "restart": {
                "type": "boolean",
                "description": "Restart the shell (fresh state in the working directory).",
            },
        }
        if sandbox is not None:
            description += _SANDBOX_DESCRIPTION.format(
                network="" if sandbox.network else ", there is no network",
                or_network="" if sandbox.network else " or to reach the network",
            )
            properties["sandbox"] = {
                "type": "boolean",
                "description": "false: run outside the sandbox (the user is asked first). Default true.",
            }
        if background is not None:
            description += BACKGROUND_DESCRIPTION
            properties["run_in_background"] = BACKGROUND_PROPERTY
        self._spec = ToolSpec(
            name="bash",
            description=description,
            input_schema={"type": "object", "properties": properties},
            # The API's own bash tool has a fixed schema: `run_in_background` needs ours.
            native_type=None if background is not None else "bash_20250124",
        )

    @property
    def spec(self) -> ToolSpec:
        """The `bash` tool as offered to the model."""
        return self._spec

    @property
    def session(self) -> ShellSession:
        """The persistent shell behind this tool (sandboxed when the tool has a sandbox)."""
        return self._session

    def sandbox_use(self, args: BashArgs) -> SandboxUse:
        """How this call runs, for the approval policy.

        Args:
            args: The parsed arguments.

        Returns:
            `off` without a sandbox, `escape` when the call asks to leave it, else `sandboxed`.
        """
        if self._sandbox is None:
            return "off"
        return "sandboxed" if args.sandbox else "escape"

    def parse(self, raw: dict[str, Any]) -> BashArgs:
        """Validate the model's input.

        Raises:
            ToolInputError: if `command` is missing or not a string, or `restart` not a boolean.
        """
        return validate_input(BashArgs, raw, "bash")

    def side_effecting(self, args: BashArgs) -> bool:
        """Always: a shell command can change anything, so every call needs approval."""
        return True

    def summary(self, args: BashArgs) -> str:
        """The exact command for the approval prompt, after a note when the shell restarts first."""
        if args.restart:
            note = "(restart the shell)"
            return note if args.command is None else f"{note}\n{args.command}"
        background = "\n(runs in the background)" if args.run_in_background and self._background else ""
        return (args.command or "") + background

    async def run(self, args: BashArgs, ctx: ToolContext) -> ToolOutput:
        """Run the command in the persistent shell.

        Args:
            args: The parsed arguments.
            ctx: The running context (unused: the shell belongs to the toolset).

        Returns:
            The output, with a trailing status line when the command did not exit 0.

        Raises:
            asyncio.CancelledError: after killing the running command.
        """
        session = self._session if args.sandbox or self._outside is None else self._outside
        if args.restart:
            await session.restart()
            if args.command is None:
                return ToolOutput(f"The shell was restarted (fresh state in {session.workdir}).")
        assert args.command is not None
        if args.run_in_background and self._background is not None:
            return await start_output(self._background, args.command, sandboxed=session is self._session)
        try:
            result = await session.run(args.command, timeout=self._timeout)
        except OSError as error:
            return ToolOutput(f"could not start bash in {session.workdir}: {error}", is_error=True)
        output = self._format(result)
        if session is self._session and self._sandbox is not None and _blocked_by_sandbox(result):
            network = "" if self._sandbox.network else ", no network"
            return ToolOutput(f"{output.content}\n{_SANDBOX_HINT.format(network=network)}", output.is_error)
        return output

    def _format(self, result: CommandResult) -> ToolOutput:
        output = result.output.rstrip("\n")
        if result.timed_out:
            note = (
                f"[command timed out after {_format_seconds(self._timeout)}; the shell was restarted, "
                "so its working directory and variables were reset]"
            )
            return ToolOutput(f"{output}\n{note}" if output else note, is_error=True)
        if result.shell_exited:
            status = "" if result.exit_status is None else f" with status {result.exit_status}"
            note = (
                f"[the shell exited{status}; the next command starts a fresh shell in "
                f"{self._session.workdir}]"
            )
        elif result.exit_status:
            note = f"[exit status {result.exit_status}]"
        else:
            return ToolOutput(output or "(no output)")
        return ToolOutput(f"{output}\n{note}" if output else note)

    async def aclose(self) -> None:
        """Kill the shell(s) and everything they started."""
        await self._session.aclose()
        if self._outside is not None:
            await self._outside.aclose()


def _existing(paths: Iterable[Path]) -> list[Path]:
    return [path for path in paths if os.path.lexists(path)]


def _blocked_by_sandbox(result: CommandResult) -> bool:
    return any(symptom in result.output for symptom in _SANDBOX_SYMPTOMS)
