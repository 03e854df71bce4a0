"""The turn controller: routing, the queue, cancel, retry and the meter, with no screen at all.

A recording host stands in for the TUI; the session is real (scripted provider, no store), so a
turn runs the real strategies and reports real events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.ui.helpers import BlockingProvider, FakeToolbox
from tui_assist.core.conversation import TextBlock
from tui_assist.core.events import TurnEvent, UsageRecorded
from tui_assist.core.observer import RecordingObserver
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.chat import ChatSession
from tui_assist.session.commands import COMMANDS, SLASH, CommandError, run_headless
from tui_assist.session.config import Settings
from tui_assist.session.controller import TurnController, TurnEnded
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

    def run_command(self, call: SlashInput, text: str) -> Awaitable[None] | None:
        self.commands.append(call)
        return None


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
    work = controller.submit("first")
    assert work is not None
    task = asyncio.create_task(work)  # type: ignore[arg-type]
    await asyncio.wait_for(provider.started.wait(), 5)
    assert controller.submit("second") is None
    assert host.queues == [("second",)]

    provider.release.set()
    await asyncio.wait_for(task, 5)
    assert host.started == ["first", "second"]
    assert host.queues[-1] == ()
    assert [e.outcome.result.outcome for e in host.ended if e.outcome] == ["answered", "answered"]


async def test_a_prompt_sent_before_the_host_starts_the_first_waits_in_the_queue(tmp_path: Path) -> None:
    """A host may handle a second enter before it starts the first prompt's work (keys typed at
    once): the second prompt must wait, not start beside the first (a TUI worker replaced it)."""
    controller, host = await _ready(tmp_path, _replies("One.", "Two."))
    work = controller.submit("first")
    assert work is not None and controller.running  # handed over, not started yet
    assert controller.submit("second") is None
    assert host.queues == [("second",)]
    await work
    assert host.started == ["first", "second"]
    assert not controller.running


async def test_cancel_keeps_the_turn_as_interrupted_and_gives_the_queue_back(tmp_path: Path) -> None:
    provider = BlockingProvider()
    controller, host = await _ready(tmp_path, provider)
    work = controller.submit("long job")
    assert work is not None
    task = asyncio.create_task(work)  # type: ignore[arg-type]
    await asyncio.wait_for(provider.started.wait(), 5)
    controller.submit("follow-up")

    assert controller.cancel()
    await asyncio.wait_for(task, 5)
    [ended] = host.ended
    assert ended.cancelled and host.returned == [("follow-up",)]
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


def test_every_command_is_declared_once_with_its_keys() -> None:
    names = [command.name for command in COMMANDS]
    assert len(names) == len(set(names))
    ids = [key.id for command in COMMANDS for key in command.keys]
    assert len(ids) == len(set(ids))
    assert {"help", "new", "resume", "refine", "rewind", "quit"} <= set(SLASH.names)
    assert {c.name for c in COMMANDS if c.headless} == {
        "refine",
        "rounds",
        "cost",
        "budget",
        "compact",
        "hooks",
        "agents",
        "skills",
    }
