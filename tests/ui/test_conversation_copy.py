"""Selecting messages in the conversation pane and copying them (the copy key, and mouse selection)."""

from __future__ import annotations

from pathlib import Path

from tests.ui.helpers import FakeToolbox, make_app, tool_use
from tui_assist.ui.widgets.conversation import Conversation
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.turn_parts import AnswerText, ToolCallView, UserMessage, VerdictLine

ANSWER = "Listed **two** files.\n\n- a.txt\n- b.txt"


async def _settle(app, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


def _tool_app(**overrides):
    toolbox = FakeToolbox(Path("/work/project"))
    app = make_app([tool_use("ls -la"), ANSWER], toolbox_factory=lambda: toolbox, **overrides)
    app.session.approvals.default = "allow"
    return app


async def _run_turn(app, pilot, prompt: str = "list files") -> None:
    await _settle(app, pilot)
    await pilot.press(*prompt, "enter")
    await _settle(app, pilot)


def _notifications(app) -> list[str]:
    return [notification.message for notification in app._notifications]


def _selected(app) -> list[str]:
    return [
        type(entry).__name__
        for entry in app.query_one(Conversation).entries()
        if entry.has_class("-selected")
    ]


async def test_without_a_selection_the_copy_key_copies_the_last_answer() -> None:
    app = _tool_app()
    async with app.run_test(size=(110, 30)) as pilot:
        await _run_turn(app, pilot)
        await pilot.press("f5")
        await pilot.pause()
        assert app.clipboard == ANSWER
        assert _notifications(app)[-1] == f"Copied the last answer ({len(ANSWER)} characters)."


async def test_up_and_down_select_messages_and_the_copy_key_copies_the_selected_one() -> None:
    app = _tool_app()
    async with app.run_test(size=(110, 30)) as pilot:
        await _run_turn(app, pilot)
        conversation = app.query_one(Conversation)
        conversation.focus()
        await pilot.pause()
        assert _selected(app) == []  # nothing until the cursor moves

        await pilot.press("up")  # the lowest message in view: the answer
        await pilot.press("f5")
        await pilot.pause()
        assert _selected(app) == ["AnswerText"]
        assert app.clipboard == ANSWER  # the Markdown source, not the rendered text
        assert _notifications(app)[-1] == f"Copied the answer ({len(ANSWER)} characters)."

        await pilot.press("up")  # the tool call takes the focus, so its own keys work on it
        assert isinstance(app.focused, ToolCallView)
        await pilot.press("f5")
        await pilot.pause()
        assert app.clipboard == 'bash: ls -la\n\ninput\n{\n  "command": "ls -la"\n}\n\noutput\nran: ls -la'
        assert _notifications(app)[-1].startswith("Copied the bash call (")
        await pilot.press("space")
        await pilot.pause()
        assert app.query_one(ToolCallView).has_class("-expanded")

        await pilot.press("up", "f5")
        await pilot.pause()
        assert app.focused is conversation
        assert app.clipboard == "Let me check."

        await pilot.press("up", "up", "f5")  # stops at the first message
        await pilot.pause()
        assert _selected(app) == ["UserMessage"]
        assert app.clipboard == "list files"
        assert _notifications(app)[-1] == "Copied the prompt (10 characters)."

        await pilot.press("end", "f5")
        await pilot.pause()
        assert app.clipboard == ANSWER
        await pilot.press("home", "down", "f5")
        await pilot.pause()
        assert app.clipboard == "Let me check."


async def test_the_selection_shows_and_counts_only_while_the_pane_has_focus() -> None:
    app = _tool_app()
    async with app.run_test(size=(110, 30)) as pilot:
        await _run_turn(app, pilot)
        app.query_one(Conversation).focus()
        await pilot.press("home")
        await pilot.pause()
        assert _selected(app) == ["UserMessage"]

        app.query_one(Prompt).focus()
        await pilot.pause()
        assert _selected(app) == []
        await pilot.press("f5")
        await pilot.pause()
        assert app.clipboard == ANSWER  # back in the prompt: the last answer

        app.query_one(Conversation).focus()
        await pilot.pause()
        assert _selected(app) == ["UserMessage"]  # the cursor is where it was
        await pilot.press("down", "f5")
        await pilot.pause()
        assert app.clipboard == "Let me check."


async def test_clicking_a_message_selects_it() -> None:
    app = _tool_app()
    async with app.run_test(size=(110, 30)) as pilot:
        await _run_turn(app, pilot)
        await pilot.click(UserMessage)
        await pilot.press("f5")
        await pilot.pause()
        assert app.focused is app.query_one(Conversation)
        assert app.clipboard == "list files"


async def test_refine_drafts_and_verdicts_copy_in_full_and_folded_drafts_are_skipped() -> None:
    feedback = "The evidence shows 42, not 41. " * 8  # longer than the line shows
    app = make_app(
        [
            "First draft: the answer is 41.",
            "REVISE\n" + feedback,
            "The answer is **42**.",
            "**PASS**\nMatches the evidence.",
        ],
        refine=True,
        rounds=3,
    )
    async with app.run_test(size=(110, 34)) as pilot:
        await _run_turn(app, pilot, "what is the answer?")
        conversation = app.query_one(Conversation)
        # Round 1 is folded to its header and verdict: its draft can't be selected.
        entries = conversation.entries()
        assert [type(e).__name__ for e in entries] == [
            "UserMessage",
            "VerdictLine",
            "AnswerText",
            "VerdictLine",
        ]
        conversation.focus()
        await pilot.press("home", "down", "f5")
        await pilot.pause()
        assert app.clipboard == "REVISE\n\n" + feedback.strip()
        assert _notifications(app)[-1].startswith("Copied the critic's verdict (")
        await pilot.press("down", "f5")
        await pilot.pause()
        assert app.clipboard == "The answer is **42**."
        assert _notifications(app)[-1].startswith("Copied the round 2 draft (")
        assert isinstance(entries[1], VerdictLine)


async def test_the_copy_bindings_can_be_remapped() -> None:
    app = _tool_app(keymap={"select-previous-message": "k", "copy-answer": "f9"})
    async with app.run_test(size=(110, 30)) as pilot:
        await _run_turn(app, pilot)
        app.query_one(Conversation).focus()
        await pilot.press("k", "k", "k", "f9")
        await pilot.pause()
        assert app.clipboard == "Let me check."


async def test_mouse_selection_in_an_answer_copies_the_text_as_shown() -> None:
    app = _tool_app()
    async with app.run_test(size=(110, 30)) as pilot:
        await _run_turn(app, pilot)
        answer = app.query(AnswerText).last()
        # Drag from "two" on the first line to the end of "a.txt" (content starts after 1 cell of padding).
        await pilot.mouse_down(answer, offset=(8, 0))
        await pilot.hover(answer, offset=(9, 2))
        await pilot.mouse_up(answer, offset=(9, 2))
        await pilot.pause()
        assert app.screen.get_selected_text() == "two files.\n\n • a.txt"
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "two files.\n\n • a.txt"


async def test_mouse_selection_across_messages_copies_all_of_them() -> None:
    app = _tool_app()
    async with app.run_test(size=(110, 30)) as pilot:
        await _run_turn(app, pilot)
        prompt = app.query_one(UserMessage)
        answer = app.query(AnswerText).last()
        await pilot.mouse_down(prompt, offset=(1, 0))
        await pilot.hover(answer, offset=(18, 0))
        await pilot.mouse_up(answer, offset=(18, 0))
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause()
        copied = app.clipboard
        assert copied.startswith("list files\n")
        assert "Let me check." in copied and "ls -la" in copied
        assert copied.endswith("Listed two files.")


async def test_a_notice_copies_its_markdown() -> None:
    app = _tool_app()
    async with app.run_test(size=(110, 30)) as pilot:
        await _run_turn(app, pilot)
        conversation = app.query_one(Conversation)
        conversation.add_notice("**Heads up:** the `store` is read-only.")
        await pilot.pause()
        conversation.focus()
        await pilot.press("end", "f5")
        await pilot.pause()
        assert app.clipboard == "**Heads up:** the `store` is read-only."
        assert _notifications(app)[-1].startswith("Copied the notice (")


async def test_selected_text_stays_readable() -> None:
    from textual.geometry import Offset
    from textual.selection import Selection

    app = _tool_app()
    async with app.run_test(size=(110, 30)) as pilot:
        await _run_turn(app, pilot)
        answer = app.query(AnswerText).last()
        app.screen.selections = {answer: Selection(Offset(0, 0), Offset(6, 0))}
        await pilot.pause()
        line = list(answer.render_line(0))
        selected = next(segment for segment in line if segment.text.startswith("Listed"))
        after = next(segment for segment in line if "files" in segment.text)
        assert selected.style is not None and after.style is not None
        assert selected.style.bgcolor != after.style.bgcolor  # highlighted...
        assert selected.style.color != selected.style.bgcolor  # ...and still readable
