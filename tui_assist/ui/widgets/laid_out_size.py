"""A widget whose virtual size only Textual's layout sets: one layout per growth, not two."""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive


class LaidOutSize:
    """Mixin for a widget whose virtual size only Textual's layout sets (its content's extent).

    Textual's `virtual_size` asks for another layout whenever it changes, but a layout is what
    changes it: each time a streamed answer grows, the answer, its turn and the scrolling pane
    would be laid out and the whole pane repainted a second time, a frame later, to the same
    result (half of a growth's cost). Widgets that take their virtual size from the layout alone
    can drop that request; their watchers (`watch_virtual_size`) still run.
    """

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), repaint=False)
