"""Tools from MCP servers, through the official `mcp` SDK's client.

Servers are declared in config.toml in the `mcpServers` shape other tools use (`command`/`args`/
`env` for a stdio server, `url` for streamable HTTP), plus `trusted` and `timeout`:

```toml
[mcpServers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
trusted = true          # its calls skip the approval prompt
timeout = 30            # seconds per tool call

[mcpServers.search]
url = "http://localhost:9000/mcp"
headers = { Authorization = "Bearer ..." }
```

Design:

- **One `McpManager` per session.** It owns every server connection; toolboxes come and go per
  turn and per refine round, so the tools they hold are thin handles on the manager's servers and
  have no `aclose()` of their own (a round's `Toolset.aclose()` must not stop a shared server).
- **Lazy start, explicit and once.** Nothing is spawned when the manager is built. The model must
  see a server's tools before it can call them, and `Toolbox.tools` is synchronous, so the host
  awaits `manager.start()` once before the first turn that needs tools (it is idempotent and
  cheap afterwards). Servers start concurrently, each bounded by its `startup_timeout`; a server
  that cannot start is marked `failed` with a one-line reason and offers no tools. `start()`
  never raises.
- **Each connection lives in a task of its own.** The SDK's client is an anyio context manager
  that must be entered and left in the same task, while calls come from whichever task runs the
  turn; so a supervisor task holds `async with Client(...)` open and tools call through it.
- **Crashes.** A wrapper on the transport's read stream notices when the server goes away
  (stdout closed, process dead). The call in flight gets an error result; the server is restarted
  once, on its next use (`max_restarts`). After that its tools stay offered but every call
  returns "unavailable" with the reason, so the model can carry on without it.
- **Timeouts.** Each call is bounded by the server's `timeout`; a timed-out call becomes an error
  result and the server stays up.
- **Names and approval.** Tools are offered as `server__tool`, sanitized to the names every API
  accepts (`^[a-zA-Z0-9_-]{1,64}$`). They are side-effecting, so they pass the approval policy
  (rules use the qualified name), unless the server is `trusted`; tool annotations such as
  `readOnlyHint` come from the server and are not trusted.

Importing this module does not import the `mcp` SDK (it costs most of a second); the first
`start()` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import shlex
import tempfile
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Literal, TextIO, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tui_assist.core.model import ToolSpec
from tui_assist.core.text import clip, exc_text, one_line, truncate_middle
from tui_assist.core.tooling import Tool, ToolContext, ToolInputError, ToolOutput

if TYPE_CHECKING:
    from types import TracebackType

    import mcp_types
    from mcp import Client
    from mcp.client._transport import Transport, TransportStreams
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.message import SessionMessage

__all__ = [
    "McpManager",
    "McpServerConfig",
    "McpServerStatus",
    "McpTool",
    "ServerState",
    "format_status",
    "qualified_name",
]

ServerState = Literal["idle", "starting", "ready", "crashed", "failed", "disabled", "stopped"]
"""`idle`: not started yet; `crashed`: died, restarts on next use; `failed`: cannot be used."""

NAME_SEPARATOR: Final = "__"
MAX_NAME_LENGTH: Final = 64
"""The shortest tool-name limit among the APIs (OpenAI's function names)."""

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_MAX_TOOL_PAGES: Final = 50


class McpServerConfig(BaseModel):
    """One entry of `mcpServers`: a stdio command or a streamable-HTTP URL."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = None
    """The executable of a stdio server."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """Added to a minimal inherited environment (HOME, PATH, SHELL, TERM, USER, LOGNAME)."""
    cwd: Path | None = None
    """Where a stdio server starts; None: the session's workdir."""
    url: str | None = None
    """The endpoint of a streamable-HTTP server."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every HTTP request (e.g. `Authorization`)."""
    type: Literal["stdio", "http", "streamable-http", "streamableHttp"] | None = None
    """Optional, as other clients write it; must agree with `command` / `url`."""
    trusted: bool = False
    """Trusted servers' tools run without approval."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds one tool call may take."""
    startup_timeout: float = Field(default=30.0, gt=0)
    """Seconds to spawn or connect, handshake and list tools."""
    disabled: bool = False

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("set exactly one of `command` (stdio) or `url` (streamable HTTP)")
        if self.type == "stdio" and self.command is None:
            raise ValueError("type = 'stdio' needs `command`")
        if self.type not in (None, "stdio") and self.url is None:
            raise ValueError(f"type = {self.type!r} needs `url`")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """How the server is reached."""
        return "stdio" if self.command is not None else "http"

    @property
    def target(self) -> str:
        """The command line or URL, for status lines."""
        if self.command is not None:
            return shlex.join([self.command, *self.args])
        return self.url or ""


@dataclass(frozen=True, slots=True)
class McpServerStatus:
    """A server's state, for the palette and logs."""

    name: str
    state: ServerState
    transport: Literal["stdio", "http"]
    target: str
    trusted: bool
    tools: tuple[str, ...]
    """Qualified tool names, as the model sees them."""
    error: str | None
    restarts: int

    @property
    def summary(self) -> str:
        """One line: name, state, tool count, and the reason when it is not usable."""
        trust = ", trusted" if self.trusted else ""
        text = f"{self.name}: {self.state} ({self.transport}{trust}), {len(self.tools)} tools"
        return f"{text}: {self.error}" if self.error else text


def format_status(statuses: Iterable[McpServerStatus]) -> list[str]:
    """Readable lines for a palette or `--verbose` output: a header per server, then its tools.

    Args:
        statuses: From `McpManager.status()`.

    Returns:
        The lines; `["no MCP servers configured"]` when there are none.
    """
    lines: list[str] = []
    for status in statuses:
        lines.append(status.summary)
        lines.append(f"  {status.target}")
        lines.extend(f"  - {tool}" for tool in status.tools)
    return lines or ["no MCP servers configured"]


def qualified_name(server: str, tool: str, taken: Iterable[str] = ()) -> str:
    """The name a server's tool is offered under: `server__tool`, valid for every API.

    Characters outside `[a-zA-Z0-9_-]` become `_`; a name longer than 64 characters, or one that
    collides with a name in `taken`, is shortened and given a short hash of the original.

    Args:
        server: The server's name in the config.
        tool: The tool's name on the server.
        taken: Names already given out.

    Returns:
        The qualified name.
    """
    original = f"{server}{NAME_SEPARATOR}{tool}"
    name = _UNSAFE.sub("_", original)
    if len(name) > MAX_NAME_LENGTH or name in set(taken):
        digest = hashlib.sha1(original.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME_LENGTH - 9]}_{digest}"
    return name


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True, slots=True)
class _RemoteTool:
    name: str
    description: str
    input_schema: dict[str, Any]


