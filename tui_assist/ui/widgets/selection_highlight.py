"""The mouse text selection drawn over a line of strips (for widgets that draw with the line API)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget


def highlight_span(line: Strip, start: int, end: int, style: Style) -> Strip:
    """`line` with the characters from `start` to `end` (-1: its end) drawn in `style`."""
    text = line.text
    left = cell_len(text[:start])
    right = cell_len(text[:end] if end != -1 else text.rstrip())
    if right <= left:
        return line
    selected = line.crop(left, right)
    selected = Strip(Segment.apply_style(selected, post_style=style), selected.cell_length)
    return Strip.join([line.crop(0, left), selected, line.crop(right, line.cell_length)])


def selection_style(widget: Widget) -> Style:
    """The style of selected text in `widget` (its screen's `screen--selection`)."""
    # Not `get_component_rich_style`: Rich has no transparent colour, and the default selection
    # foreground is transparent (keep the text's colour), which Rich would turn into the
    # background colour and hide the text.
    styles = widget.screen.get_component_styles("screen--selection")
    background = widget.background_colors[1] + styles.background
    color = styles.color
    return Style(bgcolor=background.rich_color, color=color.rich_color if color.a > 0 else None)
