"""The prompt as a daily driver: history on up / down, the `/` completion list, the inline error."""

from __future__ import annotations

import base64
from pathlib import Path

from textual.events import Paste

from tests.session.test_images import png_bytes
from tests.ui.helpers import make_app
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.mentions.image_fit import MAX_IMAGE_BYTES
from tui_assist.session.prompt_history import PromptHistory
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.widgets.completion import CompletionList
from tui_assist.ui.widgets.prompt import Prompt, PromptChips, PromptError
from tui_assist.ui.widgets.turn_parts import Notice


async def _settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def _send(app: TuiAssistApp, pilot, text: str) -> None:
    await pilot.press(*text, "enter")
    await _settle(app, pilot)


def _prompt(app: TuiAssistApp) -> Prompt:
    return app.query_one(Prompt)


async def test_up_and_down_browse_the_history_and_bring_the_draft_back() -> None:
    app = make_app(["one.", "two.", "three."])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        for text in ("first", "second", "third"):
            await _send(app, pilot, text)
        prompt = _prompt(app)
        await pilot.press(*"half typ")
        await pilot.press("up")
        assert prompt.text == "third"
        await pilot.press("up", "up")
        assert prompt.text == "first"
        await pilot.press("up")  # the oldest: stays
        assert prompt.text == "first"
        await pilot.press("down", "down")
        assert prompt.text == "third"
        await pilot.press("down")
        assert prompt.text == "half typ"
        await pilot.press("down")  # not browsing any more: nothing changes
        assert prompt.text == "half typ"


async def test_up_moves_within_a_multi_line_prompt_before_browsing() -> None:
    app = make_app(["ok."])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await _send(app, pilot, "earlier")
        prompt = _prompt(app)
        await pilot.press(*"line one", "ctrl+j", *"line two")
        await pilot.press("up")  # from the second line to the first: no recall yet
        assert prompt.text == "line one\nline two" and prompt.cursor_location[0] == 0
        await pilot.press("up")
        assert prompt.text == "earlier"
        await pilot.press("down")
        assert prompt.text == "line one\nline two"


async def test_the_history_is_stored_and_shared_by_every_conversation(tmp_path: Path) -> None:
    app = make_app(["ok.", "ok."])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await _send(app, pilot, "in the first conversation")
        await pilot.press("ctrl+n")
        await _send(app, pilot, "in the second")
        await _send(app, pilot, "/rounds 4")
        history_path = app.session.prompt_history.path
    # The autouse fixture points TUI_ASSIST_HOME at the test's tmp dir: the real data dir.
    assert history_path.parent == tmp_path / "data"
    assert PromptHistory(history_path).entries == ["in the first conversation", "in the second", "/rounds 4"]

    again = make_app([])
    async with again.run_test(size=(100, 30)) as pilot:
        await _settle(again, pilot)
        await pilot.press("up")
        assert _prompt(again).text == "/rounds 4"
        assert not again.query_one(CompletionList).is_open  # a recalled command opens no list
        await pilot.press("up")
        assert _prompt(again).text == "in the second"


async def test_slash_opens_a_completion_list_that_filters_and_tab_completes() -> None:
    provider = ScriptedProvider([])
    app = make_app(provider=provider)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        completions = app.query_one(CompletionList)
        await pilot.press("/")
        assert completions.is_open
        offered = [item.label for item in completions.items]
        assert offered[:3] == ["/help", "/new", "/resume [QUERY]"] and "/quit" in offered
        await pilot.press("r")
        assert [item.label.split()[0] for item in completions.items][:2] == ["/resume", "/refine"]
        await pilot.press("o", "u")
        assert [item.label for item in completions.items] == ["/rounds N"]
        await pilot.press("tab")
        assert _prompt(app).text == "/rounds " and not completions.is_open
        await pilot.press("5", "enter")
        await _settle(app, pilot)
        assert app.session.rounds == 5
        assert provider.requests == []  # a command never reaches the model


