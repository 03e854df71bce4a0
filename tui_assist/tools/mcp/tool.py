"""`McpTool`: one MCP server tool as a `Tool`, a thin handle on its server's connection."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from tui_assist.core.model import ToolSpec
from tui_assist.core.text import clip
from tui_assist.core.tooling import ToolContext, ToolInputError, ToolOutput

if TYPE_CHECKING:
    from tui_assist.tools.mcp.server import McpServer


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """A tool as its server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]


class McpTool:
    """One MCP server tool as a `Tool`. It holds no resources: the manager owns the connection."""

    def __init__(self, server: McpServer, remote: RemoteTool, qualified: str) -> None:
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
        text = clip(json.dumps(args, ensure_ascii=False, sort_keys=True), 400, fold=False)
        return f"MCP {self._server.name}: {self._remote.name} {text}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Call the tool on its server; every failure is an error output, never an exception."""
        return await self._server.call(self._remote.name, args)
