"""`McpManager`: the MCP servers of one session, started once and shared by every toolbox."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

from tui_assist.core.tooling import Tool
from tui_assist.tools.mcp.config import McpServerConfig, McpServerStatus
from tui_assist.tools.mcp.server import McpServer
from tui_assist.tools.mcp.tool import McpTool


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
        pass_env: `[mcp] pass_env`: secret-looking variables a project's or a plugin's config may
            name in `${VAR}` (and its `headersHelper` gets).
        key_variables: The providers' configured key variables: a project's or a plugin's config
            never reads them unless `pass_env` lists them, and no server's env gets their values.
    """

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        cwd: Path | None = None,
        log_dir: Path | None = None,
        max_restarts: int = 1,
        max_output_chars: int = 30_000,
        pass_env: Iterable[str] = (),
        key_variables: frozenset[str] = frozenset(),
    ) -> None:
        self._new_server = functools.partial(
            McpServer,
            cwd=cwd,
            log_dir=log_dir,
            max_restarts=max_restarts,
            max_output_chars=max_output_chars,
            pass_env=frozenset(pass_env),
            key_variables=key_variables,
        )
        self._servers = {name: self._new_server(name, config) for name, config in servers.items()}
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

    async def add(self, servers: Mapping[str, McpServerConfig]) -> list[str]:
        """Add servers (those of a project trusted mid-session), started at once if `start` has run.

        Args:
            servers: Name -> config; a name already configured is skipped.

        Returns:
            The names added.
        """
        async with self._start_lock:
            added = [name for name in servers if name not in self._servers]
            for name in added:
                self._servers[name] = self._new_server(name, servers[name])
            if self._started:
                await asyncio.gather(*(self._servers[name].ensure_running() for name in added))
        return added

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