async def test_up_and_down_move_in_the_list_and_enter_runs_the_highlighted_command() -> None:
    app = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        completions = app.query_one(CompletionList)
        await pilot.press("/", "n")
        first = completions.highlighted_item
        assert first is not None and first.label == "/new"
        await pilot.press("down")
        second = completions.highlighted_item
        assert second is not None and second.label != "/new"
        await pilot.press("up")
        assert completions.highlighted_item == first
        await pilot.press("escape")  # closes the list, keeps the text
        assert not completions.is_open and _prompt(app).text == "/n"
        await pilot.press("backspace", "h", "enter")  # `/h` -> the highlighted /help runs at once
        await _settle(app, pilot)
        help_text = app.query(Notice).last().source
        assert "**Commands**" in help_text and "/rounds N" in help_text and "history-previous" in help_text
        assert _prompt(app).text == ""


async def test_an_unknown_command_gives_a_one_line_error_names_the_closest_and_keeps_the_text() -> None:
    provider = ScriptedProvider([])
    app = make_app(provider=provider)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"/modle big", "enter")
        await _settle(app, pilot)
        error = app.query_one(PromptError)
        assert error.has_class("-shown")
        assert "unknown command /modle: did you mean /model?" in str(error.render())
        assert _prompt(app).text == "/modle big"
        assert provider.requests == []
        await pilot.press("ctrl+a")  # any edit clears the error
        await pilot.press("x")
        assert not error.has_class("-shown")


async def test_a_command_that_needs_an_argument_explains_its_usage() -> None:
    app = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"/rounds many", "enter")
        await _settle(app, pilot)
        assert "usage: /rounds N" in str(app.query_one(PromptError).render())
        assert _prompt(app).text == "/rounds many"
        assert app.session.rounds == 3


async def test_a_bracketed_paste_of_many_lines_stays_one_prompt() -> None:
    provider = ScriptedProvider(["Got it."])
    app = make_app(provider=provider)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        prompt = _prompt(app)
        app.post_message(Paste("line one\nline two\n\nline four"))  # as the driver delivers it
        await pilot.pause()
        assert prompt.text == "line one\nline two\n\nline four"
        await pilot.press("enter")
        await _settle(app, pilot)
        assert len(provider.requests) == 1
        assert provider.requests[0].messages[-1].text == "line one\nline two\n\nline four"


async def test_typing_never_lays_out_the_screen_and_an_image_mention_shows_its_chip(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png_bytes())
    app = make_app(workdir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        chips = app.query_one(PromptChips)
        layouts: list[object] = []
        app.screen.screen_layout_refresh_signal.subscribe(app.screen, layouts.append)
        for key in "look at this":  # each edit checks for image mentions: a layout would be a
            await pilot.press(key if key != " " else "space")  # frame of the whole screen
            await pilot.pause()
        assert layouts == []
        assert not chips.display

        await pilot.press("space", *"@shot.png")
        await pilot.pause()
        assert chips.display and "shot.png" in str(chips.render())
        await pilot.press(*["backspace"] * len("@shot.png"))
        await pilot.pause()
        assert not chips.display


async def test_a_big_image_chip_says_resized_and_the_request_carries_it_resized(tmp_path: Path) -> None:
    from tests.session.test_images import noise_png

    (tmp_path / "big.png").write_bytes(noise_png(1500, 1400))
    provider = ScriptedProvider(["Noise."])
    app = make_app(provider=provider, workdir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(app, pilot)
        await pilot.press(*"what is @big.png")
        await pilot.pause()
        assert "big.png · 6.3 MB · resized" in str(app.query_one(PromptChips).render())
        await _send(app, pilot, "")
        [image] = provider.requests[0].messages[-1].images
        assert len(base64.b64decode(image.data)) <= MAX_IMAGE_BYTES
        notices = [str(n.source) for n in app.query(Notice)]
        assert any("attached big.png (image, 6.3 MB, over the API's limits: resized to" in n for n in notices)


def test_escape_asked_about_before_the_prompt_is_mounted_is_not_offered() -> None:
    """A terminal's focus event at start-up refreshes the keys before the prompt exists."""
    from tui_assist.ui.screens.main import MainScreen

    assert MainScreen().check_action("idle_escape", ()) is False
