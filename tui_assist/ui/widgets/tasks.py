"""The live tasks view: the session's background shells, one line each, redrawn once a second.

Why a one-second timer rather than a redraw per output chunk: ten shells printing constantly
would otherwise redraw the screen hundreds of times a second. The timer runs only while a shell
runs; a shell starting or ending redraws at once (`BackgroundShells.subscribe`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_assist.session.tasks import task_line

if TYPE_CHECKING:
    from textual.timer import Timer

    from tui_assist.tools.background import BackgroundShells, ShellInfo

__all__ = ["TasksList"]

REFRESH_SECONDS = 1.0


class TasksList(OptionList):
    """Every background shell (status, runtime, command, last line); the highlighted one is killable."""

    def __init__(self, shells: BackgroundShells | None, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.shells = shells
        self._timer: Timer | None = None
        self._unsubscribe = None

    def on_mount(self) -> None:
        if self.shells is not None:
            self._unsubscribe = self.shells.subscribe(self._changed)
        self._timer = self.set_interval(REFRESH_SECONDS, self.redraw, pause=True)
        self.redraw()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def _changed(self, info: ShellInfo) -> None:
        self.redraw()

    @property
    def highlighted_id(self) -> str | None:
        """The highlighted shell's id."""
        if self.highlighted is None:
            return None
        return self.get_option_at_index(self.highlighted).id

    def redraw(self) -> None:
        """Draw every shell's line again, keeping the highlight; tick only while one runs."""
        infos = self.shells.infos() if self.shells is not None else []
        keep = self.highlighted
        self.clear_options()
        if not infos:
            self.add_option(Option("no background shells", disabled=True))
        self.add_options([Option(task_line(info), id=info.shell_id) for info in infos])
        if infos:
            self.highlighted = min(keep if keep is not None else len(infos) - 1, len(infos) - 1)
        if self._timer is not None:
            if any(info.status == "running" for info in infos):
                self._timer.resume()
            else:
                self._timer.pause()
