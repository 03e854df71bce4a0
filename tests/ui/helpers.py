"""Shared helpers for the UI tests: apps on scripted providers, screen text, a fixed clock."""

from __future__ import annotations

import asyncio
import io
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from tui_assist.core.conversation import TextBlock, ToolUseBlock
from tui_assist.core.model import ModelRequest, ModelResponse, StreamSink, ToolSpec
from tui_assist.core.tooling import ToolContext, ToolInputError, ToolOutput
from tui_assist.providers.scripted import ScriptedProvider, ScriptStep
from tui_assist.session.config import Settings
from tui_assist.ui.app import TuiAssistApp


def screen_text(app: TuiAssistApp) -> str:
    """The visible screen as plain text (the same render `export_screenshot` uses)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False)
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    console.print(update)
    return console.export_text()


def settings(tmp_path: Path | None = None, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"provider": "scripted", "workdir": Path("/work/project")}
    if tmp_path is not None:
        values["workdir"] = tmp_path
    values.update(overrides)
    return Settings(**values)


def make_app(
    script: Sequence[ScriptStep] = (),
    *,
    provider: Any | None = None,
    toolbox_factory: Callable[[], Any] | None = None,
    **overrides: Any,
) -> TuiAssistApp:
    chosen = provider if provider is not None else ScriptedProvider(list(script))
    return TuiAssistApp(
        settings(**overrides),
        provider_factory=lambda: chosen,
        toolbox_factory=toolbox_factory or (lambda: FakeToolbox(Path("/work/project"))),
        use_store=False,
    )


@dataclass
class _Args:
    command: str


class FakeShellTool:
    """A side-effecting `bash` stand-in: echoes the command, touches nothing."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(
            "bash", "Run a shell command.", {"type": "object", "properties": {"command": {"type": "string"}}}
        )

    def parse(self, raw: dict[str, Any]) -> _Args:
        if not isinstance(raw.get("command"), str):
            raise ToolInputError("command must be a string")
        return _Args(raw["command"])

    def side_effecting(self, args: _Args) -> bool:
        return True

    def summary(self, args: _Args) -> str:
        return args.command

    async def run(self, args: _Args, ctx: ToolContext) -> ToolOutput:
        self.ran.append(args.command)
        return ToolOutput(f"ran: {args.command}")


@dataclass
class FakeToolbox:
    workdir: Path
    shell: FakeShellTool = field(default_factory=FakeShellTool)

    @property
    def tools(self) -> Sequence[Any]:
        return (self.shell,)

    async def aclose(self) -> None:
        return None


class BlockingProvider:
    """Streams some text, then waits on an event forever (or until released): a turn mid-flight."""

    name = "blocking"
    model = "blocking"

    def __init__(self, text: str = "Working on it") -> None:
        self.text = text
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        from tui_assist.core.conversation import Message, Usage

        sink.text(self.text)
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ModelResponse(Message.assistant(self.text), "end_turn", Usage(10, 5), self.model)

    async def aclose(self) -> None:
        return None


def tool_use(command: str, call_id: str = "toolu_1") -> list[Any]:
    return [TextBlock("Let me check."), ToolUseBlock(call_id, "bash", {"command": command})]


class FixedClock:
    """Deterministic `time.time` / `time.monotonic` for the core's event stamps."""

    def __init__(self, start: float = 1_000.0, step: float = 0.25) -> None:
        self._ticks: Iterator[float] = (start + i * step for i in itertools.count())

    def time(self) -> float:
        return next(self._ticks)

    monotonic = time
    perf_counter = time


async def wait_until(pilot: Any, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)
