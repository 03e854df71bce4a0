from __future__ import annotations

import asyncio

from tests.ui.helpers import BlockingProvider, FakeToolbox, make_app, screen_text, tool_use, wait_until
from tui_assist.ui.screens.approval import ApprovalScreen
from tui_assist.ui.screens.main import MainScreen
from tui_assist.ui.screens.round_review import RoundReviewScreen
from tui_assist.ui.widgets.agent_tree import AgentTree
from tui_assist.ui.widgets.conversation import TurnView
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.status_bar import StatusBar
from tui_assist.ui.widgets.turn_parts import ToolCallView, TurnBadge

REFINE_SCRIPT = [
    "First draft: the answer is 41.",
    "REVISE\nThe evidence shows 42, not 41.",
    "The answer is **42**.",
    "**PASS**\nMatches the evidence.",
]


async def _send(pilot, text: str) -> None:
    await pilot.press(*text, "enter")


async def _settle(app, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_agent_turn_streams_the_answer_and_counts_tokens() -> None:
    app = make_app(["Hello **there**, this is the answer."])
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "hi")
        await _settle(app, pilot)
        text = screen_text(app)
        assert "Hello there, this is the answer." in text
        status = app.query_one(StatusBar)
        assert status.usage.output_tokens > 0
        assert status.state == "idle"
        view = app.query_one(TurnView)
        assert view.outcome == "answered"
        assert app.session.conversation.messages[-1].text == "Hello **there**, this is the answer."


async def test_refine_turn_drives_the_tree_through_rounds_and_verdicts() -> None:
    app = make_app(REFINE_SCRIPT, refine=True, rounds=3)
    async with app.run_test(size=(120, 34)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "what is the answer?")
        await _settle(app, pilot)
        tree = app.query_one(AgentTree)
        assert tree.round_count == 2
        rounds = [r for r in tree.node_log.nodes.values() if r.kind == "round"]
        assert [r.verdict for r in rounds] == ["revise", "pass"]
        critics = [r for r in tree.node_log.nodes.values() if r.kind == "critic"]
        assert [tree.label_text(c).plain.split()[1:3] for c in critics] == [
            ["critic", "REVISE"],
            ["critic", "PASS"],
        ]
        text = screen_text(app)
        assert "round 1 · REVISE" in text and "round 2 · PASS" in text
        assert "passed in round 2" in text
        badge = app.query_one(TurnBadge)
        assert badge.has_class("-pass")
        # Only the clean prompt -> answer pair enters the history.
        assert [m.text for m in app.session.conversation.messages] == [
            "what is the answer?",
            "The answer is **42**.",
        ]


async def test_unverified_refine_turn_is_badged() -> None:
    app = make_app(["a", "REVISE\nno", "b", "REVISE\nstill no"], refine=True, rounds=2)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "go")
        await _settle(app, pilot)
        assert "unverified: no PASS in 2 rounds" in screen_text(app)


async def test_escape_cancels_the_running_turn_and_keeps_the_conversation() -> None:
    provider = BlockingProvider("Working on it")
    app = make_app(provider=provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "long task")
        await asyncio.wait_for(provider.started.wait(), 5)
        await wait_until(pilot, lambda: "Working on it" in screen_text(app))
        main = app.screen
        assert isinstance(main, MainScreen) and main.running
        assert app.query_one(StatusBar).state == "running"
        await pilot.press("escape")
        await _settle(app, pilot)
        await wait_until(pilot, lambda: provider.cancelled and not main.running)
        states = {r.kind: r.status for r in main.log_model.nodes.values()}
        assert states["turn"] == "cancelled" and states["agent"] == "cancelled"
        assert "cancelled" in screen_text(app)
        assert app.query_one(StatusBar).state == "idle"
        # The interrupted prompt and partial answer stay in the history, closed with the marker;
        # the focus is back on the prompt, and the next turn runs normally.
        assert [m.text for m in app.session.conversation.messages] == [
            "long task",
            "Working on it\n\n[interrupted by the user]",
        ]
        assert app.focused is app.query_one(Prompt)
        provider.release.set()
        await _send(pilot, "again")
        await _settle(app, pilot)
        assert [m.text for m in app.session.conversation.messages][2:] == ["again", "Working on it"]


