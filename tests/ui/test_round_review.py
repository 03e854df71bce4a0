"""The round review: headed sections, collapsible calls, citations, the answer's diff."""

from __future__ import annotations

from tests.ui.helpers import review_app, screen_text
from tui_assist.ui.screens.round_review import (
    ReviewedCall,
    ReviewSection,
    RoundReviewScreen,
    ToolCallReview,
    answer_diff,
    cite,
)
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.streaming_markdown import StreamingMarkdown


async def _open_review(pilot, round_number: int) -> RoundReviewScreen:
    app = pilot.app
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    app.query_one(Prompt).cursor_blink = False
    await pilot.press(*"fix the failing test", "enter")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.press("f4", *(["left"] if round_number == 1 else []))
    await pilot.pause()
    assert isinstance(app.screen, RoundReviewScreen)
    return app.screen


def _titles(screen: RoundReviewScreen) -> list[str]:
    return [str(s.children[0].render()) for s in screen.query(ReviewSection)]


async def test_what_the_generator_saw_is_headed_markdown_without_template_tags() -> None:
    app = review_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_review(pilot, 2)
        assert _titles(screen) == [
            "What the generator saw",
            "The generator's work",
            "Answer (round 2)",
            "Changes since round 1  −2 +2 lines",
            "Critic: PASS",
        ]
        seen = screen.query(ReviewSection).first().query_one(StreamingMarkdown).source
        assert "<previous_answer>" not in seen and "<reviewer_feedback>" not in seen
        lines = seen.splitlines()
        assert lines[:3] == ["### The request", "", "fix the failing test"]
        assert "### Its answer in round 1" in lines and "### The critic's feedback on round 1" in lines
        # The previous answer keeps its paragraphs.
        start = lines.index("### Its answer in round 1") + 2
        assert lines[start : start + 3] == [
            "Fixed `mean` in stats.py: it divided by `len(values) - 1`.",
            "",
            "All tests pass now.",
        ]
        assert lines[-1].startswith("*Its [n] are round 1's tool calls. Asked to do the task again")


async def test_calls_are_numbered_like_the_evidence_and_cited_ones_open_with_the_critics_words() -> None:
    app = review_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_review(pilot, 1)
        calls = list(screen.query(ToolCallReview))
        assert [(c.call.number, c.call.summary) for c in calls] == [
            (1, "bash: python3 -m unittest"),
            (2, "bash: sed -n 1,8p stats.py"),
        ]
        # The critic cited both ([1] and [2]): both open, marked, with the sentence that cites them.
        assert all(not c.collapsed and c.has_class("-cited") for c in calls)
        assert calls[0].call.notes == [
            "The answer says all tests pass, but [1] shows 1 failure and no later call ran them again."
        ]
        assert calls[1].call.notes == ["[2] only printed stats.py; nothing changed it."]
        text = screen_text(app)
        assert "▼ [1] bash: python3 -m unittest" in text and "cited" in text
        assert "AssertionError: 3.3333333333333335 != 2.5" in calls[0].call.output  # the full output


async def test_uncited_calls_are_closed_and_e_opens_and_closes_them_all() -> None:
    app = review_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open_review(pilot, 2)
        first, second = screen.query(ToolCallReview)
        assert first.collapsed and not first.has_class("-cited")
        assert not second.collapsed and second.has_class("-cited")
        await pilot.press("e")
        assert not first.collapsed and not second.collapsed
        await pilot.press("e")
        assert first.collapsed and second.collapsed


async def test_a_citation_link_opens_and_shows_its_call() -> None:
    app = review_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_review(pilot, 2)
        await pilot.press("e", "e")  # close every call
        second = screen.query_one("#call-2", ToolCallReview)
        assert second.collapsed
        cites = screen.query_one(".review-section--cites")
        body = screen.query_one("#review-body")
        body.scroll_to_widget(cites, animate=False)
        await pilot.pause()
        await pilot.click(cites, offset=(len("Cites: ") + 1, 0))
        await pilot.pause()
        assert not second.collapsed
        await pilot.pause()
        # Scrolled to the call: its title is at the top of the body, and focused for the keyboard.
        assert body.scroll_offset.y > 0 and 0 <= second.region.y - body.region.y <= 2
        assert screen.focused is not None and screen.focused.parent is second


async def test_stepping_rounds_rebuilds_the_review() -> None:
    app = review_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_review(pilot, 2)
        await pilot.press("left")
        await pilot.pause()
        assert "Round 1 of 2" in screen_text(app)
        assert "Changes since round" not in " ".join(_titles(screen))
        assert _titles(screen)[-1] == "Critic: REVISE"


def test_quoting_a_command_cites_its_call() -> None:
    calls = [
        ReviewedCall("a", "bash", {"command": "pytest -q tests"}, 0, number=1),
        ReviewedCall("b", "bash", {"command": "ls"}, 0, number=2),
    ]
    cited = cite(calls, "Running `pytest -q tests` showed 2 failures. The answer ignores them.")
    assert cited == {1}
    assert calls[0].notes == ["Running `pytest -q tests` showed 2 failures."]
    assert calls[1].notes == []  # too short a command to count as a quote


def test_answer_diff_counts_lines_and_keeps_context() -> None:
    middle = "\n".join(f"line {i}" for i in range(4, 12))
    old = f"line 1\nline 2\nthe value is 41\n{middle}"
    new = f"line 1\nline 2\nthe value is 42\n{middle}\nextra"
    diff, removed, added = answer_diff(old, new)
    assert (removed, added) == (1, 2)
    lines = diff.plain.splitlines()
    assert "- the value is 41" in lines and "+ the value is 42" in lines and "+ extra" in lines
    assert "  line 1" in lines and "  line 4" in lines and "  line 11" in lines
    assert "  ⋯" in lines and "  line 7" not in lines  # context far from a change is folded


async def test_f4_never_opens_a_round_of_another_conversation(tmp_path) -> None:
    """After a new conversation or a resume, the node log holds only what the screen shows."""
    from tests.ui.helpers import FakeToolbox, settings, wait_until
    from tui_assist.providers.scripted import ScriptedProvider
    from tui_assist.ui.app import TuiAssistApp
    from tui_assist.ui.screens.main import MainScreen

    script = ["A draft.", "REVISE\nCheck it.", "The answer is 42.", "PASS", "A plain answer."]
    app = TuiAssistApp(
        settings(tmp_path, refine=True),
        provider_factory=lambda: ScriptedProvider(script),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
    )

    async def settle() -> None:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.pause()

    async def f4_opens_a_review() -> bool:
        await pilot.press("f4")
        await pilot.pause()
        opened = isinstance(app.screen, RoundReviewScreen)
        if opened:
            await pilot.press("escape")
            await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        return opened

    async with app.run_test(size=(120, 34)) as pilot:
        await settle()
        await pilot.press(*"what is the answer?", "enter")
        await settle()
        refined = app.session.conversation_id
        assert await f4_opens_a_review()

        await pilot.press("ctrl+n")
        await settle()
        assert not await f4_opens_a_review()  # the refined turn belongs to the other conversation

        await pilot.press("ctrl+r", *"a plain question", "enter")  # Refine off: an agent turn
        await settle()
        plain = app.session.conversation_id
        assert plain is not None and plain != refined
        screen = app.screen
        assert isinstance(screen, MainScreen)
        screen.resume(refined)
        await settle()
        assert await f4_opens_a_review()  # its rounds, replayed from the store
        screen.resume(plain)
        await settle()
        assert not await f4_opens_a_review()
