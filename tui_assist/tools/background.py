"""Background shells: `bash` with `run_in_background`, and the tools `bash_output` and `kill_shell`.

A background shell is one `bash -c COMMAND` of its own, started the way the persistent shell is
(the same environment without secrets, the same sandbox), that outlives the turn: the session owns
them all (`BackgroundShells`, one per session) and ends every one when it ends.

How nothing is left behind:

- Each shell runs in a process group of its own and under a `ProcessScope`, whose mark its
  children inherit (a daemon that calls `setsid` too): `kill` ends the scope and the group.
- A lifeline pipe (as in `tools/shell.py`) kills the group when this program dies without
  cleaning up; bubblewrap's `--die-with-parent` does the same for a sandboxed one.
- When a shell's command exits, its lifeline is closed, so what it left running in its group ends.

Why output is polled rather than read as it comes: ten shells each printing a line every few
milliseconds would wake the event loop thousands of times a second. The pipe is read every
`_POLL_SECONDS`, at most `_MAX_READ_PER_POLL` bytes at a time, so a flood (`yes`) fills the pipe and
its writer waits (a dev server's log is never slowed by it). What is read goes to a ring of at most
`OUTPUT_CAP` bytes per shell: the oldest output is dropped, and `bash_output` says how much.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final, Literal

from pydantic import BaseModel, ConfigDict

from tui_assist.core.model import ToolSpec
from tui_assist.core.text import truncate_middle
from tui_assist.core.tooling import ToolContext, ToolOutput
from tui_assist.tools.base import validate_input
from tui_assist.tools.processes import ProcessScope, end_at_exit, kill_group
from tui_assist.tools.sandbox import Sandbox

__all__ = [
    "BASH_OUTPUT_TOOL",
    "KILL_SHELL_TOOL",
    "OUTPUT_CAP",
    "BackgroundShell",
    "BackgroundShells",
    "BashOutputTool",
    "KillShellTool",
    "OutputRing",
    "ShellInfo",
    "ShellStatus",
]

BASH_OUTPUT_TOOL: Final = "bash_output"
KILL_SHELL_TOOL: Final = "kill_shell"
OUTPUT_CAP: Final = 1024 * 1024
"""Bytes of output kept per background shell (the newest)."""
_READ_CHUNK: Final = 65_536
_POLL_SECONDS: Final = 0.1
_MAX_READ_PER_POLL: Final = 4 * _READ_CHUNK
_REAP_SECONDS: Final = 2.0

ShellStatus = Literal["running", "completed", "failed", "killed"]

BACKGROUND_DESCRIPTION: Final = """
- Pass `run_in_background: true` for a command that keeps running (a dev server, a watcher): it \
starts in a shell of its own in the working directory and the call answers at once with a \
`shell_id`. Read its new output with `bash_output` and stop it with `kill_shell`; it is ended \
when the session ends."""

BACKGROUND_PROPERTY: Final = {
    "type": "boolean",
    "description": "Run the command in the background; answers at once with a shell_id.",
}


class OutputRing:
    """The newest `cap` bytes of a stream, addressed by their offset in the whole stream.

    Kept as the chunks read (never one buffer moved at each feed), the oldest dropped whole.
    """

    def __init__(self, cap: int = OUTPUT_CAP) -> None:
        """Keep at most `cap` bytes."""
        self._cap = cap
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._start = 0
        """The stream offset of the first kept byte."""

    @property
    def total(self) -> int:
        """Bytes fed so far (kept or dropped)."""
        return self._start + self._size

    def __len__(self) -> int:
        return self._size

    def feed(self, data: bytes) -> None:
        """Append `data`, dropping the oldest bytes beyond the cap."""
        if not data:
            return
        self._chunks.append(data)
        self._size += len(data)
        while self._size > self._cap:
            excess = self._size - self._cap
            first = self._chunks[0]
            if len(first) <= excess:
                self._chunks.popleft()
                cut = len(first)
            else:
                self._chunks[0] = first[excess:]
                cut = excess
            self._size -= cut
            self._start += cut

    def since(self, offset: int) -> tuple[bytes, int]:
        """What came after stream offset `offset`, and how many of those bytes were dropped."""
        dropped = max(0, self._start - offset)
        skip = max(0, offset - self._start)
        if skip >= self._size:
            return b"", dropped
        return b"".join(self._chunks)[skip:], dropped

    def tail(self, size: int) -> bytes:
        """The last `size` bytes kept."""
        picked: list[bytes] = []
        left = size
        for chunk in reversed(self._chunks):
            if left <= 0:
                break
            picked.append(chunk[-left:])
            left -= len(chunk)
        return b"".join(reversed(picked))

    def last_line(self) -> str:
        """The last line that is not blank (from the last 4 KB), for a one-line view."""
        tail = self.tail(4096).decode("utf-8", errors="replace")
        lines = [line for line in tail.replace("\r", "\n").splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""


@dataclass(frozen=True, slots=True)
class ShellInfo:
    """What a host shows of a background shell at one moment."""

    shell_id: str
    command: str
    status: ShellStatus
    exit_code: int | None
    runtime: float
    """Seconds it ran (so far, while running)."""
    last_line: str
    pid: int | None
    """Its bash's process id (also its process group) while it runs."""


