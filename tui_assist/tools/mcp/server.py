"""One configured MCP server: its connection task, state, restarts and calls.

The SDK's client must be entered and left in one task, so a supervisor task holds the connection
open and calls go through it; a crash is noticed on the transport's read stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tempfile
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

from tui_assist.core.text import exc_text, one_line
from tui_assist.core.tooling import ToolOutput
from tui_assist.tools.environment import without_secrets
from tui_assist.tools.mcp.config import (
    UNSAFE_NAME_CHARS,
    McpServerConfig,
    McpServerStatus,
    McpStartError,
    ServerState,
    UnsetVariable,
    expand_env,
    qualified_name,
    variable_allowed,
)
from tui_assist.tools.mcp.sdk import list_tools, startup_error, stderr_tail, to_output, watched
from tui_assist.tools.mcp.tool import McpTool, RemoteTool

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client._transport import Transport


class McpServer:
    """One configured server: its connection task, state and tool list."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        cwd: Path | None,
        log_dir: Path | None,
        max_restarts: int,
        max_output_chars: int,
        pass_env: frozenset[str] = frozenset(),
        key_variables: frozenset[str] = frozenset(),
    ) -> None:
        self.name = name
        self._key_variables = key_variables
        """The providers' key variables: a non-user config never reads them, no env gets their values."""
        self.config = config
        self.state: ServerState = "disabled" if config.disabled else "idle"
        self.error: str | None = None
        self.restarts = 0
        self._workdir = cwd
        self._pass_env = pass_env
        """`[mcp] pass_env`: secret-looking variables a project's or plugin's config may read."""
        self._log_dir = log_dir
        self._max_restarts = max_restarts
        self._max_output_chars = max_output_chars
        self._remote: list[RemoteTool] | None = None
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._stopping = False
        self._lost = False
        self._lock = asyncio.Lock()
        self._errlog: IO[str] | None = None
        self._http_refusal: str | None = None
        """The last HTTP error status the server answered with (`401 Unauthorized`)."""

    # -- what the manager and tools use

    def make_tools(self, taken: set[str]) -> list[McpTool]:
        """Handles on the server's listed tools, named apart from the names in `taken`."""
        if self._remote is None:
            return []
        out: list[McpTool] = []
        for remote in self._remote:
            name = qualified_name(self.name, remote.name, taken | {t.spec.name for t in out})
            out.append(McpTool(self, remote, name))
        return out

    def status(self, tools: tuple[str, ...]) -> McpServerStatus:
        """The server's state, with its qualified tool names."""
        return McpServerStatus(
            name=self.name,
            state=self.state,
            transport=self.config.transport,
            target=self.config.target,
            trusted=self.config.trusted,
            tools=tools,
            error=self.error,
            restarts=self.restarts,
            origin=self.config.origin,
        )

    async def ensure_running(self) -> str | None:
        """Start or restart the server as needed.

        Returns:
            None when it is ready, else why it cannot be used.
        """
        async with self._lock:
            if self.state == "ready" and self._lost:
                self._mark_crashed("the server stopped")
            if self.state == "ready":
                return None
            if self.state == "disabled":
                return "it is disabled in the config"
            if self.state == "stopped":
                return "the session is closing"
            if self.state == "crashed":
                if self.restarts >= self._max_restarts:
                    self.state = "failed"
                    self.error = f"{self.error or 'it stopped'}; not restarted again"
                    return self.error
                self.restarts += 1
                await self._disconnect()
                await self._connect()
            elif self.state == "idle":
                await self._connect()
            return self._unavailable_reason()

    def _unavailable_reason(self) -> str | None:
        return None if self.state == "ready" else self.error or self.state

    async def call(self, tool: str, args: dict[str, Any]) -> ToolOutput:
        """Call a tool (starting the server if need be); every failure is an error output."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        reason = await self.ensure_running()
        client = self._client
        if reason is not None or client is None:
            return ToolOutput(f"MCP server {self.name!r} is unavailable: {reason}", is_error=True)
        timeout = self.config.timeout
        try:
            # The SDK's own timeout cancels the request on the server; ours is a backstop.
            async with asyncio.timeout(timeout + 5):
                result = await client.call_tool(tool, args, read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                return self._timed_out(tool)
            if exc.code == CONNECTION_CLOSED:
                return self._died_during(tool)
            return ToolOutput(
                one_line(f"MCP error from {self.name!r} ({tool}): {exc.message}"), is_error=True
            )
        except TimeoutError:
            return self._timed_out(tool)
        except Exception as exc:  # a broken server must never take the turn down
            if self._lost:
                return self._died_during(tool)
            return ToolOutput(
                one_line(f"MCP call {tool} on {self.name!r} failed: {exc_text(exc)}"), is_error=True
            )
        return to_output(result, self._max_output_chars)

    async def restart(self) -> None:
        """Stop the server and start it again (unless it is disabled or the session is closing)."""
        async with self._lock:
            if self.state in ("disabled", "stopped"):
                return
            await self._disconnect()
            await self._connect()

    async def stop(self) -> None:
        """Stop the server for good (the session is closing)."""
        async with self._lock:
            await self._disconnect()
            if self.state != "disabled":
                self.state = "stopped"
            if self._errlog is not None:
                self._errlog.close()
                self._errlog = None

    # -- internals

    def _timed_out(self, tool: str) -> ToolOutput:
        return ToolOutput(
            f"MCP tool {tool} on {self.name!r} timed out after {self.config.timeout:g} s "
            "(the server is still running; try a smaller request)",
            is_error=True,
        )

    def _died_during(self, tool: str) -> ToolOutput:
        self._mark_crashed(f"the server stopped during a call to {tool}")
        then = (
            "it will be restarted for the next call"
            if self.restarts < self._max_restarts
            else "it will not be restarted again, so its tools are unavailable"
        )
        return ToolOutput(
            f"MCP server {self.name!r} stopped during the call to {tool} (connection closed); {then}.",
            is_error=True,
        )

    def _mark_crashed(self, why: str) -> None:
        if self.state == "ready":
            self.state = "crashed"
            self.error = why + stderr_tail(self._errlog)

    def _on_connection_lost(self, wake: asyncio.Event) -> None:
        if wake is self._wake:  # not a late signal from a connection already replaced
            self._lost = True
        wake.set()

    async def _connect(self) -> None:
        """Start the supervisor task and wait until it is ready or fails (lock held)."""
        self.state = "starting"
        self.error = None
        self._http_refusal = None
        self._lost = False
        self._stopping = False
        self._wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[tuple[Client, list[RemoteTool]]] = loop.create_future()
        self._task = asyncio.create_task(self._supervise(ready, self._wake), name=f"mcp:{self.name}")
        try:
            async with asyncio.timeout(self.config.startup_timeout):
                client, remote = await asyncio.shield(ready)
        except TimeoutError:
            await self._abort()
            self.state = "failed"
            self.error = f"did not start within {self.config.startup_timeout:g} s" + stderr_tail(self._errlog)
            return
        except Exception as exc:
            await self._abort()
            self.state = "failed"
            why = startup_error(exc, http_refusal=self._http_refusal)
            self.error = one_line(f"could not start: {why}" + stderr_tail(self._errlog))
            return
        except asyncio.CancelledError:
            # The turn was cancelled while this server started: stop it, and start afresh on
            # the next use instead of staying "starting" for ever.
            await asyncio.shield(self._abort())
            self.state = "idle"
            raise
        self._client = client
        self._remote = remote
        self.state = "ready"

    async def _abort(self) -> None:
        """Cancel a supervisor that never got ready (the SDK still reaps a spawned process)."""
        task, self._task = self._task, None
        self._client = None
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def _disconnect(self) -> None:
        """Stop the supervisor task, if any, and wait for the connection to close."""
        task, self._task = self._task, None
        self._client = None
        if task is None:
            return
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        if not task.done():
            try:
                # stdio shutdown closes stdin, waits 2 s, then kills: bounded by the SDK.
                await asyncio.wait_for(asyncio.shield(task), timeout=10)
            except TimeoutError:
                task.cancel()
        with contextlib.suppress(BaseException):
            await task

    async def _supervise(
        self, ready: asyncio.Future[tuple[Client, list[RemoteTool]]], wake: asyncio.Event
    ) -> None:
        """Hold the connection open (in this one task) until told to stop or the server dies."""
        from mcp import Client
        from mcp_types import Implementation

        from tui_assist import __version__

        try:
            async with AsyncExitStack() as stack:
                transport = watched(await self._transport(stack), lambda: self._on_connection_lost(wake))
                client = Client(
                    transport,
                    read_timeout_seconds=self.config.startup_timeout,
                    client_info=Implementation(name="tui-assist", version=__version__),
                )
                await stack.enter_async_context(client)
                remote = await list_tools(client)
                if not ready.done():
                    ready.set_result((client, remote))
                await wake.wait()
                if self._lost and not self._stopping:
                    self._mark_crashed("the server stopped")
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not self._stopping:
                self._mark_crashed(one_line(f"the connection failed: {exc_text(exc)}"))
        finally:
            if not ready.done():
                ready.cancel()

    async def _transport(self, stack: AsyncExitStack) -> Transport:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        config = self.config
        environ = self._expansion_environ()
        if config.command is not None:
            env = {key: _expanded(value, f"its env {key}", environ) for key, value in config.env.items()}
            # The variables are the server's by name; only a provider's key (a copy) stays out.
            env = without_secrets(env, key_variables=self._key_variables, by_name=False)
            params = StdioServerParameters(
                command=_expanded(config.command, "its command", environ),
                args=[_expanded(arg, "its args", environ) for arg in config.args],
                env=env or None,
                cwd=self._start_folder(environ),
            )
            return stdio_client(params, errlog=cast(TextIO, self._open_errlog()))
        url, headers = await self._http_target(environ)
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(url, headers=headers, timeout=30.0, sse_read_timeout=300.0)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async def note_refusal(response: httpx2.Response) -> None:
            # The SDK turns an HTTP error answer into a bare "error response": keep its status.
            if response.status_code >= 400:
                self._http_refusal = f"{response.status_code} {response.reason_phrase}".strip()

        http = httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(30.0, read=300.0),
            event_hooks={"response": [note_refusal]},
        )
        await stack.enter_async_context(http)
        return streamable_http_client(url, http_client=http)

    def _expansion_environ(self) -> dict[str, str]:
        """The variables `${VAR}` reads: all for the user's own config, the allowed ones otherwise."""
        provided = {"CLAUDE_PROJECT_DIR": str(self._workdir)} if self._workdir is not None else {}
        if self.config.expands_any_variable:
            return {**os.environ, **provided}
        allowed = {
            k: v for k, v in os.environ.items() if variable_allowed(k, self._pass_env, self._key_variables)
        }
        return {**allowed, **provided}

    def _start_folder(self, environ: Mapping[str, str]) -> Path | None:
        """Where the server starts: its `cwd` (relative to the workdir), else the workdir."""
        if self.config.cwd is None:
            return self._workdir
        folder = Path(_expanded(str(self.config.cwd), "its cwd", environ)).expanduser()
        return folder if folder.is_absolute() or self._workdir is None else self._workdir / folder

    async def _http_target(self, environ: Mapping[str, str]) -> tuple[str, dict[str, str]]:
        """The URL and headers with `${VAR}` expanded, now: the values never enter the config."""
        assert self.config.url is not None
        url = _expanded(self.config.url, "its url", environ)
        headers = {
            key: _expanded(value, f"its header {key}", environ) for key, value in self.config.headers.items()
        }
        if self.config.headers_helper is not None:
            headers |= await self._helper_headers(environ)
        return url, headers

    async def _helper_headers(self, environ: Mapping[str, str]) -> dict[str, str]:
        """Run `headersHelper` (as a hook runs: `sh -c`, secrets filtered) and read its JSON headers."""
        from tui_assist.tools.shell import shell_env

        command = self.config.headers_helper
        assert command is not None
        folder = self._start_folder(environ) or Path.cwd()
        process = await asyncio.create_subprocess_exec(
            "sh", "-c", command,
            cwd=folder, env=shell_env(folder, self._pass_env), start_new_session=True,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            async with asyncio.timeout(self.config.startup_timeout):
                out, err = await process.communicate()
        except (TimeoutError, asyncio.CancelledError):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            raise McpStartError(
                f"its headersHelper did not finish within {self.config.startup_timeout:g} s"
            ) from None
        if process.returncode != 0:
            why = one_line(err.decode(errors="replace")) or f"exit status {process.returncode}"
            raise McpStartError(f"its headersHelper failed: {why}")
        try:
            data: object = json.loads(out)
        except (json.JSONDecodeError, UnicodeDecodeError):
            data = None
        if not isinstance(data, dict) or not all(
            isinstance(v, str) for v in cast(dict[str, object], data).values()
        ):
            raise McpStartError("its headersHelper must print a JSON object of header names to strings")
        return cast(dict[str, str], data)

    def _open_errlog(self) -> IO[str]:
        if self._errlog is None:
            if self._log_dir is not None:
                self._log_dir.mkdir(parents=True, exist_ok=True)
                safe = UNSAFE_NAME_CHARS.sub("_", self.name)
                self._errlog = (self._log_dir / f"mcp-{safe}.log").open("a+", encoding="utf-8")
            else:
                self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8")
        return self._errlog


def _expanded(value: str, what: str, environ: Mapping[str, str]) -> str:
    """`value` with `${VAR}` expanded; an unset one fails the start, naming `what` refers to it."""
    try:
        return expand_env(value, environ)
    except UnsetVariable as exc:
        message = f"{what} names ${{{exc.name}}}, which is not set (set it, or change the config)"
        if exc.name in os.environ:
            message = (
                f"{what} names ${{{exc.name}}}, which this config may not read "
                f'(allow it with `[mcp] pass_env = ["{exc.name}"]` in config.toml)'
            )
        raise UnsetVariable(message, exc.name) from None
