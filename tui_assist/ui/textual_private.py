"""Every use of Textual's and Rich's private APIs, in one place.

Textual 8.2.8 and Rich 15.0.0 are pinned because of these. Each is here, with what it relies on,
and `tests/ui/test_textual_private.py` checks that upstream still has it: an upgrade that changes
one fails those tests rather than leaving the chat slower. Nothing else in `ui/` may touch a
private name of Textual or Rich (the same tests read `ui/` for one).

Public hooks are used where Textual has them: the prompt's key and paste handlers are `on_key` and
`on_paste` (Textual calls a class's public handler before its bases' private ones), the round
review's `CollapsibleTitle` comes from `textual.widgets.collapsible`, and the footer's keys come
from `Screen.active_bindings`. For the rest it has none:

- `ScrollBar.renderer` replaces the bar's Rich renderable, but what `StripScrollBar` saves is the
  trip of each row through the widget's styles, which a renderer still makes.
- `App.PAUSE_GC_ON_SCROLL` pauses the collector while a scroll animates, not while an answer
  streams (see `streaming_markdown`).
- `Screen.active_bindings` leaves out the keys of disabled actions and keys shadowed by nearer
  ones, which `/help` lists (it reads `binding_chain`).
- `Footer.compose` makes its keys of `textual.widgets._footer.FooterKey`, which Textual does not
  export: the footer's keys are made `LaidOutFooterKey`s as they are composed.
- `Widget.refresh(layout=True)` asks its screen for the layout only once the widget is idle:
  `layout_now` asks at once (`Widget._check_refresh`).
- A screen renders through its `Compositor`, which for a repaint of a few rows renders whole the
  widgets around them: `CroppedCompositor` renders only the rows written.
- A screen's `Compositor` renders all it holds, a notification over the conversation too:
  `render_alone` lays a widget out in one of its own, to keep what the pane shows (see
  `pane_snapshot`).
- `App.bell` is the only public way to write to the terminal; notifications and the window
  title go through the driver as it does (`write_to_terminal`).

The same tests also name the public behaviour of Textual the chat relies on and an upgrade may
change: that no key of the command table is taken by the prompt's `TextArea` bindings, where a
press on a text's padding starts a selection, how `LaidOutSize` redeclares `virtual_size`, and the
theme variables Textual derives for our CSS. Which versions were tried: docs/architecture.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import _time
from textual._compositor import Compositor
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.screen import UPDATE_PERIOD, Screen, ScreenResultType
from textual.timer import EventTargetGone, Timer
from textual.widgets._footer import FooterKey

from tui_assist.ui.widgets.laid_out_size import LaidOutSize

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from markdown_it.token import Token
    from rich.markdown import Markdown
    from textual.app import App
    from textual.binding import BindingsMap, Keymap
    from textual.dom import DOMNode
    from textual.geometry import Size
    from textual.scrollbar import ScrollBar
    from textual.strip import Strip
    from textual.widget import Widget
    from textual.widgets import Footer

# -- keys ------------------------------------------------------------------------------------------


def keymap(app: App[Any]) -> Keymap:
    """The keymap `App.set_keymap` installed (binding id → keys); Textual keeps it private."""
    return app._keymap


def keymapped_bindings(node: DOMNode) -> BindingsMap:
    """A copy of `node`'s own bindings with the app's keymap applied, as Textual resolves them."""
    bindings = node._bindings.copy()
    if installed := keymap(node.app):
        bindings.apply_keymap(installed)
    return bindings


def binding_chain(screen: Screen[Any]) -> list[tuple[DOMNode, BindingsMap]]:
    """Every node's bindings from the focused widget out to the app, the keymap applied.

    Unlike `Screen.active_bindings`, this keeps the keys of disabled actions and keys that a
    nearer binding shadows.
    """
    return screen._binding_chain


def show_footer_keys_now(footer: Footer) -> None:
    """Let `footer` build its keys without waiting for the refresh after its first bindings."""
    footer._bindings_ready = True


class LaidOutFooterKey(LaidOutSize, FooterKey):
    """A footer key whose virtual size only the layout sets (see `LaidOutSize`)."""


def laid_out_footer_keys(composed: Iterable[Widget], footer: Footer) -> Iterator[Widget]:
    """`Footer.compose`'s widgets, its keys made `LaidOutFooterKey`s: Textual makes them of its
    private module's `FooterKey`, the same class whatever the footer (it exports no subclass hook).

    A key's `compact` starts true and is bound to the footer's: mounted, each key was restyled
    twice (its `-compact` class added, then removed). Each bound key starts with the footer's
    value, so the binding only confirms it. The palette's key is not bound (Textual leaves it
    compact at any width) and keeps its default: given the footer's, it drew wider than before.
    """
    for widget in composed:
        if type(widget) is FooterKey:
            widget.__class__ = LaidOutFooterKey
            if not widget.has_class("-command-palette"):
                widget.set_reactive(FooterKey.compact, footer.compact)
                widget.set_class(footer.compact, "-compact", update=False)
        yield widget


def prune_detached_watchers(node: DOMNode, attribute: str) -> None:
    """Drop the watchers of `node`'s reactive `attribute` that belong to removed nodes.

    Textual drops a removed node's watcher only when the attribute next changes.
    """
    watchers = getattr(node, "__watchers", {}).get(attribute)
    if watchers:
        watchers[:] = [(owner, callback) for owner, callback in watchers if owner.is_attached]


# -- the terminal ----------------------------------------------------------------------------------


def write_to_terminal(app: App[Any], sequence: str) -> None:
    """Write escape `sequence` (a notification, the title) to the terminal, as `App.bell` does.

    Textual offers only the bell publicly; its driver's `write` goes in order with its frames.
    """
    if sequence and not app.is_headless and app._driver is not None:
        app._driver.write(sequence)


# -- Rich's Markdown -------------------------------------------------------------------------------


def rich_markdown(kind: type[Markdown], text: str, tokens: list[Token], code_theme: str) -> Markdown:
    """A Rich `Markdown` of `text` from tokens already parsed, set up as `Markdown.__init__` does.

    `__init__` makes a new markdown-it parser for each text; this takes the tokens of a shared one.
    Hyperlinks off, no justification, no inline-code lexer.
    """
    markdown = kind.__new__(kind)
    markdown.markup = text
    markdown.parsed = tokens
    markdown.code_theme = code_theme
    markdown.justify = None
    markdown.style = "none"
    markdown.hyperlinks = False
    markdown.inline_code_lexer = None
    markdown.inline_code_theme = code_theme
    return markdown


# -- frames drawn when asked for -------------------------------------------------------------------


def frame_wait(last_start: float, now: float, period: float = UPDATE_PERIOD) -> float:
    """Seconds a frame asked for at `now` waits, the last one having started at `last_start`."""
    return max(0.0, last_start + period - now)


class FrameTimer(Timer):
    """A paused-until-asked timer that ticks at once when asked, but not twice within its interval
    (no repeat count and no reset: the screen's update timer uses neither).

    Textual draws a screen's frames from an interval timer that ticks on a fixed grid, and after
    a frame skips to the second grid point ahead: a frame asked for up to two periods after the
    last one waits for that grid point, a different lateness each time. This keeps Textual's limit
    (a frame starts at least one period after the one before) and drops the grid.
    """

    async def _run(self) -> None:
        last_start = float("-inf")
        count = 0
        while True:
            await self._active.wait()  # a frame is asked for (`resume`; the tick pauses it)
            wait = frame_wait(last_start, _time.get_time(), self._interval)
            if wait:
                await _time.sleep(wait)
            last_start = _time.get_time()
            count += 1
            try:
                await self._tick(next_timer=last_start, count=count)
            except EventTargetGone:
                break


def paced_update_timer(screen: Screen[Any]) -> Timer:
    """A started `FrameTimer` for `screen`'s updates, as Textual's `Screen._update_timer` makes its own."""
    timer = FrameTimer(
        screen, UPDATE_PERIOD, name="screen_update", callback=screen._on_timer_update, pause=True
    )
    timer._start()
    screen._timers.add(timer)  # stopped with the screen, as `set_interval` arranges
    return timer


class CroppedCompositor(Compositor):
    """A `Compositor` whose partial updates render only the rows they write.

    For an update of a few rows, Textual renders every widget whose clip (its container's region)
    overlaps the update, and all of the rows of each widget shown whole: each growth of a streamed
    answer rendered the status bar, the footer, the prompt and the side panel, and every row of
    the screen's containers. Only the rows of the update are written (`ChopsUpdate`), and a
    widget's rows are rendered whole across (its cuts stay where the chops expect them).
    """

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if crop is None:
            yield from super()._get_renders()
            return
        for widget, (region, clip) in self.visible_widgets.items():
            shown = region.intersection(clip)
            written = shown.intersection(crop)
            if not written:
                continue
            rows = Region(shown.x, written.y, shown.width, written.height)
            yield region, rows, widget.render_lines(rows.translate((-region.x, -region.y)))


def layout_now(widget: Widget) -> None:
    """Lay `widget` out in the screen's next frame, asked for now rather than when it is next idle.

    `refresh(layout=True)` tells the screen from the widget's idle handler (`_check_refresh`); a
    repaint another widget asked for meanwhile starts a frame without the layout, and as a frame
    starts at most once a period, the layout waited a period more (a finished answer's last lines
    waited behind the status bar's change at the turn's end).
    """
    widget.refresh(layout=True)
    widget._check_refresh()


def render_alone(widget: Widget) -> list[Strip]:
    """The lines `widget` and all it holds show on screen, laid out as the root of a compositor of
    its own: without what overlays it there (a notification, a tooltip), and at its scroll."""
    compositor = Compositor()
    compositor.reflow(widget, widget.outer_size)
    return compositor.render_strips()


class PacedScreen(Screen[ScreenResultType]):
    """A screen whose frames are drawn by a `FrameTimer` (as soon as asked for, at most one a
    period) and rendered by a `CroppedCompositor`."""

    _frame_timer: Timer | None = None

    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name, id, classes)
        self._compositor = CroppedCompositor()

    @property
    def _update_timer(self) -> Timer:
        if self._frame_timer is None:
            self._frame_timer = paced_update_timer(self)
        return self._frame_timer


# -- the conversation's scrollbar ------------------------------------------------------------------


class StripBarVerticalScroll(VerticalScroll):
    """A `VerticalScroll` whose scrollbar is a `StripScrollBar`, repainted with its layout.

    Textual makes the scrollbar in its `vertical_scrollbar` property, and repaints it a frame after
    the layout that moved its thumb: `refresh()` marks it dirty at once and asks the screen for the
    repaint with a message. `_scroll_update` runs inside that layout, which repaints the widget (its
    size changed) and so the dirty scrollbar in it; the message would only add a frame to each
    growth of a streamed answer.
    """

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        if self._vertical_scrollbar is None:
            from tui_assist.ui.widgets.scrollbar import StripScrollBar

            self._vertical_scrollbar = StripScrollBar(thickness=self.scrollbar_size_vertical)
            self._vertical_scrollbar.display = False
            self.app._start_widget(self, self._vertical_scrollbar)
        return self._vertical_scrollbar

    def _scroll_update(self, virtual_size: Size) -> None:
        super()._scroll_update(virtual_size)
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar._repaint_required = False
