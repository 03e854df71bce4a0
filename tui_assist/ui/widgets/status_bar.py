"""The status bar: running state, Refine and its round budget, model, context fill, tokens, cost, workdir.

Refine comes first so that it stays visible however narrow the terminal is.
"""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tui_assist.core.conversation import Usage


def _count(value: int) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1_000:
        return f"{value / 1000:.1f}k"
    return str(value)


def _home(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


_MODE_LABELS = {"default": "ask", "accept-edits": "edits ok", "plan": "plan", "bypass": "bypass"}
"""The approval mode as the status bar says it (`default` asks before side-effecting calls)."""


def _context(fill: float | None) -> tuple[tuple[str, str], ...]:
    """` ctx 34%`, coloured as it nears the point where the history is compacted."""
    if fill is None:
        return ()
    style = "$error bold" if fill >= 0.8 else "$warning" if fill >= 0.6 else "$foreground 70%"
    return ((f" ctx {fill:.0%}", style),)


class StatusBar(Widget):
    """One line of session state, docked at the bottom."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    """

    refine: reactive[bool] = reactive(False)
    rounds: reactive[int] = reactive(3)
    model: reactive[str] = reactive("")
    state: reactive[str] = reactive("idle")
    usage: reactive[Usage] = reactive(Usage, always_update=True)
    cost: reactive[float | None] = reactive(0.0)
    context: reactive[float | None] = reactive(None)
    """How full the model's context was at the last request (0..1), None before any."""
    workdir: reactive[Path] = reactive(Path.cwd)
    mode: reactive[str] = reactive("default")
    """The approval mode (shift+tab cycles it)."""
    sandboxed: reactive[bool | None] = reactive(None)
    """Whether bash runs in the OS sandbox (None: not known yet)."""

    def render(self) -> Content:
        sep = (" │ ", "$foreground 40%")
        state_style = {"idle": "$foreground 60%", "running": "$warning bold", "loading": "$accent"}.get(
            self.state, "$error bold"
        )
        refine = (
            (f" Refine ON ×{self.rounds} ", "$background on $success bold")
            if self.refine
            else (" Refine OFF ", "$foreground 70% on $boost")
        )
        usage = self.usage
        tokens = f"in {_count(usage.input_tokens)} out {_count(usage.output_tokens)}"
        tokens += f" cache {_count(usage.cache_read_input_tokens)}"
        cost = "$–" if self.cost is None else f"${self.cost:.4f}"
        icon = {"running": "● ", "idle": "○ ", "loading": "◌ "}.get(self.state, "✗ ")
        mode_style = {"default": "$foreground 70%", "plan": "$accent bold"}.get(self.mode, "$warning bold")
        sandbox: tuple[str, str] | str = ""
        if self.sandboxed is not None:
            sandbox = (" sandbox", "$success") if self.sandboxed else (" no sandbox", "$warning")
        return Content.assemble(
            (icon + self.state, state_style),
            " ",
            refine,
            " ",
            (_MODE_LABELS.get(self.mode, self.mode), mode_style),
            sandbox,
            sep,
            (self.model, "$primary"),
            *_context(self.context),
            sep,
            tokens,
            " ",
            (cost, "$accent"),
            sep,
            (_home(self.workdir), "$foreground 60%"),
        )
