"""What a slash command's handler is given: the session, its controller and the chat's few verbs.

A handler (`ui/slash_commands.py`) gets a `CommandContext`, not the screen, so it can only do
what a command does: read and change the session, start runs through the controller, say
something (a notice in the conversation, a toast), and ask the chat for the few things only it
can do (open a screen, a conversation or the rewind picker, send a prompt, show a setting). The
screen gives its handlers a `ScreenContext`; tests drive handlers with a fake.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.screen import Screen

    from tui_assist.session.chat import ChatSession
    from tui_assist.session.controller import TurnController
    from tui_assist.session.slash_commands import SlashCommand
    from tui_assist.ui.screens.main import MainScreen


class CommandContext(Protocol):
    """Exactly what the built-in commands' handlers use."""

    @property
    def session(self) -> ChatSession: ...

    @property
    def controller(self) -> TurnController:
        """The session's controller (a command's runs go through it; `running` says if one is busy)."""
        ...

    # -- saying something -------------------------------------------------------------------------

    def add_notice(self, markdown: str, *, classes: str | None = None, at_top: bool = False) -> None:
        """Show `markdown` in the conversation pane (`at_top`: scrolled to its start, for a long one)."""
        ...

    def notify(
        self, message: str, *, severity: SeverityLevel = "information", timeout: float | None = None
    ) -> None:
        """A toast."""
        ...

    # -- what only the chat can do ----------------------------------------------------------------

    def commands(self) -> list[SlashCommand]:
        """Every slash command: the built-ins, then the custom ones on disk."""
        ...

    def keys(self) -> list[tuple[str, str, str]]:
        """The chat's keys where the focus is now, the keymap applied: (keys, what, binding id)."""
        ...

    @property
    def theme_names(self) -> Sequence[str]: ...

    @property
    def theme(self) -> str: ...

    def switch_theme(self, name: str) -> None: ...

    def set_refine(self, on: bool) -> None:
        """Turn Refine on or off, show it, and remember it for the next start."""
        ...

    def set_rounds(self, rounds: int) -> None: ...

    def model_switched(self, model: str) -> None:
        """Show the model the next turns use."""
        ...

    def meter_changed(self) -> None:
        """Show the meter again (its spend cap changed)."""
        ...

    def submit(self, text: str) -> None:
        """Send `text` as if typed (it goes to the controller)."""
        ...

    def new_conversation(self) -> None: ...

    def resume_conversation(self, query: str) -> None:
        """The resume picker, filtered by `query`."""
        ...

    def open_rewind(self) -> None: ...

    def push_screen(self, screen: Screen[Any]) -> None: ...

    def suspend(self) -> AbstractContextManager[None]:
        """Hand the terminal over (to an editor) meanwhile (raises `SuspendNotSupported` if it can't)."""
        ...

    def exit(self) -> None:
        """Quit the app."""
        ...


class ScreenContext:
    """The main screen's `CommandContext`: each verb is the screen's own."""

    def __init__(self, screen: MainScreen) -> None:
        self._screen = screen

    @property
    def session(self) -> ChatSession:
        return self._screen.session

    @property
    def controller(self) -> TurnController:
        return self._screen.controller

    def add_notice(self, markdown: str, *, classes: str | None = None, at_top: bool = False) -> None:
        conversation = self._screen.conversation
        notice = conversation.add_notice(markdown, classes=classes)
        if at_top:
            # Taller than most screens: open it at its start, not at its end, where the pane's
            # anchor to the bottom would leave it.
            conversation.call_after_refresh(
                conversation.scroll_to_widget, notice, animate=False, top=True, immediate=True
            )

    def notify(
        self, message: str, *, severity: SeverityLevel = "information", timeout: float | None = None
    ) -> None:
        self._screen.notify(message, severity=severity, timeout=timeout)

    def commands(self) -> list[SlashCommand]:
        return self._screen.slash.all_commands()

    def keys(self) -> list[tuple[str, str, str]]:
        from tui_assist.ui.textual_private import binding_chain

        screen = self._screen
        keys: dict[str, tuple[list[str], str]] = {}
        for _, bindings in binding_chain(screen):
            for _, binding in bindings:
                if binding.id and binding.description:
                    shown, _ = keys.setdefault(binding.id, ([], binding.description))
                    if (key := screen.app.get_key_display(binding)) not in shown:
                        shown.append(key)
        return [(" / ".join(shown), what, binding_id) for binding_id, (shown, what) in keys.items()]

    @property
    def theme_names(self) -> Sequence[str]:
        return self._screen.tui_app.theme_names

    @property
    def theme(self) -> str:
        return self._screen.app.theme

    def switch_theme(self, name: str) -> None:
        self._screen.tui_app.switch_theme(name)

    def set_refine(self, on: bool) -> None:
        self._screen.set_refine(on)

    def set_rounds(self, rounds: int) -> None:
        self._screen.set_rounds(rounds)

    def model_switched(self, model: str) -> None:
        self._screen.status.model = model

    def meter_changed(self) -> None:
        self._screen.host.meter_changed()

    def submit(self, text: str) -> None:
        self._screen.submit(text)

    def new_conversation(self) -> None:
        self._screen.action_new_conversation()

    def resume_conversation(self, query: str) -> None:
        self._screen.action_resume_conversation(query=query)

    def open_rewind(self) -> None:
        self._screen.open_rewind()

    def push_screen(self, screen: Screen[Any]) -> None:
        self._screen.app.push_screen(screen)

    def suspend(self) -> AbstractContextManager[None]:
        return self._screen.app.suspend()

    def exit(self) -> None:
        self._screen.app.exit()
