"""The status bar: running state, Refine and its round budget, model, context fill, tokens, cost, workdir.

Refine comes first so that it stays visible however narrow the terminal is. The line is fitted to
the width, never cut at the edge: the token counts shorten first, then the model name, then the
workdir loses its leading folders (it keeps its last ones, after a "…").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tui_assist.core.text import clip, spend_text, token_count

if TYPE_CHECKING:
    from tui_assist.core.conversation import Usage

_SEP = (" │ ", "$foreground 40%")


def _home(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def _context(fill: float | None) -> tuple[tuple[str, str], ...]:
    """` ctx 34%`, coloured as it nears the point where the history is compacted."""
    if fill is None:
        return ()
    style = "$error bold" if fill >= 0.8 else "$warning" if fill >= 0.6 else "$foreground 70%"
    return ((f" ctx {fill:.0%}", style),)


def tokens_text(usage: Usage | None, *, short: bool = False) -> str:
    """Tokens in and out, and the cache's reads and writes (`short`: fewer words; None: none yet)."""
    if usage is None:
        given = got = read = written = token_count(0)
    else:
        given, got = token_count(usage.input_tokens), token_count(usage.output_tokens)
        read, written = (
            token_count(usage.cache_read_input_tokens),
            token_count(usage.cache_creation_input_tokens),
        )
    if short:
        return f"↑{given} ↓{got} cache r{read} w{written}"
    return f"in {given} out {got} cache read {read} write {written}"


def left_clip(text: str, limit: int) -> str:
    """`text` cut to `limit` cells from the left, marked with "…"; a path is cut at a folder."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"
    tail = text[len(text) - limit + 1 :]
    cut = tail.find("/")
    return "…" + (tail[cut:] if 0 <= cut < len(tail) - 1 else tail)


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
    usage: reactive[Usage | None] = reactive(None, always_update=True)
    """The session's tokens; None before the session has loaded (the first frame imports no core)."""
    cost: reactive[float | None] = reactive(0.0)
    cost_cap: reactive[float | None] = reactive(None)
    user_line: reactive[str] = reactive("")
    """The user's `[status_line]` command's first line (empty: none)."""
    """The spend cap in USD (the cost shows as `$spent/$cap`); None: no cap."""
    context: reactive[float | None] = reactive(None)
    """How full the model's context was at the last request (0..1), None before any."""
    workdir: reactive[Path] = reactive(Path.cwd)
    mode: reactive[str] = reactive("default")
    """The approval mode (shift+tab cycles it)."""
    sandboxed: reactive[bool | None] = reactive(None)
    """Whether bash runs in the OS sandbox (None: not known yet)."""

    def render(self) -> Content:
        state_style = {"idle": "$foreground 60%", "running": "$warning bold", "loading": "$accent"}.get(
            self.state, "$error bold"
        )
        refine = (
            (f" Refine ON ×{self.rounds} ", "$background on $success bold")
            if self.refine
            else (" Refine OFF ", "$foreground 70% on $boost")
        )
        icon = {"running": "● ", "idle": "○ ", "loading": "◌ "}.get(self.state, "✗ ")
        cost = spend_text(self.cost, self.cost_cap)
        width = self.content_region.width or 200
        mode_style = {"default": "$foreground 70%", "plan": "$accent bold"}.get(self.mode, "$warning bold")
        sandbox: Content = Content()
        if self.sandboxed is not None:
            label = ("sandbox", "$success") if self.sandboxed else ("no sandbox", "$warning")
            sandbox = Content.assemble(" ", label)
        head = Content.assemble(
            (icon + self.state, state_style),
            " ",
            refine,
            " ",
            (self.mode, mode_style),  # spelled as `--mode` and `/help` spell it
            sandbox,
        )
        context = Content.assemble(*_context(self.context))
        user_line = clip(self.user_line, 40)
        workdir = _home(self.workdir)
        # Fitted in steps (shorter token counts, then a shorter model name, then neither): the
        # first step that shows the whole workdir, else the first that keeps its last folder whole.
        last_folder = min(len(workdir), len(workdir.rstrip("/").rsplit("/", 1)[-1]) + 2)
        steps = ((False, 40), (True, 40), (True, 18), (True, 10), (True, 0), (None, 0))
        tokens, shown_model, fixed = "", "", 0
        for wanted in (len(workdir), last_folder):
            for short, model_limit in steps:
                tokens = "" if short is None else tokens_text(self.usage, short=short) + " "
                shown_model = clip(self.model, model_limit) if model_limit else ""
                fixed = head.cell_length + context.cell_length + len(tokens) + len(cost) + 2 * len(_SEP[0])
                fixed += len(user_line) + len(_SEP[0]) if user_line else 0
                if shown_model or context.cell_length:  # their part has a separator of its own
                    fixed += len(shown_model) + len(_SEP[0])
                if width - fixed >= wanted:
                    break
            if width - fixed >= wanted:
                break
        room = max(1, width - fixed)
        parts: list[Content | tuple[str, str] | str] = [head, _SEP]
        if shown_model:
            parts += [(shown_model, "$primary"), context, _SEP]
        elif context.cell_length:  # the fill matters more than the model's name
            parts += [context, _SEP]
        parts += [tokens, (cost, "$accent"), _SEP]
        if user_line:
            parts += [(user_line, "$secondary"), _SEP]
        parts.append((left_clip(workdir, room), "$foreground 60%"))
        return Content.assemble(*parts)
