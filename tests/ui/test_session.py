"""The session's store wiring (against a fake with the store's API), resume, export and palette."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.command import CommandPalette

from tests.ui.helpers import (
    BlockingProvider,
    FakeToolbox,
    make_app,
    palette_searched,
    screen_text,
    settled,
    wait_until,
)
from tui_assist.core.conversation import Message, Usage
from tui_assist.core.events import TurnEvent
from tui_assist.core.observer import ApprovalDecision, ToolApproval
from tui_assist.core.tree import NodeLog
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.config import Settings
from tui_assist.session.config_source import MAX_ROUNDS
from tui_assist.store.event_log import coalesce_text
from tui_assist.store.rows import ConversationRow, TurnRow
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.commands import TuiAssistCommands
from tui_assist.ui.screens.main import MainScreen
from tui_assist.ui.screens.resume import ResumeScreen
from tui_assist.ui.widgets.conversation import TurnView


@dataclass
class _Recorder:
    events: list[TurnEvent] = field(default_factory=list)

    def on_event(self, event: TurnEvent) -> None:
        self.events.append(event)

    async def approve(self, request: ToolApproval) -> ApprovalDecision:
        return ApprovalDecision.deny()


@dataclass
class FakeStore:
    """Records calls; holds one stored conversation to resume."""

    calls: list[tuple[str, Any]] = field(default_factory=list)
    recorders: list[_Recorder] = field(default_factory=list)

    async def create_conversation(self, *, title: str, model: str, workdir: str) -> str:
        self.calls.append(("create_conversation", title))
        return "c-new"

    async def begin_turn(
        self, *, conversation_id: str, turn_id: str, strategy: str, prompt: str, model: str | None = None
    ) -> None:
        self.calls.append(("begin_turn", (conversation_id, strategy, prompt)))

    def recorder(self) -> _Recorder:
        recorder = _Recorder()
        self.recorders.append(recorder)
        return recorder

    async def commit_turn(
        self, conversation_id: str, result: Any, events: Sequence[TurnEvent] | NodeLog
    ) -> None:
        self.calls.append(("commit_turn", (conversation_id, result.outcome, len(coalesce_text(events)))))

    async def mark_cancelled(
        self, turn_id: str, events: Sequence[TurnEvent] | NodeLog, history: Sequence[Message] = ()
    ) -> None:
        self.calls.append(("mark_cancelled", len(coalesce_text(events))))

    async def list_conversations(
        self, limit: int, offset: int, query: str | None = None
    ) -> list[ConversationRow]:
        rows = [ConversationRow("c-old", "how do I rebase", "m", "/work/project", 1.0, 2.0, 1)]
        return [r for r in rows if not query or query in r.title]

    async def get_conversation(self, conversation_id: str) -> ConversationRow | None:
        rows = await self.list_conversations(50, 0)
        return next((r for r in rows if r.id == conversation_id), None)

    async def search(self, query: str, limit: int = 20) -> list[Any]:
        return []

    async def conversation_usage(self, conversation_id: str) -> Usage:
        return Usage(1200, 300, 50, 4000)

    async def usage_by_model(self, conversation_id: str) -> list[tuple[str, Usage]]:
        return [("m", await self.conversation_usage(conversation_id))]

    async def last_model(self, conversation_id: str) -> str | None:
        return None  # stored without one: the session keeps its own

    async def load_history(self, conversation_id: str) -> list[Message]:
        return [Message.user("how do I rebase"), Message.assistant("Use `git rebase -i`.")]

    async def load_summary(self, conversation_id: str) -> None:
        return None

    async def turns_page(
        self, conversation_id: str, *, limit: int = 50, before_seq: int | None = None
    ) -> list[TurnRow]:
        row = TurnRow(
            id="t-old",
            conversation_id=conversation_id,
            seq=1,
            strategy="agent",
            prompt="how do I rebase",
            answer="Use `git rebase -i`.",
            outcome="answered",
            error=None,
            usage=Usage(),
            rounds=0,
            tool_calls=0,
            duration=0.0,
            started_at=1.0,
            finished_at=2.0,
        )
        return [row][-limit:] if before_seq is None or before_seq > 1 else []

    async def events_of(self, turn_ids: Sequence[str]) -> dict[str, list[TurnEvent]]:
        # An old turn without an event log: redrawn from its prompt and answer.
        return {turn_id: [] for turn_id in turn_ids}

    async def messages_of(
        self, turn_ids: Sequence[str], *, role: str | None = None
    ) -> dict[str, list[Message]]:
        return {turn_id: [Message.user("how do I rebase")] for turn_id in turn_ids}


def _app(store: FakeStore, provider: Any) -> TuiAssistApp:
    return TuiAssistApp(
        Settings(provider="scripted", workdir=Path("/work/project")),
        provider_factory=lambda: provider,
        toolbox_factory=lambda: FakeToolbox(Path("/work/project")),
        store=store,
    )


async def test_a_turn_is_recorded_and_committed() -> None:
    store = FakeStore()
    app = _app(store, ScriptedProvider(["Answer one.", "Answer two."]))
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        for prompt in ("first question", "second"):
            await pilot.press(*prompt, "enter")
            await app.workers.wait_for_complete()
        await pilot.pause()
    names = [name for name, _ in store.calls]
    assert names == ["create_conversation", "begin_turn", "commit_turn", "begin_turn", "commit_turn"]
    assert store.calls[0] == ("create_conversation", "first question")
    assert store.calls[2][1][:2] == ("c-new", "answered")
    assert store.calls[2][1][2] > 0  # the turn's events are committed with it


async def test_a_cancelled_turn_is_marked_cancelled() -> None:
    store = FakeStore()
    provider = BlockingProvider()
    app = _app(store, provider)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await pilot.press(*"go", "enter")
        await asyncio.wait_for(provider.started.wait(), 5)
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
    names = [name for name, _ in store.calls]
    assert names == ["create_conversation", "begin_turn", "mark_cancelled"]


async def test_resume_picker_lists_and_redraws_a_conversation() -> None:
    store = FakeStore()
    app = _app(store, ScriptedProvider(["Then squash."]))
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ResumeScreen))
        await wait_until(pilot, lambda: "how do I rebase" in screen_text(app))
        await pilot.press("enter")  # the newest conversation is highlighted: one enter resumes it
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "Use git rebase -i." in screen_text(app)
        assert app.session.conversation_id == "c-old"
        # The resumed history is what the next turn sends to the model.
        await pilot.press(*"and then?", "enter")
        await app.workers.wait_for_complete()
        provider = app.session.provider
        assert isinstance(provider, ScriptedProvider)
        sent = [m.text for m in provider.requests[0].messages]
        assert sent == ["how do I rebase", "Use `git rebase -i`.", "and then?"]


async def test_without_a_store_resume_says_so() -> None:
    app = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert any("store is not available" in n.message for n in app._notifications)


async def test_palette_commands_set_rounds_and_start_over(tmp_path: Path) -> None:
    app = make_app(["An answer."])
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.press(*"hi", "enter")
        await app.workers.wait_for_complete()
        for command in ("refine: set rounds to 5", "session: new conversation"):
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*command)
            await wait_until(pilot, lambda: palette_searched(app, command))  # noqa: B023
            await pilot.press("enter")
            await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette))
        await settled(pilot)
        assert app.session.rounds == 5
        assert "Refine OFF" in screen_text(app)
        assert app.session.conversation.messages == []
        assert not app.query(TurnView)


async def test_palette_offers_every_round_budget_up_to_max_rounds() -> None:
    app = make_app([])
    async with app.run_test(size=(100, 30)):
        await app.session.wait_ready()
        palette = TuiAssistCommands(app.screen)
        titles = [hit.text async for hit in palette.search("refine: set rounds to")]
        assert {f"refine: set rounds to {n}" for n in range(1, MAX_ROUNDS + 1)} <= set(titles)
        best = max(
            [hit async for hit in palette.search(f"set rounds to {MAX_ROUNDS}")], key=lambda h: h.score
        )
        assert best.text == f"refine: set rounds to {MAX_ROUNDS}"
        best.command()
        assert app.session.rounds == MAX_ROUNDS


async def test_export_writes_the_conversation_as_markdown() -> None:
    app = make_app(["An **answer**."])
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.press(*"hi", "enter")
        await app.workers.wait_for_complete()
        app.main_screen.action_export_markdown()
        await pilot.pause()
    from tui_assist.paths import data_dir

    files = list((data_dir() / "exports").glob("conversation-*.md"))
    assert len(files) == 1
    text = files[0].read_text()
    assert "### Prompt\n\nhi" in text and "An **answer**." in text


async def test_panels_toggle() -> None:
    app = make_app([])
    async with app.run_test(size=(120, 30)) as pilot:
        await app.session.wait_ready()
        await pilot.press("f2")
        await pilot.pause()
        assert app.screen.has_class("-tree-hidden")
        assert app.query_one("#tree-title").region.width == 0
        await pilot.press("f3")
        await pilot.pause()
        assert app.query_one("#side").region.width == 0
        await pilot.press("f2", "f3")
        await pilot.pause()
        # Before the first turn the tree's title stands for it (it says it fills with the first turn).
        assert app.query_one("#tree-title").region.width > 0


async def test_resume_from_the_real_store_redraws_turns_and_their_tree(tmp_path: Path) -> None:
    """A turn stored by one session is redrawn by the next one from its event log."""
    from tui_assist.ui.widgets.agent_tree import AgentTree

    def app_with_store(script: list[str]) -> TuiAssistApp:
        return TuiAssistApp(
            Settings(provider="scripted", workdir=tmp_path, refine=True),
            provider_factory=lambda: ScriptedProvider(script),
            toolbox_factory=lambda: FakeToolbox(tmp_path),
        )

    first = app_with_store(["Draft 41.", "REVISE\nIt is 42.", "It is **42**.", "PASS\nok"])
    async with first.run_test(size=(110, 34)) as pilot:
        await first.session.wait_ready()
        assert first.session.store is not None
        await pilot.press(*"the answer?", "enter")
        await first.workers.wait_for_complete()
        await pilot.pause()

    second = app_with_store(["PASS"])
    async with second.run_test(size=(110, 34)) as pilot:
        await second.session.wait_ready()
        await second.workers.wait_for_complete()
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "the answer?" in screen_text(second))
        await pilot.press("enter", "enter")
        await wait_until(pilot, lambda: second.query_one(AgentTree).round_count == 2)
        await second.workers.wait_for_complete()
        await pilot.pause()
        text = screen_text(second)
        assert "It is 42." in text and "passed in round 2" in text
        assert "round 1 · REVISE" in text and "round 2 · PASS" in text
        assert [m.text for m in second.session.conversation.messages] == ["the answer?", "It is **42**."]
