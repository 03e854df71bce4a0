"""What the terminal is told when nobody is looking: a notification, a bell, the window title.

A turn that ends, or an approval that waits, while the terminal is unfocused (or after a turn of
more than `notify_after` seconds) becomes a desktop notification: OSC 9 (iTerm2, WezTerm, Ghostty,
kitty), OSC 777 (VTE, urxvt) or a plain bell, wrapped for tmux's passthrough when inside tmux.
The window title says `tui-assist · STATE` throughout. Nothing fires while the user is looking.

This module only decides and spells the escape sequences; the UI writes them (ui/terminal_signals.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

NotifyMode = Literal["auto", "osc9", "osc777", "bell", "off"]
Channel = Literal["osc9", "osc777", "bell", "off"]

APP = "tui-assist"
BEL = "\x07"
ESC = "\x1b"
PUSH_TITLE, POP_TITLE = f"{ESC}[22;2t", f"{ESC}[23;2t"
"""xterm's title stack: the title before ours comes back at exit."""

_OSC9_TERMINALS = frozenset({"iTerm.app", "WezTerm", "ghostty"})
_TEXT_LIMIT = 200


def channel_for(mode: NotifyMode, env: Mapping[str, str]) -> Channel:
    """The way to notify: `mode` itself, or for `auto` what the terminal in `env` understands."""
    if mode != "auto":
        return mode
    term = env.get("TERM", "")
    if (
        env.get("TERM_PROGRAM") in _OSC9_TERMINALS
        or env.get("LC_TERMINAL") == "iTerm2"  # survives ssh and tmux, where TERM_PROGRAM does not
        or "KITTY_WINDOW_ID" in env
        or term == "xterm-kitty"
    ):
        return "osc9"
    if "VTE_VERSION" in env or term.startswith("rxvt"):
        return "osc777"
    return "bell"


def in_tmux(env: Mapping[str, str]) -> bool:
    """Whether the program runs inside tmux (its escape sequences need the passthrough wrapper)."""
    return bool(env.get("TMUX"))


def tmux_wrap(sequence: str) -> str:
    """`sequence` in tmux's DCS passthrough (needs `set -g allow-passthrough on`, tmux ≥ 3.3)."""
    return f"{ESC}Ptmux;{sequence.replace(ESC, ESC + ESC)}{ESC}\\"


def plain(text: str, limit: int = _TEXT_LIMIT) -> str:
    """`text` on one line, without control characters (they would end the sequence early)."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def notification(channel: Channel, title: str, body: str, *, tmux: bool = False) -> str:
    """The escape sequence that notifies `title: body` through `channel` ("" for `off`).

    A bell is never wrapped: tmux forwards a pane's bell itself (and marks the window).
    """
    title, body = plain(title), plain(body)
    match channel:
        case "osc9":
            sequence = f"{ESC}]9;{title}: {body}{BEL}"
        case "osc777":  # `;` separates its fields
            sequence = f"{ESC}]777;notify;{title.replace(';', ',')};{body.replace(';', ',')}{BEL}"
        case "bell":
            return BEL
        case "off":
            return ""
    return tmux_wrap(sequence) if tmux else sequence


def title_sequence(state: str) -> str:
    """OSC 2: the window title `tui-assist · STATE` (tmux shows it as the pane's title)."""
    return f"{ESC}]2;{APP} · {plain(state, 60)}{BEL}"


@dataclass
class TerminalSignals:
    """Decides, from focus and timing, what to tell the terminal; each method returns what to write.

    Focus is assumed until the terminal reports otherwise (not every terminal reports it: then
    only `notify_after` applies).
    """

    mode: NotifyMode = "auto"
    notify_after: float = 20.0
    """A turn that ran longer notifies even when focused; an approval waiting longer does too."""
    env: Mapping[str, str] = field(default_factory=lambda: dict[str, str]())
    clock: Callable[[], float] = time.monotonic
    focused: bool = True
    state: str = "idle"
    _turn_started: float | None = None
    _away_state: bool = False
    """The title shows how a turn ended while the user was away; it returns to `idle` on focus."""
    _approval_told: bool = False

    @property
    def channel(self) -> Channel:
        """How to notify here (`auto` resolved against `env`)."""
        return channel_for(self.mode, self.env)

    def _title(self, state: str) -> str:
        self.state = state
        return title_sequence(state)

    def _notify(self, body: str) -> str:
        return notification(self.channel, APP, body, tmux=in_tmux(self.env))

    def focus_changed(self, focused: bool) -> str:
        """The terminal gained or lost focus."""
        self.focused = focused
        if focused and self._away_state:
            self._away_state = False
            return self._title("idle")
        return ""

    def turn_started(self) -> str:
        """A turn began: the title says `running`."""
        self._turn_started = self.clock()
        self._away_state = False
        return self._title("running")

    def turn_ended(self, outcome: str, summary: str = "") -> str:
        """A turn ended with `outcome` (`answered`, `error`, ...); `summary` is its answer's start."""
        started, self._turn_started = self._turn_started, None
        took = 0.0 if started is None else self.clock() - started
        if self.mode == "off" or (self.focused and took < self.notify_after):
            return self._title("idle")
        self._away_state = not self.focused
        word = {"answered": "done", "cancelled": "cancelled"}.get(outcome, outcome or "done")
        body = f"{word}: {summary}" if summary else f"turn {word}"
        return self._title(word) + self._notify(body)

    def approval_waiting(self, summary: str) -> str:
        """An approval dialog opened; unfocused, the user is told now (else see `approval_overdue`)."""
        title = self._title("approval")
        self._approval_told = self.mode != "off" and not self.focused
        if not self._approval_told:
            return title
        return title + self._notify(f"approval needed: {summary}")

    def approval_overdue(self, summary: str) -> str:
        """The approval still waits `notify_after` seconds after it opened, focused or not."""
        if self.mode == "off" or self.state != "approval" or self._approval_told:
            return ""
        self._approval_told = True
        return self._notify(f"approval needed: {summary}")

    def approval_answered(self) -> str:
        """The dialog closed: back to `running`."""
        return self._title("running") if self.state == "approval" else ""
