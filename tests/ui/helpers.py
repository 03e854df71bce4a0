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

from tests.wait import TIMEOUT
from tests.wait import wait_until as wait_for
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


PILOT_POLL = 0.02
"""Seconds between two looks at a pilot's app (each look also draws the screen's pending frame)."""


async def wait_until(pilot: Any, predicate: Callable[[], object], timeout: float = TIMEOUT) -> None:
    """`tests.wait.wait_until` for a pilot's app: the screen processes its messages between looks."""
    await wait_for(predicate, timeout, between=lambda: pilot.pause(PILOT_POLL))


def _nothing_to_draw(app: Any) -> bool:
    """No streamed text waits for its flush and no widget for its repaint or layout."""
    from tui_assist.ui.widgets import stream_gc

    screen = app.screen
    flushing = any(w.flush_queued for w in stream_gc.streaming_widgets)
    return not flushing and not screen._dirty_widgets and not screen._layout_required


async def settled(pilot: Any, timeout: float = TIMEOUT) -> None:
    """Wait until the screen has settled: nothing left to draw, the same picture two frames running
    (what a snapshot or a look at the screen wants, rather than a fixed pause)."""
    app = pilot.app
    shown: list[str] = []

    async def same_twice() -> bool:
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()  # Textual's wait for an idle app; it draws the screen's pending frame
        shown.append(screen_text(app) if _nothing_to_draw(app) else "")
        return len(shown) > 1 and shown[-1] != "" and shown[-1] == shown[-2]

    deadline = asyncio.get_running_loop().time() + timeout
    while not await same_twice():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"the screen did not settle in {timeout} s")


def palette_searched(app: Any, query: str) -> bool:
    """The command palette is open, holding `query`, its search for it done, with results."""
    from textual.command import CommandList, CommandPalette
    from textual.widgets import Input
    from textual.worker import WorkerState

    palette = app.screen
    if not isinstance(palette, CommandPalette) or palette.query_one(Input).value != query:
        return False
    searching = any(
        w.group == palette._GATHER_COMMANDS_GROUP and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
        for w in app.workers
    )
    return not searching and palette.query_one(CommandList).option_count > 0


class CannedShellTool(FakeShellTool):
    """A `bash` stand-in that answers each command with a fixed output (deterministic reviews)."""

    def __init__(self, outputs: dict[str, str], errors: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.outputs = outputs
        self.errors = errors

    async def run(self, args: _Args, ctx: ToolContext) -> ToolOutput:
        self.ran.append(args.command)
        return ToolOutput(self.outputs.get(args.command, ""), is_error=args.command in self.errors)


FAILING_RUN = """\
F...
======================================================================
FAIL: test_mean (test_stats.StatsTest.test_mean)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/work/project/test_stats.py", line 8, in test_mean
    self.assertEqual(mean([1, 2, 3, 4]), 2.5)
AssertionError: 3.3333333333333335 != 2.5

----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=1)"""

REVIEW_OUTPUTS = {
    "python3 -m unittest": FAILING_RUN,
    "sed -n 1,8p stats.py": '"""Small statistics helpers."""\n\n\ndef mean(values):\n'
    '    """The arithmetic mean of a non-empty sequence."""\n    return sum(values) / (len(values) - 1)',
    "sed -i 's/len(values) - 1/len(values)/' stats.py && python3 -m unittest": (
        "....\n----------------------------------------------------------------------\nRan 4 tests in 0.001s\n\nOK"
    ),
}


def review_script() -> list[Any]:
    """A two-round refine turn: round 1 claims a fix it never made; round 2 makes it and shows it."""
    return [
        [
            TextBlock("I'll run the tests first."),
            ToolUseBlock("toolu_1", "bash", {"command": "python3 -m unittest"}),
        ],
        [ToolUseBlock("toolu_2", "bash", {"command": "sed -n 1,8p stats.py"})],
        "Fixed `mean` in stats.py: it divided by `len(values) - 1`.\n\nAll tests pass now.",
        "REVISE\nThe answer says all tests pass, but [1] shows 1 failure and no later call ran them again. "
        "[2] only printed stats.py; nothing changed it. Fix `mean` and run the tests.",
        [ToolUseBlock("toolu_3", "bash", {"command": "python3 -m unittest"})],
        [
            TextBlock("`mean` divides by the wrong count; fixing it and running the tests again."),
            ToolUseBlock(
                "toolu_4",
                "bash",
                {"command": "sed -i 's/len(values) - 1/len(values)/' stats.py && python3 -m unittest"},
            ),
        ],
        "Fixed `mean` in stats.py: it divided by `len(values) - 1` instead of `len(values)`.\n\n"
        "`python3 -m unittest` now passes: 4 tests, OK.",
        "PASS\n[2] shows the one-line fix and all 4 tests passing.",
    ]


def review_app(**overrides: Any) -> TuiAssistApp:
    """An app whose next refine turn is `review_script()` against canned shell outputs."""
    toolbox = FakeToolbox(Path("/work/project"), shell=CannedShellTool(REVIEW_OUTPUTS))
    app = make_app(review_script(), refine=True, rounds=3, toolbox_factory=lambda: toolbox, **overrides)
    app.session.approvals.default = "allow"
    return app