async def test_escape_without_a_running_turn_does_nothing() -> None:
    app = make_app([])
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def _approval_run(decision_key: str) -> tuple[object, FakeToolbox, str]:
    toolbox = FakeToolbox(__import__("pathlib").Path("/work/project"))
    app = make_app([tool_use("touch notes.txt"), "Done."], toolbox_factory=lambda: toolbox)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle_load(app, pilot)
        await _send(pilot, "make a file")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        shown = screen_text(app)
        assert "touch notes.txt" in shown and "Allow once" in shown
        await pilot.press(decision_key)
        await _settle(app, pilot)
        tool = app.query_one(ToolCallView)
        return tool, toolbox, screen_text(app)


async def _settle_load(app, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_approval_modal_allows_once() -> None:
    tool, toolbox, text = await _approval_run("a")
    assert toolbox.shell.ran == ["touch notes.txt"]
    assert tool.state == "done"
    assert "Done." in text


async def test_approval_modal_denies() -> None:
    tool, toolbox, _ = await _approval_run("d")
    assert toolbox.shell.ran == []
    assert tool.state == "failed"
    assert "Denied" in tool.output


async def test_allow_for_session_skips_the_next_prompt_for_the_same_pattern() -> None:
    toolbox = FakeToolbox(__import__("pathlib").Path("/work/project"))
    script = [tool_use("ls", "t1"), tool_use("ls -la", "t2"), "Both ran."]
    app = make_app(script, toolbox_factory=lambda: toolbox)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle_load(app, pilot)
        await _send(pilot, "look around")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("s")
        await _settle(app, pilot)
        assert toolbox.shell.ran == ["ls", "ls -la"]
        assert isinstance(app.screen, MainScreen)


async def test_ctrl_r_toggles_refine_and_the_status_bar_shows_it() -> None:
    app = make_app(["PASS", "x"], rounds=4)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        assert "Refine OFF" in screen_text(app)
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert app.session.refine
        assert "Refine ON ×4" in screen_text(app)
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert not app.session.refine
        assert "Refine OFF" in screen_text(app)


async def test_refine_state_stays_visible_on_a_narrow_terminal() -> None:
    app = make_app([], refine=True)
    async with app.run_test(size=(60, 20)) as pilot:
        await _settle(app, pilot)
        assert app.screen.has_class("-narrow")
        assert "Refine ON" in screen_text(app)
        assert not app.query_one("#side").display or app.query_one("#side").region.width == 0
        await pilot.press("f2")
        await pilot.pause()
        assert app.query_one("#side").region.width > 0


async def test_keymap_from_settings_remaps_a_binding() -> None:
    app = make_app([], keymap={"toggle-refine": "f9"})
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("f9")
        await pilot.pause()
        assert app.session.refine


async def test_round_review_shows_transcript_and_steps_rounds() -> None:
    toolbox = FakeToolbox(__import__("pathlib").Path("/work/project"))
    script = [
        tool_use("cat answer.txt"),
        "It is 41.",
        "REVISE\nThe file says 42.",
        "It is 42.",
        "PASS\nRight.",
    ]
    app = make_app(script, refine=True, toolbox_factory=lambda: toolbox)
    app.session.approvals.default = "allow"
    async with app.run_test(size=(110, 40)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "what does answer.txt say?")
        await _settle(app, pilot)
        await pilot.press("f4")
        await pilot.pause()
        assert isinstance(app.screen, RoundReviewScreen)
        text = screen_text(app)
        assert "Round 2 of 2" in text and "Critic: PASS" in text
        await pilot.press("left")
        await pilot.pause()
        text = screen_text(app)
        assert "Round 1 of 2" in text
        assert "[1] bash: cat answer.txt" in text
        assert "Critic: REVISE" in text and "The file says 42." in text
        order = [text.index(s) for s in ("What the generator saw", "[1] bash", "It is 41.", "Critic: REVISE")]
        assert order == sorted(order)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_selecting_a_round_in_the_tree_opens_its_review() -> None:
    app = make_app(REFINE_SCRIPT, refine=True)
    async with app.run_test(size=(120, 34)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "q")
        await _settle(app, pilot)
        tree = app.query_one(AgentTree)
        first_round = next(r for r in tree.node_log.nodes.values() if r.kind == "round")
        node = tree.node_for(first_round.node_id)
        assert node is not None
        tree.focus()
        tree.move_cursor(node)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RoundReviewScreen)
        assert "Round 1 of 2" in screen_text(app)