class McpTool:
    """One MCP server tool as a `Tool`. It holds no resources: the manager owns the connection."""

    def __init__(self, server: _Server, remote: _RemoteTool, qualified: str) -> None:
        self._server = server
        self._remote = remote
        schema = dict(remote.input_schema) if remote.input_schema else {}
        schema.setdefault("type", "object")
        if schema.get("type") == "object":
            schema.setdefault("properties", {})
        description = remote.description.strip() or f"The {remote.name!r} tool."
        self._spec = ToolSpec(
            name=qualified,
            description=f"{description}\n\n(MCP server {server.name!r}, tool {remote.name!r}.)",
            input_schema=schema,
        )

    @property
    def spec(self) -> ToolSpec:
        """The qualified name, the server's description and its input schema."""
        return self._spec

    @property
    def server(self) -> str:
        """The name of the server the tool lives on."""
        return self._server.name

    @property
    def remote_name(self) -> str:
        """The tool's own name on its server."""
        return self._remote.name

    def parse(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Check the input is an object with the schema's required fields (the server validates the rest).

        Args:
            raw: The tool input the model sent.

        Returns:
            The input, unchanged.

        Raises:
            ToolInputError: when it is not an object or lacks a required field.
        """
        if not isinstance(raw, dict):  # pyright: ignore[reportUnnecessaryIsInstance]  # untrusted
            raise ToolInputError(f"invalid input for {self._spec.name}: expected a JSON object")
        required: object = self._spec.input_schema.get("required", [])
        if isinstance(required, list):
            missing = [str(k) for k in cast(list[object], required) if str(k) not in raw]
            if missing:
                raise ToolInputError(f"invalid input for {self._spec.name}: missing {', '.join(missing)}")
        return raw

    def side_effecting(self, args: dict[str, Any]) -> bool:
        """Every call needs approval unless the server is trusted."""
        return not self._server.config.trusted

    def summary(self, args: dict[str, Any]) -> str:
        """`server: tool {json input}`, for the approval prompt."""
        text = json.dumps(args, ensure_ascii=False, sort_keys=True)
        if len(text) > 400:
            text = text[:399] + "…"
        return f"MCP {self._server.name}: {self._remote.name} {text}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Call the tool on its server; every failure is an error output, never an exception."""
        return await self._server.call(self._remote.name, args)


# --------------------------------------------------------------------------- manager


class McpManager:
    """The MCP servers of one session: started once, shared by every toolbox.

    Use as an async context manager, or call `aclose()` when the session ends.

    Args:
        servers: Name -> config (`Settings.mcp_servers`).
        cwd: Where stdio servers start unless their config says otherwise (the workdir).
        log_dir: Where each stdio server's stderr goes (`mcp-NAME.log`); None: a temporary file.
            Its last line explains a failed start.
        max_restarts: How many times a server that died is started again.
        max_output_chars: Longer tool output is truncated with a marker.
    """

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        cwd: Path | None = None,
        log_dir: Path | None = None,
        max_restarts: int = 1,
        max_output_chars: int = 30_000,
    ) -> None:
        self._servers = {
            name: _Server(
                name,
                config,
                cwd=cwd,
                log_dir=log_dir,
                max_restarts=max_restarts,
                max_output_chars=max_output_chars,
            )
            for name, config in servers.items()
        }
        self._started = False
        self._start_lock = asyncio.Lock()

    @property
    def names(self) -> list[str]:
        """The configured servers, in config order."""
        return list(self._servers)

    async def start(self) -> None:
        """Start every enabled server that has not been started, concurrently. Never raises.

        Idempotent: a call made while another is under way waits for it, and afterwards only
        servers that are still `idle` are started.
        """
        async with self._start_lock:
            self._started = True
            idle = [s for s in self._servers.values() if s.state == "idle"]
            await asyncio.gather(*(s.ensure_running() for s in idle))

    @property
    def started(self) -> bool:
        """Whether `start()` has run."""
        return self._started

    @property
    def tools(self) -> list[Tool]:
        """The tools of every server whose tool list is known, in config order."""
        return self.current_tools()

    def current_tools(self) -> list[Tool]:
        """The same as `tools`, as a callable for `toolbox_factory(extra_tools=...)`."""
        return list[Tool](self._mcp_tools())

    def status(self) -> list[McpServerStatus]:
        """Every server's state, tools and last error, in config order."""
        names: dict[str, list[str]] = {}
        for tool in self._mcp_tools():
            names.setdefault(tool.server, []).append(tool.spec.name)
        return [s.status(tuple(names.get(s.name, ()))) for s in self._servers.values()]

    def _mcp_tools(self) -> list[McpTool]:
        tools: list[McpTool] = []
        taken: set[str] = set()
        for server in self._servers.values():
            for tool in server.make_tools(taken):
                taken.add(tool.spec.name)
                tools.append(tool)
        return tools

    async def restart(self, name: str) -> McpServerStatus:
        """Stop a server and start it again (a user's explicit request: no restart budget applies).

        Args:
            name: The server's name in the config.

        Returns:
            Its status afterwards.

        Raises:
            KeyError: when no server has that name.
        """
        await self._servers[name].restart()
        return next(s for s in self.status() if s.name == name)

    async def aclose(self) -> None:
        """Stop every server (stdio processes get their stdin closed, then are killed)."""
        await asyncio.gather(*(s.stop() for s in self._servers.values()), return_exceptions=True)

    async def __aenter__(self) -> McpManager:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _Server:
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
    ) -> None:
        self.name = name
        self.config = config
        self.state: ServerState = "disabled" if config.disabled else "idle"
        self.error: str | None = None
        self.restarts = 0
        self._cwd = config.cwd or cwd
        self._log_dir = log_dir
        self._max_restarts = max_restarts
        self._max_output_chars = max_output_chars
        self._remote: list[_RemoteTool] | None = None
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._stopping = False
        self._lost = False
        self._lock = asyncio.Lock()
        self._errlog: IO[str] | None = None

    # -- what the manager and tools use

    def make_tools(self, taken: set[str]) -> list[McpTool]:
        if self._remote is None:
            return []
        out: list[McpTool] = []
        for remote in self._remote:
            name = qualified_name(self.name, remote.name, taken | {t.spec.name for t in out})
            out.append(McpTool(self, remote, name))
        return out

    def status(self, tools: tuple[str, ...]) -> McpServerStatus:
        return McpServerStatus(
            name=self.name,
            state=self.state,
            transport=self.config.transport,
            target=self.config.target,
            trusted=self.config.trusted,
            tools=tools,
            error=self.error,
            restarts=self.restarts,
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
        return _to_output(result, self._max_output_chars)

    async def restart(self) -> None:
        async with self._lock:
            if self.state in ("disabled", "stopped"):
                return
            await self._disconnect()
            await self._connect()

    async def stop(self) -> None:
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
            self.error = why + _tail(self._errlog)

    def _on_connection_lost(self, wake: asyncio.Event) -> None:
        if wake is self._wake:  # not a late signal from a connection already replaced
            self._lost = True
        wake.set()

    async def _connect(self) -> None:
        """Start the supervisor task and wait until it is ready or fails (lock held)."""
        self.state = "starting"
        self.error = None
        self._lost = False
        self._stopping = False
        self._wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[tuple[Client, list[_RemoteTool]]] = loop.create_future()
        self._task = asyncio.create_task(self._supervise(ready, self._wake), name=f"mcp:{self.name}")
        try:
            async with asyncio.timeout(self.config.startup_timeout):
                client, remote = await asyncio.shield(ready)
        except TimeoutError:
            await self._abort()
            self.state = "failed"
            self.error = f"did not start within {self.config.startup_timeout:g} s" + _tail(self._errlog)
            return
        except Exception as exc:
            await self._abort()
            self.state = "failed"
            self.error = one_line(f"could not start: {_startup_error(exc)}" + _tail(self._errlog))
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
        self, ready: asyncio.Future[tuple[Client, list[_RemoteTool]]], wake: asyncio.Event
    ) -> None:
        """Hold the connection open (in this one task) until told to stop or the server dies."""
        from mcp import Client
        from mcp_types import Implementation

        from tui_assist import __version__

        try:
            async with AsyncExitStack() as stack:
                transport = _watched(await self._transport(stack), lambda: self._on_connection_lost(wake))
                client = Client(
                    transport,
                    read_timeout_seconds=self.config.startup_timeout,
                    client_info=Implementation(name="tui-assist", version=__version__),
                )
                await stack.enter_async_context(client)
                remote = await _list_tools(client)
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
        from mcp.client.streamable_http import streamable_http_client

        config = self.config
        if config.command is not None:
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env) or None, cwd=self._cwd
            )
            return stdio_client(params, errlog=cast(TextIO, self._open_errlog()))
        import httpx2

        http = httpx2.AsyncClient(headers=dict(config.headers), timeout=httpx2.Timeout(30.0, read=300.0))
        await stack.enter_async_context(http)
        assert config.url is not None
        return streamable_http_client(config.url, http_client=http)

    def _open_errlog(self) -> IO[str]:
        if self._errlog is None:
            if self._log_dir is not None:
                self._log_dir.mkdir(parents=True, exist_ok=True)
                safe = _UNSAFE.sub("_", self.name)
                self._errlog = (self._log_dir / f"mcp-{safe}.log").open("a+", encoding="utf-8")
            else:
                self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8")
        return self._errlog


