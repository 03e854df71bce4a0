"""What the chat is given: the screen its controller, the slash commands' handlers a `CommandContext`.

The handlers run on a context alone, no app, no screen: the session and its controller are real
(a scripted provider, no store); what only the chat can do is a fake that records what it was
asked.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.session.test_controller import RecordingHost, _replies, _session
from tui_assist.session.chat import ChatSession
from tui_assist.session.commands import SLASH, CommandError
from tui_assist.session.controller import Host, TurnController
from tui_assist.session.runs import Launcher
from tui_assist.session.slash_commands import SlashCommand
from tui_assist.ui.command_bindings import BOUND, bound_commands, command_bindings
from tui_assist.ui.command_context import CommandContext, ScreenContext
from tui_assist.ui.screens.main import MainScreen
from tui_assist.ui.slash_commands import HANDLERS


@dataclass
class FakeContext:
    """A `CommandContext` that records what a handler asked of the chat."""

    session: ChatSession
    controller: TurnController
    theme_names: Sequence[str] = ("calm", "textual-dark")
    theme: str = "calm"
    notices: list[tuple[str, str | None, bool]] = field(default_factory=list)
    toasts: list[str] = field(default_factory=list)
    asked: list[tuple[str, object]] = field(default_factory=list)

    def add_notice(self, markdown: str, *, classes: str | None = None, at_top: bool = False) -> None:
        self.notices.append((markdown, classes, at_top))

    def notify(self, message: str, *, severity: Any = "information", timeout: float | None = None) -> None:
        self.toasts.append(message)

    def commands(self) -> list[SlashCommand]:
        return list(SLASH.commands)

    def keys(self) -> list[tuple[str, str, str]]:
        return [("ctrl+r", "Refine", "toggle-refine")]

    def switch_theme(self, name: str) -> None:
        self.asked.append(("switch_theme", name))

    def set_refine(self, on: bool) -> None:
        self.asked.append(("set_refine", on))

    def set_rounds(self, rounds: int) -> None:
        self.asked.append(("set_rounds", rounds))

    def model_switched(self, model: str) -> None:
        self.asked.append(("model_switched", model))

    def meter_changed(self) -> None:
        self.asked.append(("meter_changed", None))

    def submit(self, text: str) -> None:
        self.asked.append(("submit", text))

    def new_conversation(self) -> None:
        self.asked.append(("new_conversation", None))

    def resume_conversation(self, query: str) -> None:
        self.asked.append(("resume_conversation", query))

    def open_rewind(self) -> None:
        self.asked.append(("open_rewind", None))

    def push_screen(self, screen: Any) -> None:
        self.asked.append(("push_screen", type(screen).__name__))

    @contextmanager
    def suspend(self) -> Iterator[None]:
        self.asked.append(("suspend", None))
        yield

    def exit(self) -> None:
        self.asked.append(("exit", None))


def _context(tmp_path: Path) -> FakeContext:
    session = _session(tmp_path, _replies("unused"))
    return FakeContext(session, TurnController(session, RecordingHost()))


def _run(context: CommandContext, name: str, args: str = "") -> None:
    assert HANDLERS[name](context, args) is None  # a plain handler: it has run


def test_the_fake_and_the_screens_context_have_every_verb_of_the_protocol() -> None:
    wanted = {name for name in dir(CommandContext) if not name.startswith("_")}
    assert wanted - set(dir(ScreenContext)) == set()
    assert wanted - set(dir(FakeContext)) - {f for f in FakeContext.__dataclass_fields__} == set()


def test_every_handler_is_given_a_context_not_the_screen() -> None:
    assert set(HANDLERS) == set(SLASH.names)
    for name, handler in HANDLERS.items():
        first = next(iter(inspect.signature(handler).parameters.values()))
        assert first.annotation == "CommandContext", name


def test_refine_rounds_and_theme_ask_the_chat_and_refuse_what_is_not_theirs(tmp_path: Path) -> None:
    context = _context(tmp_path)
    context.session.refine = True
    _run(context, "refine", "on")
    assert context.toasts == ["Refine is already ON"] and context.asked == []
    _run(context, "refine", "")
    _run(context, "rounds", "3")
    assert context.asked == [("set_refine", False), ("set_rounds", 3)]
    with pytest.raises(CommandError, match="usage: /refine"):
        _run(context, "refine", "maybe")
    _run(context, "theme", "")
    assert context.notices[-1][0].endswith("- `calm`  (in use)\n- `textual-dark`")
    with pytest.raises(CommandError, match="did you mean calm"):
        _run(context, "theme", "clam")
    _run(context, "theme", "textual-dark")
    assert context.asked[-1] == ("switch_theme", "textual-dark")


def test_help_lists_the_commands_and_the_keys_it_is_given_and_opens_at_its_start(tmp_path: Path) -> None:
    context = _context(tmp_path)
    _run(context, "help")
    [(text, _, at_top)] = context.notices
    assert at_top
    assert "/refine [on|off]" in text and "ctrl+r  Refine  toggle-refine" in text


def test_budget_cost_and_the_chats_verbs(tmp_path: Path) -> None:
    context = _context(tmp_path)
    _run(context, "budget", "0.5")
    assert context.session.max_budget_usd == 0.5
    assert context.asked == [("meter_changed", None)] and "0.5" in context.toasts[-1]
    _run(context, "cost")
    assert context.notices[-1][0] == "**Cost** · no model calls in this session yet."
    for name, args in (("new", ""), ("resume", "bugs"), ("rewind", ""), ("quit", "")):
        _run(context, name, args)
    assert context.asked[1:] == [
        ("new_conversation", None),
        ("resume_conversation", "bugs"),
        ("open_rewind", None),
        ("exit", None),
    ]


def test_model_waits_for_the_provider_and_memory_checks_its_number(tmp_path: Path) -> None:
    context = _context(tmp_path)
    with pytest.raises(CommandError, match="still loading"):
        _run(context, "model", "claude-haiku-4-5")
    assert context.asked == []
    with pytest.raises(CommandError, match="no instruction files"):
        _run(context, "memory", "1")


async def test_an_async_handler_runs_through_the_controller(tmp_path: Path) -> None:
    context = _context(tmp_path)
    await context.session.load()
    pending = HANDLERS["compact"](context, "")
    assert pending is not None
    await pending
    assert context.notices == [
        ("Nothing to compact yet: the latest turn stays verbatim.", "-compacted", False)
    ]
    assert not context.controller.running


def test_every_bound_command_is_declared_and_every_binding_id_is_unique() -> None:
    declared = [command.name for command, _ in bound_commands()]
    assert set(declared) == set(BOUND)  # no binding for a command the table does not declare
    assert declared == list(BOUND)  # in the table's order, which the screen's keys follow
    ids = [binding.id for binding in command_bindings()]
    assert len(ids) == len(set(ids))
    assert [b.key for b in command_bindings()][:4] == ["ctrl+r", "escape", "escape", "shift+tab"]


def test_the_screen_is_given_its_controller_on_first_use_and_its_session_through_it(tmp_path: Path) -> None:
    session = _session(tmp_path, _replies("unused"))
    hosts: list[Host] = []

    def connect(host: Host, launcher: Launcher) -> TurnController:
        hosts.append(host)
        return TurnController(session, host, launcher=launcher)

    screen = MainScreen(connect=connect)
    assert not screen.running and screen.failed_prompt is None  # asked before the first frame
    assert hosts == []  # nothing built yet: the session is built after the first frame
    assert screen.session is session
    assert screen.controller is screen.controller and screen.controller.host is screen.host
    assert hosts == [screen.host]
    with pytest.raises(RuntimeError, match="no session"):
        _ = MainScreen().session