async def test_copy_answer_puts_the_last_answer_on_the_clipboard() -> None:
    app = make_app(["The answer."])
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "q")
        await _settle(app, pilot)
        await pilot.press("f5")
        await pilot.pause()
        assert app.clipboard == "The answer."


async def test_provider_error_is_shown_and_the_conversation_survives() -> None:
    app = make_app(["only one"])
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "first")
        await _settle(app, pilot)
        await _send(pilot, "second")
        await _settle(app, pilot)
        assert "error: scripted provider: script exhausted" in screen_text(app).replace("\n", " ")
        assert [m.text for m in app.session.conversation.messages] == ["first", "only one"]


async def test_a_tool_call_expands_to_its_input_and_output() -> None:
    toolbox = FakeToolbox(__import__("pathlib").Path("/work/project"))
    app = make_app([tool_use("ls -la"), "Listed."], toolbox_factory=lambda: toolbox)
    app.session.approvals.default = "allow"
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "list")
        await _settle(app, pilot)
        view = app.query_one(ToolCallView)
        assert "ls -la" in screen_text(app) and "ran: ls -la" not in screen_text(app)
        view.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert view.has_class("-expanded")
        assert "ran: ls -la" in screen_text(app)


class _RetryingProvider:
    name = "retrying"
    model = "retrying"

    async def complete(self, request, sink):
        from tui_assist.core.conversation import Message, Usage
        from tui_assist.core.model import ModelResponse

        sink.text("garbled half ans")
        sink.retrying(1, "stream cut")
        sink.text("The clean answer.")
        return ModelResponse(Message.assistant("The clean answer."), "end_turn", Usage(3, 3), self.model)

    async def aclose(self) -> None:
        return None


async def test_a_retried_stream_replaces_the_partial_text() -> None:
    app = make_app(provider=_RetryingProvider())
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "q")
        await _settle(app, pilot)
        text = screen_text(app)
        assert "The clean answer." in text and "garbled" not in text
        record = next(r for r in app.main_screen.log_model.nodes.values() if r.kind == "agent")
        assert record.text == "The clean answer."


async def test_earlier_rounds_fold_and_unfold_on_click() -> None:
    app = make_app(REFINE_SCRIPT, refine=True)
    async with app.run_test(size=(120, 34)) as pilot:
        await _settle(app, pilot)
        await _send(pilot, "q")
        await _settle(app, pilot)
        from tui_assist.ui.widgets.turn_parts import RoundView

        first, last = list(app.query(RoundView))
        assert first.has_class("-folded") and not last.has_class("-folded")
        assert "First draft" not in screen_text(app)
        await pilot.click(first)
        await pilot.pause()
        assert not first.has_class("-folded")
        assert "First draft" in screen_text(app)


async def test_a_fast_burst_of_keys_sends_the_whole_prompt() -> None:
    """Keys arriving faster than the prompt handles them must not send half the prompt."""
    from textual import events

    app = make_app(["ok"])
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        for char in "what is the answer?":
            app.post_message(events.Key(char, char))
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: bool(app.session.conversation.messages))
        await _settle(app, pilot)
        assert app.session.conversation.messages[0].text == "what is the answer?"


async def test_newline_keys_insert_a_line_and_send_can_be_remapped() -> None:
    from tui_assist.ui.widgets.prompt import Prompt

    app = make_app(["ok"], keymap={"send": "ctrl+s"})
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press("a", "ctrl+j", "b", "enter", "c")
        assert app.query_one(Prompt).text == "a\nb\nc"
        await pilot.press("ctrl+s")
        await _settle(app, pilot)
        assert app.session.conversation.messages[0].text == "a\nb\nc"