# --------------------------------------------------------------------------- SDK glue


async def _list_tools(client: Client) -> list[_RemoteTool]:
    out: list[_RemoteTool] = []
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        out.extend(_RemoteTool(t.name, t.description or "", dict(t.input_schema)) for t in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return out


@asynccontextmanager
async def _watched(inner: Transport, on_lost: Callable[[], None]) -> AsyncGenerator[TransportStreams]:
    """The transport, with a read stream that reports when the server goes away."""
    async with inner as (read, write):
        yield _WatchedReadStream(read, on_lost), write


class _WatchedReadStream:
    """Forwards a transport's read stream; calls `on_lost` once it ends."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], on_lost: Callable[[], None]) -> None:
        self._inner = inner
        self._on_lost = on_lost

    async def receive(self) -> SessionMessage | Exception:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_lost()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        import anyio

        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_lost()
            raise

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


def _to_output(result: mcp_types.CallToolResult, max_chars: int) -> ToolOutput:
    from mcp_types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent

    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent | AudioContent):
            kind = "image" if isinstance(block, ImageContent) else "audio"
            parts.append(f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes, not shown]")
        elif isinstance(block, ResourceLink):
            parts.append(f"[resource {block.uri}: {block.name}]")
        elif isinstance(block, EmbeddedResource):  # pyright: ignore[reportUnnecessaryIsInstance]
            resource = block.resource
            text: object = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[binary resource {resource.uri}, not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    content = "\n".join(parts)
    if result.is_error and not content:
        content = "the tool reported an error without a message"
    return ToolOutput(truncate_middle(content, max_chars), is_error=result.is_error)


def _startup_error(error: BaseException) -> str:
    """Why a start failed, in a user's words (unwrapping anyio's exception groups)."""
    from mcp.shared.exceptions import MCPError

    exc: BaseException = error
    while (inner := _first_in_group(exc)) is not None:
        exc = inner
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, MCPError) and exc.message == "Connection closed":
        return "the server exited before the MCP handshake"
    return exc_text(exc)


def _first_in_group(exc: BaseException) -> BaseException | None:
    if isinstance(exc, BaseExceptionGroup):
        group = cast(BaseExceptionGroup[BaseException], exc)
        return group.exceptions[0] if group.exceptions else None
    return None


def _tail(errlog: IO[str] | None) -> str:
    """The last line the server wrote to stderr, as `` (stderr: …)``, or nothing."""
    if errlog is None:
        return ""
    try:
        errlog.flush()
        end = errlog.seek(0, 2)
        errlog.seek(max(0, end - 4096))
        lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
        errlog.seek(0, 2)
    except (OSError, ValueError):
        return ""
    return f" (stderr: {clip(lines[-1], 160)})" if lines else ""