class BackgroundShell:
    """One background command: its process, its output ring, its status."""

    def __init__(self, shell_id: str, command: str, proc: asyncio.subprocess.Process, output_fd: int) -> None:
        """Follow `proc` (already started), its output on `output_fd` (non-blocking, owned here)."""
        self.shell_id = shell_id
        self.command = command
        self.output = OutputRing()
        self.status: ShellStatus = "running"
        self.exit_code: int | None = None
        self.started = time.monotonic()
        self.ended: float | None = None
        self.read_offset = 0
        """Where the model's last `bash_output` stopped."""
        self._proc = proc
        self._output_fd = output_fd
        self.scope: ProcessScope | None = None
        self.lifeline: BinaryIO | None = None
        self.done = asyncio.Event()

    @property
    def pid(self) -> int:
        """The shell's process id (and process group)."""
        return self._proc.pid

    @property
    def running(self) -> bool:
        """Whether it still runs."""
        return self.status == "running"

    def info(self) -> ShellInfo:
        """Its state now."""
        end = self.ended if self.ended is not None else time.monotonic()
        return ShellInfo(
            self.shell_id,
            self.command,
            self.status,
            self.exit_code,
            end - self.started,
            self.output.last_line(),
            self.pid if self.running else None,
        )

    def read_new(self) -> tuple[str, int]:
        """The output since the last call (decoded), and how many bytes of it were dropped."""
        data, dropped = self.output.since(self.read_offset)
        self.read_offset = self.output.total
        return data.decode("utf-8", errors="replace"), dropped

    async def follow(self, on_end: Callable[[BackgroundShell], None]) -> None:
        """Read the output until the command ends, then record how it ended."""
        reader = asyncio.ensure_future(self._read())
        try:
            code = await self._proc.wait()
        finally:
            self._end_group()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_REAP_SECONDS):
                await reader  # the group is gone, so the pipe reaches its end
        reader.cancel()
        if self.status == "running":
            self.status = "completed" if code == 0 else "failed"
            self.exit_code = code
        self.ended = time.monotonic()
        self.done.set()
        on_end(self)

    async def _read(self) -> None:
        """Poll the pipe until its end (every writer gone), then close it."""
        try:
            while self._read_available():
                await asyncio.sleep(_POLL_SECONDS)
        finally:
            os.close(self._output_fd)

    def _read_available(self) -> bool:
        """Read what the pipe holds (up to a bound); False at its end."""
        read = 0
        while read < _MAX_READ_PER_POLL:
            try:
                chunk = os.read(self._output_fd, _READ_CHUNK)
            except BlockingIOError:
                return True
            if not chunk:
                return False
            self.output.feed(chunk)
            read += len(chunk)
        return True

    async def kill(self) -> None:
        """End the command and everything it started; wait until it is recorded as ended."""
        if self.running:
            self.status = "killed"
            self._end_group()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_REAP_SECONDS):
                await self.done.wait()

    def _end_group(self) -> None:
        """Kill the shell's scope and group (what it left running too) and close its lifeline."""
        if self.lifeline is not None:
            self.lifeline.close()
            self.lifeline = None
        if self.scope is not None:
            self.scope.close(started=(self._proc.pid,))
        kill_group(self._proc.pid, started=(self._proc.pid,))


