"""Old finished turns are compacted into one widget each, look the same, and stay usable."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widget import Widget

from tests.ui.helpers import make_app, screen_text, settled
from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    VerdictReached,
)
from tui_assist.ui.widgets.conversation import LIVE_TURNS, Conversation, TurnView
from tui_assist.ui.widgets.turn_parts import ToolCallView, UserMessage

SIZE = (100, 40)


def _answer(n: int) -> str:
    return f"## Turn {n}\n\nThe deploy **failed** at the health check.\n\n- raise the limit\n- redeploy\n"


def _tool(t: str, parent: str) -> list[TurnEvent]:
    return [
        ToolCallStarted(
            node_id=f"{t}.tool", parent_id=parent, call_id=t, name="bash", input={"command": "ls"}
        ),
        ToolCallFinished(node_id=f"{t}.tool", call_id=t, name="bash", output=f"output of {t}", duration=0.4),
    ]


def _turn_events(n: int) -> tuple[str, str, list[TurnEvent]]:
    t = f"t{n}"
    events: list[TurnEvent] = [NodeStarted(node_id=t, parent_id=None, node_kind="turn", label="turn")]
    if n % 2:
        for r in (1, 2):
            rnd, gen = f"{t}.r{r}", f"{t}.r{r}.g"
            events += [
                NodeStarted(node_id=rnd, parent_id=t, node_kind="round", label="round"),
                NodeStarted(node_id=gen, parent_id=rnd, node_kind="generate", label="generate"),
                *_tool(gen, gen),
                TextDelta(node_id=gen, text=_answer(n)),
                NodeFinished(node_id=gen),
                NodeStarted(node_id=f"{rnd}.c", parent_id=rnd, node_kind="critic", label="critic"),
                VerdictReached(
                    node_id=f"{rnd}.c", round=r, verdict="pass" if r == 2 else "revise", feedback="more"
                ),
                NodeFinished(node_id=f"{rnd}.c"),
                NodeFinished(node_id=rnd),
            ]
        events.append(NodeFinished(node_id=t, outcome="answered", output=_answer(n)))
        return f"refine question {n}", "refine", events
    gen = f"{t}.a"
    events += [
        NodeStarted(node_id=gen, parent_id=t, node_kind="agent", label="agent"),
        TextDelta(node_id=gen, text="Let me look.\n"),
        *_tool(gen, gen),
        TextDelta(node_id=gen, text=_answer(n)),
        NodeFinished(node_id=gen),
        NodeFinished(node_id=t, outcome="answered", output=_answer(n)),
    ]
    return f"question {n}", "agent", events


async def _with_turns(app: Any, pilot: Any, count: int) -> Conversation:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()
    conversation = app.query_one(Conversation)
    log = app.main_screen.log_model  # the pane reads the screen's fold of the events
    for n in range(count):
        prompt, strategy, events = _turn_events(n)
        conversation.begin_turn(prompt, strategy)
        for event in events:
            log.apply(event)
            conversation.apply(event)
    await pilot.pause()
    await pilot.pause()
    return conversation


def _pane_cells(app: Any, conversation: Conversation) -> list[list[tuple[str, Any]]]:
    region = conversation.region
    rows: list[list[tuple[str, Any]]] = []
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        if region.y <= y < region.bottom:
            rows.append(
                [
                    (char, segment.style)
                    for segment in strip.crop(region.x, region.right)
                    for char in segment.text
                ]
            )
    return rows


def _compacted(conversation: Conversation) -> list[bool]:
    return [turn.compacted for turn in conversation.query(TurnView)]


async def test_finished_turns_before_the_newest_ones_are_compacted_and_look_the_same() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        conversation = await _with_turns(app, pilot, 6)
        assert _compacted(conversation) == [True] * (6 - LIVE_TURNS) + [False] * LIVE_TURNS
        # A compacted turn drops its children: a layout arranges one widget for the turn, and the
        # collector has a handful of objects to scan instead of a dozen widgets.
        assert not conversation.query(TurnView).first().children

        offsets = range(0, int(conversation.max_scroll_y) + 1, 7)
        compacted_look = []
        for y in offsets:
            conversation.scroll_to(y=y, animate=False, immediate=True)
            await pilot.pause()
            compacted_look.append(_pane_cells(app, conversation))
        for turn in conversation.query(TurnView):
            turn.uncompact()
        await pilot.pause()
        assert not any(_compacted(conversation))
        for y, expected in zip(offsets, compacted_look, strict=True):
            conversation.scroll_to(y=y, animate=False, immediate=True)
            await pilot.pause()
            assert _pane_cells(app, conversation) == expected, f"scrolled to {y}"


async def test_the_cursor_reaches_compacted_turns_and_copies_what_they_showed() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        conversation = await _with_turns(app, pilot, 6)
        first = conversation.query(TurnView).first()
        assert first.compacted
        assert not any(first in entry.ancestors for entry in conversation.entries())
        conversation.focus()
        await pilot.press("home")
        await pilot.pause()
        await pilot.press("f5")
        await pilot.pause()
        assert app.clipboard == "question 0"
        assert not first.compacted  # selecting in a compacted turn expands it (built again)
        prompt = first.query_one(UserMessage)
        assert prompt.has_class("-selected")
        await pilot.press("down", "down", "f5")  # "Let me look.", then the tool call
        await pilot.pause()
        assert isinstance(app.focused, ToolCallView)
        assert app.clipboard.startswith("bash: ls") and "output of t0.a" in app.clipboard

        # The cursor's turn is not compacted when the next turn starts, even with the focus
        # elsewhere (the selection shows again when the pane gets it back)...
        app.set_focus(None)
        await pilot.pause()
        conversation.begin_turn("another", "agent")
        await pilot.pause()
        assert not first.compacted
        conversation.focus()
        await pilot.pause()
        # ...but once the cursor moved on, it is.
        await pilot.press("end")
        conversation.begin_turn("and another", "agent")
        await pilot.pause()
        assert first.compacted


async def test_clicking_a_compacted_tool_call_expands_the_turn_and_shows_the_details() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        conversation = await _with_turns(app, pilot, 6)
        first = conversation.query(TurnView).first()
        conversation.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert first.compacted
        rows = [line for line in screen_text(app).splitlines()]
        row = next(y for y, line in enumerate(rows) if "✓ bash" in line)
        await pilot.click(first, offset=(6, row - first.region.y))
        await pilot.pause()
        assert not first.compacted
        assert first.query_one(ToolCallView).has_class("-expanded")
        assert "output of t0.a" in screen_text(app)


async def test_a_theme_change_expands_compacted_turns() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        conversation = await _with_turns(app, pilot, 5)
        assert _compacted(conversation)[0]
        app.theme = next(name for name in app.available_themes if name != app.theme)
        await pilot.pause()
        assert not any(_compacted(conversation))


async def test_moving_the_cursor_up_into_a_compacted_turn_builds_it_and_selects_its_last_message() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        conversation = await _with_turns(app, pilot, 6)
        turns = list(conversation.query(TurnView))
        newest_compacted, oldest_live = turns[-LIVE_TURNS - 1], turns[-LIVE_TURNS]
        assert newest_compacted.compacted and not oldest_live.compacted
        conversation.focus()
        conversation.select_message(oldest_live.query_one(UserMessage))
        await pilot.press("up")
        await pilot.pause()
        assert not newest_compacted.compacted
        inside = [e for e in conversation.entries() if newest_compacted in e.ancestors]  # type: ignore[attr-defined]
        assert inside and conversation.selected_message is inside[-1]


async def test_an_expanded_turn_draws_the_lines_the_styles_cache_would() -> None:
    class Chat(App[None]):
        def compose(self) -> ComposeResult:
            yield Conversation()

    for theme in ("textual-dark", "textual-light"):
        app = Chat()
        async with app.run_test(size=(60, 12)) as pilot:
            app.theme = theme
            conversation = app.query_one(Conversation)
            conversation.begin_turn("question", "agent")
            conversation.apply(NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"))
            conversation.apply(NodeStarted(node_id="a", parent_id="t", node_kind="agent", label="agent"))
            conversation.apply(TextDelta(node_id="a", text="An answer.\n\nIn paragraphs.\n\n" * 4))
            await settled(pilot)
            view = app.query_one(TurnView)
            crop = Region(0, 0, view.size.width, view.size.height)
            # Its fast path (blank lines in its background) is what Textual's own drawing gives.
            assert [list(s) for s in view.render_lines(crop)] == [
                list(s) for s in Widget.render_lines(view, crop)
            ]
