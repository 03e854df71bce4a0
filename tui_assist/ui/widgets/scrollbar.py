"""A vertical scrollbar that draws its rows straight to strips.

Textual's `ScrollBar` renders like any widget: its bar becomes a Rich renderable, and each row
goes through the widget's `StylesCache` (padding, borders, tint, opacity, filters). The
conversation's scrollbar renders again at every layout of a streamed answer (its thumb moves as
the answer grows), so that work is paid at every growth of the answer. A scrollbar has
none of those styles: this one builds the same rows from Textual's own bar (`render_bar`) with the
widget's base style, one strip per distinct row, and applies the app's line filters, as
`StylesCache` does. A scrollbar styled beyond that (tint, opacity) renders the usual way.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip

from tui_assist.ui.widgets.laid_out_size import LaidOutSize


class StripScrollBar(LaidOutSize, ScrollBar):
    """A vertical `ScrollBar` that renders its rows without the `StylesCache`, looking the same."""

    def __init__(self, *, thickness: int = 1) -> None:
        super().__init__(vertical=True, name="vertical", thickness=thickness)
        self._row_strips: dict[tuple[Segment, Style, int], Strip] = {}
        """A strip per distinct row (its segment, the widget's base style, the width): the bar
        repeats three rows (above, on and below the thumb), and a strip caches its filtered copies."""

    def render_lines(self, crop: Region) -> list[Strip]:
        styles = self.styles
        bar = self.render()
        if (
            styles.tint.a
            or styles.text_opacity != 1.0
            or self.opacity != 1.0
            or not isinstance(bar, ScrollBarRender)
            or not isinstance(bar.style, Style)
            or bar.style.color is None
            or bar.style.bgcolor is None
        ):
            return super().render_lines(crop)
        width, height = self.size
        segments = bar.render_bar(
            size=height,
            virtual_size=bar.virtual_size,
            window_size=bar.window_size,
            position=bar.position,
            thickness=width,
            back_color=bar.style.bgcolor,
            bar_color=bar.style.color,
        ).segments
        base_style = self.visual_style.rich_style
        filters = self.get_line_filters()
        background = self.background_colors[1]
        if len(self._row_strips) > 64:  # the bar's colours changed (hover, theme) many times
            self._row_strips.clear()
        strips: list[Strip] = []
        for segment in segments[crop.y : crop.bottom]:
            key = (segment, base_style, width)
            strip = self._row_strips.get(key)
            if strip is None:
                text, segment_style, _ = segment
                strip = self._row_strips[key] = Strip([Segment(text, base_style + segment_style)], width)
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            strips.append(strip)
        if crop.column_span != (0, width):
            strips = [strip.crop(*crop.column_span) for strip in strips]
        return strips