def _script(lifeline_fd: int) -> str:
    """`bash -c` source: start the lifeline watcher (see `tools/shell.py`), then run `$1`."""
    return (
        f"{{ read -r -u {lifeline_fd} _; kill -KILL 0; }} </dev/null >/dev/null 2>&1 & disown; "
        f'exec {lifeline_fd}<&-; __tui_assist_cmd=$1; shift; eval "$__tui_assist_cmd"'
    )


class BackgroundShells:
    """The background shells of one session: started by `bash`, all ended by `aclose`."""

    def __init__(
        self,
        workdir: Path,
        *,
        env: Callable[[], dict[str, str]],
        sandbox: Sandbox | None = None,
    ) -> None:
        """Start shells in `workdir` with `env()` (the shell's environment), in `sandbox` if any."""
        self._workdir = workdir.resolve()
        self._env = env
        self._sandbox = sandbox
        self._shells: dict[str, BackgroundShell] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._listeners: list[Callable[[ShellInfo], None]] = []
        self._closed = False

    @property
    def shells(self) -> list[BackgroundShell]:
        """Every shell of the session, oldest first (ended ones too)."""
        return list(self._shells.values())

    def infos(self) -> list[ShellInfo]:
        """Every shell's state now, oldest first."""
        return [shell.info() for shell in self._shells.values()]

    def get(self, shell_id: str) -> BackgroundShell | None:
        """The shell with this id, if any."""
        return self._shells.get(shell_id)

    def subscribe(self, listener: Callable[[ShellInfo], None]) -> Callable[[], None]:
        """Call `listener` when a shell starts or ends; returns what unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self, shell: BackgroundShell) -> None:
        info = shell.info()
        for listener in list(self._listeners):
            listener(info)

    async def start(self, command: str, *, sandboxed: bool = True) -> BackgroundShell:
        """Start `command` in the background (in the sandbox unless `sandboxed` is false).

        Raises:
            OSError: if bash cannot be started; RuntimeError once the session has ended.
        """
        if self._closed:
            raise RuntimeError("the session has ended")
        end_at_exit()  # a program that ends without closing the session still ends them
        scope = ProcessScope("background-shell")
        read_end, write_end = os.pipe()
        output_read, output_write = os.pipe()
        os.set_blocking(output_read, False)
        argv = ["bash", "--noprofile", "--norc", "-c", _script(read_end), "bash", command]
        if sandboxed and self._sandbox is not None:
            argv = self._sandbox.wrap(argv, self._workdir)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=output_write,
                stderr=output_write,
                cwd=self._workdir,
                env=scope.environ(self._env()),
                start_new_session=True,
                pass_fds=(read_end,),
            )
        except BaseException:
            os.close(write_end)
            os.close(output_read)
            scope.close()  # cancelled while starting: whatever did start carries the mark
            raise
        finally:
            os.close(read_end)
            os.close(output_write)
        shell = BackgroundShell(f"bash_{len(self._shells) + 1}", command, proc, output_read)
        shell.scope = scope
        shell.lifeline = open(write_end, "wb", buffering=0)  # noqa: SIM115  # closed by _end_group
        self._shells[shell.shell_id] = shell
        task = asyncio.ensure_future(shell.follow(self._changed))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        self._changed(shell)
        return shell

    async def kill(self, shell_id: str) -> bool:
        """Kill a running shell; False when there is no such shell or it had ended."""
        shell = self._shells.get(shell_id)
        if shell is None or not shell.running:
            return False
        await shell.kill()
        return True

    async def aclose(self) -> None:
        """End every shell and what it started (the session ends); no shell starts afterwards."""
        self._closed = True
        await asyncio.gather(*(shell.kill() for shell in self._shells.values() if shell.running))
        for task in list(self._tasks):
            task.cancel()


class _ShellIdArgs(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    shell_id: str


def _shell_id_schema(description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"shell_id": {"type": "string", "description": description}},
        "required": ["shell_id"],
    }


def _unknown(shells: BackgroundShells, shell_id: str) -> ToolOutput:
    known = ", ".join(shell.shell_id for shell in shells.shells) or "none"
    return ToolOutput(f"no background shell {shell_id!r} (known: {known})", is_error=True)


def _status_line(shell: BackgroundShell) -> str:
    info = shell.info()
    if info.status == "running":
        return f"[{info.shell_id}: running for {info.runtime:.0f}s]"
    if info.status == "killed":
        return f"[{info.shell_id}: killed after {info.runtime:.0f}s]"
    return f"[{info.shell_id}: exited with status {info.exit_code} after {info.runtime:.0f}s]"


class BashOutputTool:
    """`bash_output`: a background shell's new output, its status and exit code. Never asked."""

    def __init__(self, shells: BackgroundShells, *, max_output_chars: int = 30_000) -> None:
        """Read from the session's `shells`, at most `max_output_chars` characters per call."""
        self._shells = shells
        self._max_chars = max_output_chars
        self._spec = ToolSpec(
            name=BASH_OUTPUT_TOOL,
            description=(
                "Read the output a background shell (started by bash with run_in_background) "
                "printed since the last bash_output call for it, with its status (running, "
                "completed, failed, killed) and exit code."
            ),
            input_schema=_shell_id_schema("The shell_id bash answered with."),
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool as offered to the model."""
        return self._spec

    def parse(self, raw: dict[str, Any]) -> _ShellIdArgs:
        """Validate the input."""
        return validate_input(_ShellIdArgs, raw, BASH_OUTPUT_TOOL)

    def side_effecting(self, args: _ShellIdArgs) -> bool:
        """Never: it only reads what the shell printed."""
        return False

    def summary(self, args: _ShellIdArgs) -> str:
        """`bash_output SHELL_ID`."""
        return f"{BASH_OUTPUT_TOOL} {args.shell_id}"

    async def run(self, args: _ShellIdArgs, ctx: ToolContext) -> ToolOutput:
        """The new output, after a status line."""
        shell = self._shells.get(args.shell_id)
        if shell is None:
            return _unknown(self._shells, args.shell_id)
        text, dropped = shell.read_new()
        lines = [_status_line(shell)]
        if dropped:
            lines.append(f"[{dropped} bytes of older output were dropped: only the last 1 MB is kept]")
        lines.append(truncate_middle(text.rstrip("\n"), self._max_chars) if text else "(no new output)")
        return ToolOutput("\n".join(lines))


class KillShellTool:
    """`kill_shell`: end a background shell and everything it started. Never asked (it only stops)."""

    def __init__(self, shells: BackgroundShells) -> None:
        """Kill among the session's `shells`."""
        self._shells = shells
        self._spec = ToolSpec(
            name=KILL_SHELL_TOOL,
            description="Stop a background shell (and everything it started).",
            input_schema=_shell_id_schema("The shell_id to stop."),
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool as offered to the model."""
        return self._spec

    def parse(self, raw: dict[str, Any]) -> _ShellIdArgs:
        """Validate the input."""
        return validate_input(_ShellIdArgs, raw, KILL_SHELL_TOOL)

    def side_effecting(self, args: _ShellIdArgs) -> bool:
        """No: it only ends a process the session started."""
        return False

    def summary(self, args: _ShellIdArgs) -> str:
        """`kill_shell SHELL_ID`."""
        return f"{KILL_SHELL_TOOL} {args.shell_id}"

    async def run(self, args: _ShellIdArgs, ctx: ToolContext) -> ToolOutput:
        """Kill it; say how it ended."""
        shell = self._shells.get(args.shell_id)
        if shell is None:
            return _unknown(self._shells, args.shell_id)
        if not await self._shells.kill(args.shell_id):
            return ToolOutput(f"{_status_line(shell)} (it was no longer running)")
        return ToolOutput(_status_line(shell))


async def start_output(shells: BackgroundShells, command: str, *, sandboxed: bool) -> ToolOutput:
    """What `bash` answers for `run_in_background`: the new shell's id, or why it did not start."""
    try:
        shell = await shells.start(command, sandboxed=sandboxed)
    except (OSError, RuntimeError) as error:
        return ToolOutput(f"could not start the background shell: {error}", is_error=True)
    return ToolOutput(
        f"Started in the background with shell_id {shell.shell_id}. Read its output with "
        f'bash_output {{"shell_id": "{shell.shell_id}"}}; stop it with kill_shell.'
    )


def background_tools(shells: BackgroundShells | None, *, max_output_chars: int) -> Iterable[Any]:
    """The `bash_output` and `kill_shell` tools for a toolbox (none without background shells)."""
    if shells is None:
        return ()
    return (BashOutputTool(shells, max_output_chars=max_output_chars), KillShellTool(shells))
