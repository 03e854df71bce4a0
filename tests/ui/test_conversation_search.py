"""`ctrl+f` searches the conversation pane, compacted turns included, and jumps between the hits."""

from __future__ import annotations

import asyncio

from tests.ui.helpers import BlockingProvider, make_app, screen_text, wait_until
from tests.ui.test_conversation_compaction import SIZE, _with_turns
from tui_assist.ui.screens.main import MainScreen
from tui_assist.ui.widgets.conversation import TurnView
from tui_assist.ui.widgets.conversation_search import ConversationSearch
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.turn_parts import RoundView, ToolCallView


def _bar(app) -> ConversationSearch:
    return app.query_one(ConversationSearch)


async def test_a_hit_in_a_compacted_turn_expands_it_and_shows_the_message(tmp_path) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        conversation = await _with_turns(app, pilot, 6)
        first = conversation.query(TurnView).first()
        assert first.compacted
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.press(*"output of t0.a")  # a tool call's output: searched, though not shown
        await pilot.pause()
        bar = _bar(app)
        assert len(bar.hits) == 1 and "1/1" in screen_text(app)
        assert not first.compacted
        tool = first.query_one(ToolCallView)
        assert tool.has_class("-found")
        await pilot.pause()
        assert tool.region.overlaps(conversation.scrollable_content_region)


async def test_enter_and_up_step_through_the_hits_newest_first() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        conversation = await _with_turns(app, pilot, 6)
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.press(*"QUESTION")  # the six prompts, case-insensitively
        await pilot.pause()
        bar = _bar(app)
        assert len(bar.hits) == 6 and bar.current == 5
        assert "6/6" in screen_text(app)
        await pilot.press("enter")  # wraps to the first
        await pilot.pause()
        assert bar.current == 0 and "1/6" in screen_text(app)
        await pilot.press("up")
        await pilot.pause()
        assert bar.current == 5
        marked = [w for w in conversation.query(".-found")]
        assert len(marked) == 1 and "question 5" in marked[0].copy_text()  # type: ignore[attr-defined]

        await pilot.press(*" nowhere")
        await pilot.pause()
        assert bar.hits == [] and "no match" in screen_text(app)
        assert not list(conversation.query(".-found"))


async def test_escape_closes_the_search_and_never_cancels_the_running_turn() -> None:
    provider = BlockingProvider()
    app = make_app(provider=provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.press(*"long task", "enter")
        await asyncio.wait_for(provider.started.wait(), 5)
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.press(*"Working", "escape")
        await pilot.pause()
        main = app.screen
        assert isinstance(main, MainScreen) and main.running
        assert _bar(app).has_class("-hidden")
        assert isinstance(app.focused, Prompt)
        await pilot.press("escape")  # the next escape is the turn's again
        await wait_until(pilot, lambda: not main.running)
        assert provider.cancelled


async def test_what_the_user_expanded_in_a_turn_survives_its_compaction() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        conversation = await _with_turns(app, pilot, 6)
        agent_turn, refine_turn = list(conversation.query(TurnView))[:2]
        for turn in (agent_turn, refine_turn):
            turn.uncompact()
        await pilot.pause()
        agent_turn.query_one(ToolCallView).action_toggle_details()
        first_round = refine_turn.query(RoundView).first()
        assert first_round.has_class("-folded")  # earlier rounds fold when the turn ends
        first_round.fold(False)
        await pilot.pause()
        for turn in (agent_turn, refine_turn):
            assert turn.compact()
        await pilot.pause()
        assert not agent_turn.children and not refine_turn.children  # dropped...
        for turn in (agent_turn, refine_turn):
            turn.uncompact()
        await pilot.pause()
        # ...and built again from the turns' events, as the user left them.
        assert agent_turn.query_one(ToolCallView).has_class("-expanded")
        assert not refine_turn.query(RoundView).first().has_class("-folded")
