from __future__ import annotations

from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.pilot import Pilot
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widgets import Static

from tui_assist.ui.widgets.conversation import Conversation
from tui_assist.ui.widgets.scrollbar import StripScrollBar


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Conversation()


def _textuals(bar: ScrollBar, crop: Region) -> list[Strip]:
    bar._styles_cache.clear()
    bar._dirty_regions.add(crop)
    return ScrollBar.render_lines(bar, crop)


def _rows(strips: list[Strip]) -> list[list[object]]:
    return [list(strip) for strip in strips]


async def _overflowing(app: _Host, pilot: Pilot[None]) -> Conversation:
    pane = app.query_one(Conversation)
    await pane.mount(Static("line\n" * 200))
    await pilot.pause()
    return pane


async def test_the_conversations_scrollbar_draws_the_rows_textuals_would() -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        bar = (await _overflowing(app, pilot)).vertical_scrollbar
        assert isinstance(bar, StripScrollBar) and bar.display
        whole = Region(0, 0, *bar.size)
        for step in range(120):
            bar.window_virtual_size = 40 + step * 3  # the thumb from half the bar to a sliver
            bar.position = step * 1.3 % (bar.window_virtual_size - bar.window_size)
            bar.mouse_over = step % 3 == 1
            bar.grabbed = bar.offset if step % 3 == 2 else None
            assert _rows(bar.render_lines(whole)) == _rows(_textuals(bar, whole)), step
        row = Region(0, 7, 1, 1)  # what the compositor asks for to find the style under the mouse
        assert _rows(bar.render_lines(row)) == _rows(_textuals(bar, row))

        app.theme = "textual-light"
        await pilot.pause()
        assert _rows(bar.render_lines(whole)) == _rows(_textuals(bar, whole))


async def test_clicking_the_scrollbar_below_its_thumb_pages_down() -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        pane = await _overflowing(app, pilot)
        pane.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        bar = pane.vertical_scrollbar
        await pilot.click(bar, offset=(0, bar.size.height - 2))
        await pilot.pause()
        assert pane.scroll_y >= pane.scrollable_content_region.height - 1
