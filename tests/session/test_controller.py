"""The turn controller: runs, routing, the queue, cancel, retry and the meter, with no screen at all.

A recording host stands in for the TUI; the session is real (scripted provider, no store), so a
turn runs the real strategies and reports real events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.launchers import HeldLauncher
from tests.ui.helpers import BlockingProvider, FakeToolbox
from tui_assist.core.conversation import TextBlock
from tui_assist.core.events import TurnEvent, UsageRecorded
from tui_assist.core.observer import RecordingObserver
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.chat import ChatSession
from tui_assist.session.commands import COMMANDS, SLASH, CommandError, run_headless
from tui_assist.session.config import Settings
from tui_assist.session.controller import TurnController, TurnEnded
from tui_assist.session.runs import Run
from tui_assist.session.slash_commands import SlashInput


class RecordingHost:
    """Keeps everything the controller tells its host."""

    def __init__(self) -> None:
        self.observer = RecordingObserver()
        self.started: list[str] = []
        self.ended: list[TurnEnded] = []
        self.queues: list[tuple[str, ...]] = []
        self.returned: list[tuple[str, ...]] = []
        self.commands: list[SlashInput] = []
        self.refused: list[tuple[str, str]] = []
        self.runs: list[tuple[str, str]] = []
        self.meter_moves = 0

    @property
    def turn_observer(self) -> RecordingObserver:
        return self.observer

    @property
    def events(self) -> list[TurnEvent]:
        return self.observer.events

    def turn_started(self, prompt: str, strategy: str) -> None:
        self.started.append(prompt)

    def prompt_attached(self, attachments: Any) -> None:
        pass

    def turn_ended(self, ended: TurnEnded) -> None:
        self.ended.append(ended)

    def queue_changed(self, queued: Sequence[str]) -> None:
        self.queues.append(tuple(queued))

    def queue_returned(self, texts: Sequence[str]) -> None:
        self.returned.append(tuple(texts))

    def meter_changed(self) -> None:
        self.meter_moves += 1

    def run_command(self, call: SlashInput, text: str) -> Callable[[], Awaitable[None]] | None:
        self.commands.append(call)
        return None

    def command_refused(self, text: str, why: str) -> None:
        self.refused.append((text, why))

    def run_changed(self, run: Run) -> None:
        self.runs.append((run.label, run.state))


def _session(tmp_path: Path, provider: Any) -> ChatSession:
    return ChatSession(
        Settings(provider="scripted", workdir=tmp_path),
        provider_factory=lambda: provider,
        toolbox_factory=lambda: FakeToolbox(tmp_path),
        use_store=False,
    )


def _replies(*texts: str) -> ScriptedProvider:
    return ScriptedProvider([[TextBlock(text)] for text in texts])


async def _ready(tmp_path: Path, provider: Any) -> tuple[TurnController, RecordingHost]:
    session = _session(tmp_path, provider)
    await session.load()
    host = RecordingHost()
    return TurnController(session, host), host


async def test_a_prompt_runs_as_a_turn_and_feeds_the_meter(tmp_path: Path) -> None:
    controller, host = await _ready(tmp_path, _replies("Hello there."))
    work = controller.submit("hi")
    assert work is not None and not host.commands
    await work

    [ended] = host.ended
    assert ended.outcome is not None and ended.outcome.result.answer == "Hello there."
    spent = [e.usage for e in host.events if isinstance(e, UsageRecorded)]
    assert spent and controller.session.meter.usage == spent[0]
    assert host.meter_moves == len(spent)
    assert not controller.running


async def test_a_prompt_sent_while_a_turn_runs_waits_and_then_runs(tmp_path: Path) -> None:
    provider = BlockingProvider()
    controller, host = await _ready(tmp_path, provider)
    first = controller.submit("first")
    assert first is not None
    await asyncio.wait_for(provider.started.wait(), 5)
    second = controller.submit("second")
    assert second is not None and second.state == "queued"
    assert host.queues == [("second",)]

    provider.release.set()
    await asyncio.wait_for(second.wait(), 5)
    assert first.done and not first.cancelled
    assert host.started == ["first", "second"]
    assert host.queues[-1] == ()
    assert [e.outcome.result.outcome for e in host.ended if e.outcome] == ["answered", "answered"]


async def test_a_prompt_sent_before_the_host_starts_the_first_waits_in_the_queue(tmp_path: Path) -> None:
    """A host may handle a second enter before it starts the first prompt's work (keys typed at
    once): the second prompt must wait, not start beside the first (a TUI worker replaced it)."""
    controller, host = await _ready(tmp_path, _replies("One.", "Two."))
    work = controller.submit("first")
    assert work is not None and work.state == "starting" and controller.running  # not started yet
    second = controller.submit("second")
    assert second is not None and second.state == "queued"
    assert host.queues == [("second",)]
    await second
    assert host.started == ["first", "second"]
    assert not controller.running


async def test_cancel_keeps_the_turn_as_interrupted_and_gives_the_queue_back(tmp_path: Path) -> None:
    provider = BlockingProvider()
    controller, host = await _ready(tmp_path, provider)
    work = controller.submit("long job")
    assert work is not None
    await asyncio.wait_for(provider.started.wait(), 5)
    follow_up = controller.submit("follow-up")

    assert controller.cancel()
    await asyncio.wait_for(work.wait(), 5)
    [ended] = host.ended
    assert ended.cancelled and host.returned == [("follow-up",)]
    assert work.cancelled and work.ended is ended
    assert follow_up is not None and follow_up.done and follow_up.cancelled
    assert controller.failed_prompt is None and not controller.queued
    assert not controller.cancel()  # nothing runs now


async def test_a_failed_turn_can_be_retried_and_its_follow_ups_come_back(tmp_path: Path) -> None:
    provider = _replies()  # exhausted: the first turn fails
    controller, host = await _ready(tmp_path, provider)
    work = controller.submit("try this")
    assert work is not None
    await work
    assert host.ended[-1].failed and controller.failed_prompt == "try this"

    provider._script.append([TextBlock("Done now.")])
    retry = controller.retry()
    assert retry is not None
    await retry
    outcome = host.ended[-1].outcome
    assert outcome is not None and outcome.result.answer == "Done now."
    assert controller.failed_prompt is None and controller.retry() is None


async def test_commands_route_to_the_host_and_custom_ones_expand(tmp_path: Path, monkeypatch) -> None:
    commands = tmp_path / ".tui-assist" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("# Review\nReview $ARGUMENTS carefully.", encoding="utf-8")
    provider = _replies("Reviewed.")
    controller, host = await _ready(tmp_path, provider)

    assert controller.submit("/cost") is None
    assert [c.name for c in host.commands] == ["cost"]
    assert controller.submit("/reviw app.py") is None  # never sent: one line naming the closest
    assert host.refused == [
        ("/reviw app.py", "unknown command /reviw: did you mean /review? (/help lists the commands)")
    ]

    work = controller.submit("/review app.py")
    assert work is not None
    await work
    assert host.started == ["/review app.py"]  # as typed, as Claude Code shows it
    assert controller.session.conversation.messages[0].text == "# Review\nReview app.py carefully."


async def test_the_headless_commands_act_on_the_session(tmp_path: Path) -> None:
    controller, _ = await _ready(tmp_path, _replies())
    session = controller.session
    assert "ON" in await run_headless(controller, "refine", "on") and session.refine
    assert "5" in await run_headless(controller, "rounds", "5") and session.rounds == 5
    assert "no model calls" in await run_headless(controller, "cost", "")
    assert "$0.0000/$0.5000" in await run_headless(controller, "budget", "0.5")
    assert session.max_budget_usd == 0.5
    assert "No spend cap" in await run_headless(controller, "budget", "off")
    with pytest.raises(CommandError):
        await run_headless(controller, "budget", "lots")
    with pytest.raises(CommandError):
        await run_headless(controller, "rounds", "zero")
    with pytest.raises(CommandError):
        await run_headless(controller, "theme", "")


def test_every_command_is_declared_once() -> None:
    # (Their keys are the TUI's: tests/ui/test_command_context.py checks those.)
    names = [command.name for command in COMMANDS]
    assert len(names) == len(set(names))
    assert {"help", "new", "resume", "refine", "rewind", "quit"} <= set(SLASH.names)
    assert {c.name for c in COMMANDS if c.headless} == {
        "refine",
        "rounds",
        "goal",
        "cost",
        "budget",
        "compact",
        "hooks",
        "agents",
        "skills",
        "tasks",
    }


async def test_a_run_cancelled_before_it_starts_ends_at_once_and_frees_the_controller(
    tmp_path: Path,
) -> None:
    session = _session(tmp_path, _replies("Second."))
    await session.load()
    host = RecordingHost()
    launcher = HeldLauncher()
    controller = TurnController(session, host, launcher=launcher)
    first = controller.submit("first")
    assert first is not None and first.state == "starting"

    assert controller.cancel()
    assert first.done and first.cancelled and first.ended is None
    assert not controller.running and host.runs[-1] == ("first", "done")
    launcher.release()  # the host starts the work late: it does nothing
    await launcher.finished()
    assert host.started == []

    second = controller.submit("second")  # runs, not queued behind a run stuck "starting"
    assert second is not None and second.state == "starting" and not host.queues
    launcher.release()
    await second
    assert second.ended is not None and second.ended.outcome is not None
    assert second.ended.outcome.result.answer == "Second."


async def test_a_queued_prompt_can_be_cancelled_alone(tmp_path: Path) -> None:
    provider = BlockingProvider()
    controller, host = await _ready(tmp_path, provider)
    first = controller.submit("first")
    await asyncio.wait_for(provider.started.wait(), 5)
    second = controller.submit("second")
    third = controller.submit("third")
    assert second is not None and third is not None

    assert second.cancel()
    assert second.done and second.cancelled and controller.queued == ("third",)
    assert host.queues[-1] == ("third",)
    provider.release.set()
    await asyncio.wait_for(third.wait(), 5)
    assert first is not None and not first.cancelled
    assert host.started == ["first", "third"]


async def test_deny_and_stop_cancels_the_run_whichever_host_asked(tmp_path: Path) -> None:
    from tests.ui.helpers import tool_use
    from tui_assist.core.observer import ApprovalDecision

    provider = ScriptedProvider([tool_use("rm -rf build"), [TextBlock("Never asked for.")]])
    session = ChatSession(
        Settings(provider="scripted", workdir=tmp_path),
        provider_factory=lambda: provider,
        toolbox_factory=lambda: FakeToolbox(tmp_path),
        use_store=False,
    )
    await session.load()
    host = RecordingHost()

    async def stop(request: Any) -> ApprovalDecision:
        return ApprovalDecision.stop()

    host.observer.approve = stop
    controller = TurnController(session, host)
    run = controller.submit("clean up")
    assert run is not None
    await asyncio.wait_for(run.wait(), 5)
    assert run.cancelled and run.ended is not None and run.ended.cancelled
    assert not controller.running


async def test_a_host_run_holds_the_busy_slot_and_prompts_wait_for_it(tmp_path: Path) -> None:
    controller, host = await _ready(tmp_path, _replies("After the flow."))
    release = asyncio.Event()

    async def flow() -> str:
        await release.wait()
        return "flowed"

    run = controller.start("flow", "a flow", flow)
    assert run is not None and controller.running and run.state == "starting"
    seen: list[str] = []
    run.watch(lambda watched: seen.append(watched.state))
    assert controller.start("resume", "x", flow) is None  # one run at a time
    prompt = controller.submit("next")
    assert prompt is not None and prompt.state == "queued"
    release.set()
    await asyncio.wait_for(prompt.wait(), 5)
    assert run.value == "flowed" and host.started == ["next"]
    assert seen == ["running", "done"]


async def test_a_host_run_cancelled_while_it_runs_is_cancelled(tmp_path: Path) -> None:
    controller, _ = await _ready(tmp_path, _replies())
    started = asyncio.Event()

    async def resume() -> None:
        started.set()
        await asyncio.Event().wait()

    run = controller.start("resume", "an old conversation", resume)
    assert run is not None
    await asyncio.wait_for(started.wait(), 5)
    assert controller.cancel()
    await asyncio.wait_for(run.wait(), 5)
    assert run.cancelled and not controller.running


async def test_a_new_conversation_is_refused_while_a_run_runs_and_clears_the_failed_prompt(
    tmp_path: Path,
) -> None:
    controller, _ = await _ready(tmp_path, _replies())  # exhausted: the turn fails
    run = controller.submit("fails")
    assert run is not None
    assert not controller.new_conversation()
    await run
    assert controller.failed_prompt == "fails"
    assert controller.new_conversation() and controller.failed_prompt is None


async def test_compact_runs_in_the_busy_slot(tmp_path: Path) -> None:
    controller, host = await _ready(tmp_path, _replies())
    assert "Nothing to compact" in await run_headless(controller, "compact", "")
    assert ("/compact", "done") in host.runs and not controller.running
