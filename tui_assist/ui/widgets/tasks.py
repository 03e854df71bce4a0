"""The live tasks view: the session's background shells, one line each, redrawn once a second.

Why a one-second timer rather than a redraw per output chunk: ten shells printing constantly
would otherwise redraw the screen hundreds of times a second. The timer runs only while a shell
runs; a shell starting or ending redraws at once (`BackgroundShells.subscribe`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui_assist.core.text import clip
from tui_assist.session.tasks import runtime_text, task_line

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.timer import Timer

    from tui_assist.tools.background import BackgroundShells, ShellInfo

__all__ = ["TasksList", "TasksStrip"]

REFRESH_SECONDS = 1.0
STRIP_LINES = 3
"""Running shells the strip shows; more are counted (`/tasks` lists them all)."""


class TasksList(OptionList):
    """Every background shell (status, runtime, command, last line); the highlighted one is killable."""

    def __init__(self, shells: BackgroundShells | None, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.shells = shells
        self._timer: Timer | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def on_resize(self) -> None:
        self.redraw()

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
        width = max(20, self.size.width - 4)  # one line each: a wrapped line reads as two shells
        self.add_options(
            [Option(clip(task_line(info), width, fold=False), id=info.shell_id) for info in infos]
        )
        if infos:
            self.highlighted = min(keep if keep is not None else len(infos) - 1, len(infos) - 1)
        if self._timer is not None:
            if any(info.status == "running" for info in infos):
                self._timer.resume()
            else:
                self._timer.pause()


class TasksStrip(Static):
    """The running background shells above the status bar, one line each; hidden when none runs."""

    DEFAULT_CSS = """
    TasksStrip { height: auto; max-height: 4; padding: 0 1; color: $foreground 70%; display: none; }
    TasksStrip.-running { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__("", id=id)
        self.shells: BackgroundShells | None = None
        self._timer: Timer | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def on_mount(self) -> None:
        self._timer = self.set_interval(REFRESH_SECONDS, self.redraw, pause=True)

    def follow(self, shells: BackgroundShells | None) -> None:
        """Show `shells` (the session's, once loaded)."""
        if shells is None or self.shells is not None:
            return
        self.shells = shells
        self._unsubscribe = shells.subscribe(lambda info: self.redraw())
        self.redraw()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:  # the session ends after the screen: its shells' ends aren't drawn
            self._unsubscribe()

    def redraw(self) -> None:
        """Draw the running shells again; tick only while one runs."""
        running = [info for info in (self.shells.infos() if self.shells else []) if info.status == "running"]
        self.set_class(bool(running), "-running")
        if self._timer is not None:
            (self._timer.resume if running else self._timer.pause)()
        lines = [
            f"⚙ {info.shell_id} {runtime_text(info.runtime):>6}  {' '.join(info.command.split())[:40]}"
            + (f"  │ {info.last_line[:60]}" if info.last_line else "")
            for info in running[:STRIP_LINES]
        ]
        if len(running) > STRIP_LINES:
            lines.append(f"… {len(running) - STRIP_LINES} more (/tasks)")
        self.update("\n".join(lines))
