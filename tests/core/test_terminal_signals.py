"""What the terminal is told, decided without a terminal: focus, timing, the sequences themselves."""

from __future__ import annotations

import pytest

from tui_assist.core.terminal_signals import (
    TerminalSignals,
    channel_for,
    notification,
    title_sequence,
    tmux_wrap,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("env", "channel"),
    [
        ({"TERM_PROGRAM": "iTerm.app"}, "osc9"),
        ({"TERM_PROGRAM": "tmux", "LC_TERMINAL": "iTerm2"}, "osc9"),
        ({"TERM": "xterm-kitty"}, "osc9"),
        ({"VTE_VERSION": "7600"}, "osc777"),
        ({"TERM": "xterm-256color"}, "bell"),
    ],
)
def test_auto_picks_what_the_terminal_understands(env: dict[str, str], channel: str) -> None:
    assert channel_for("auto", env) == channel
    assert channel_for("bell", {"TERM_PROGRAM": "iTerm.app"}) == "bell"  # a chosen mode stays


def test_the_sequences() -> None:
    assert notification("osc9", "tui-assist", "done") == "\x1b]9;tui-assist: done\x07"
    assert notification("osc777", "tui-assist", "a;b") == "\x1b]777;notify;tui-assist;a,b\x07"
    assert notification("bell", "t", "b", tmux=True) == "\x07"  # tmux forwards a bell itself
    assert notification("off", "t", "b") == ""
    assert title_sequence("running") == "\x1b]2;tui-assist · running\x07"


def test_tmux_gets_the_passthrough_wrapper_with_escapes_doubled() -> None:
    wrapped = notification("osc9", "t", "done", tmux=True)
    assert wrapped == "\x1bPtmux;\x1b\x1b]9;t: done\x07\x1b\\"
    assert tmux_wrap("\x1b]9;x\x07") == wrapped.replace("t: done", "x")


def test_control_characters_cannot_end_the_sequence_early() -> None:
    sequence = notification("osc9", "tui-assist", "line one\nline\x07two\x1b]2;pwned")
    assert sequence.count("\x07") == 1 and sequence.count("\x1b") == 1


def test_nothing_fires_while_the_user_looks() -> None:
    clock = Clock()
    signals = TerminalSignals(mode="osc9", clock=clock)
    assert signals.turn_started() == title_sequence("running")
    clock.now += 5
    assert signals.turn_ended("answered", "hi") == title_sequence("idle")


def test_a_turn_that_ends_while_unfocused_notifies_and_the_title_waits_for_focus() -> None:
    signals = TerminalSignals(mode="osc9", clock=Clock())
    signals.turn_started()
    signals.focus_changed(False)
    written = signals.turn_ended("answered", "The answer is 42.")
    assert written == title_sequence("done") + "\x1b]9;tui-assist: done: The answer is 42.\x07"
    assert signals.focus_changed(True) == title_sequence("idle")
    assert signals.focus_changed(True) == ""


def test_a_long_turn_notifies_even_when_focused() -> None:
    clock = Clock()
    signals = TerminalSignals(mode="bell", notify_after=20, clock=clock)
    signals.turn_started()
    clock.now += 21
    assert signals.turn_ended("error", "boom").endswith("\x07")


def test_an_approval_notifies_once_unfocused_or_when_overdue() -> None:
    signals = TerminalSignals(mode="osc9", clock=Clock())
    signals.turn_started()
    assert signals.approval_waiting("bash: ls") == title_sequence("approval")  # focused: title only
    assert "approval needed: bash: ls" in signals.approval_overdue("bash: ls")
    assert signals.approval_overdue("bash: ls") == ""  # told once
    assert signals.approval_answered() == title_sequence("running")
    signals.focus_changed(False)
    assert "approval needed" in signals.approval_waiting("bash: rm x")
    assert signals.approval_overdue("bash: rm x") == ""


def test_off_only_keeps_the_title() -> None:
    clock = Clock()
    signals = TerminalSignals(mode="off", clock=clock)
    signals.turn_started()
    signals.focus_changed(False)
    clock.now += 100
    assert signals.turn_ended("answered") == title_sequence("idle")
    assert signals.approval_waiting("x") == title_sequence("approval")
