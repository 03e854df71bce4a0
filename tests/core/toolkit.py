"""Small tools for core tests: the core only sees the Tool protocol, so these stand in for real ones."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from tui_assist.core.model import ToolSpec
from tui_assist.core.tooling import ToolContext, ToolInputError, ToolOutput


class _EchoArgs(BaseModel):
    text: str


class EchoTool:
    """Returns its input; not side-effecting."""

    spec = ToolSpec("echo", "Echo text back.", {"type": "object", "properties": {"text": {"type": "string"}}})

    def parse(self, raw: dict[str, Any]) -> _EchoArgs:
        try:
            return _EchoArgs.model_validate(raw)
        except ValidationError as exc:
            raise ToolInputError(str(exc.errors()[0]["msg"])) from exc

    def side_effecting(self, args: _EchoArgs) -> bool:
        return False

    def summary(self, args: _EchoArgs) -> str:
        return f"echo {args.text}"

    async def run(self, args: _EchoArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(f"echo: {args.text}")


class WriteTool(EchoTool):
    """Side-effecting: records what it 'wrote'."""

    spec = ToolSpec("write", "Write text.", {"type": "object", "properties": {"text": {"type": "string"}}})

    def __init__(self) -> None:
        self.written: list[str] = []

    def side_effecting(self, args: _EchoArgs) -> bool:
        return True

    async def run(self, args: _EchoArgs, ctx: ToolContext) -> ToolOutput:
        self.written.append(args.text)
        return ToolOutput(f"wrote {args.text}")


class BlockTool(EchoTool):
    """Blocks until cancelled: for cancellation tests."""

    spec = ToolSpec("block", "Block.", {"type": "object", "properties": {"text": {"type": "string"}}})

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def run(self, args: _EchoArgs, ctx: ToolContext) -> ToolOutput:
        self.started.set()
        await asyncio.sleep(3600)
        return ToolOutput("never")


class _AgentArgs(BaseModel):
    description: str
    prompt: str


class SubagentTool:
    """The `agent` tool's contract: delegate to ctx.run_subagent."""

    spec = ToolSpec("agent", "Run a sub-agent.", {"type": "object"})

    def parse(self, raw: dict[str, Any]) -> _AgentArgs:
        try:
            return _AgentArgs.model_validate(raw)
        except ValidationError as exc:
            raise ToolInputError(str(exc)) from exc

    def side_effecting(self, args: _AgentArgs) -> bool:
        return False

    def summary(self, args: _AgentArgs) -> str:
        return args.description

    async def run(self, args: _AgentArgs, ctx: ToolContext) -> ToolOutput:
        try:
            return ToolOutput(await ctx.run_subagent(args.description, args.prompt))
        except RuntimeError as exc:
            return ToolOutput(str(exc), is_error=True)


@dataclass
class Box:
    """A toolbox over fixed tool instances; counts how many were made and closed."""

    tools: list[Any]
    workdir: Path = Path(".")
    closed: int = 0

    async def aclose(self) -> None:
        self.closed += 1


@dataclass
class BoxFactory:
    tools: list[Any] = field(default_factory=lambda: [EchoTool(), WriteTool(), SubagentTool()])
    made: list[Box] = field(default_factory=list)

    def __call__(self) -> Box:
        box = Box(self.tools)
        self.made.append(box)
        return box
