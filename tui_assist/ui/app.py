"""The Textual app: themes, keymap, the command palette and the main screen.

Start-up is kept light on purpose: this module imports Textual and the core only. The Anthropic
SDK, the tools and the store are loaded by the main screen after its first frame is painted.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Unpack

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import Provider
from textual.screen import Screen

from tui_assist.paths import data_dir, themes_dir
from tui_assist.session.config_source import DEFAULT_THEME, ConfigError, ConfigPreview, ConfigSource
from tui_assist.session.preferences import Preferences, for_this_run, preferences_path
from tui_assist.ui.screens.main import MainScreen, StartOptions
from tui_assist.ui.terminal_signals import TerminalSignalsGlue
from tui_assist.ui.textual_private import keymap
from tui_assist.ui.themes import discover_themes

if TYPE_CHECKING:
    from rich.console import RenderableType

    from tui_assist.core.terminal_signals import NotifyMode
    from tui_assist.session.chat import ChatSession
    from tui_assist.session.config import Settings
    from tui_assist.session.controller import Host, TurnController
    from tui_assist.session.parts import PartsOptions
    from tui_assist.session.runs import Launcher

StartScreen = Literal["chat", "explore"]


def _commands_provider() -> type[Provider]:
    from tui_assist.ui.commands import TuiAssistCommands  # loaded when the palette first opens

    return TuiAssistCommands


class TuiAssistApp(App[int]):
    """The chat assistant."""

    TITLE = "tui-assist"
    # The main screen is the default screen, whose own CSS_PATH Textual doesn't load: list it here.
    CSS_PATH = [themes_dir() / "base.tcss", Path(__file__).parent / "screens" / "main.tcss"]
    COMMANDS = App.COMMANDS | {_commands_provider}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
        # Not a priority: the focused widget (a selection in the prompt) and the screen (one in
        # the conversation) copy first, and skip when nothing is selected.
        Binding("ctrl+c", "interrupt_or_quit", "Interrupt / quit", id="interrupt-or-quit", show=False),
    ]

    def __init__(
        self,
        settings: Settings | ConfigSource,
        *,
        start: StartScreen = "chat",
        explorer_pace: float = 0.12,
        chat_start: StartOptions | None = None,
        **parts: Unpack[PartsOptions],
    ) -> None:
        """Build the app.

        Args:
            settings: Everything configurable (model, refine, theme, keymap, prices, workdir...), or
                its unvalidated source, which the session validates after the first paint.
            start: The screen shown first: the chat, or the Workflow Explorer above it.
            explorer_pace: Seconds the Explorer waits between node events, so a run is watchable.
            chat_start: The conversation to open and the prompt to send first, if any.
            **parts: What the session runs on (`SessionParts`'s arguments: the provider factory,
                built after the first paint, in a thread, since the Anthropic SDK is slow to
                import; the toolbox factory; the store...).
        """
        super().__init__()
        self.start = start
        self.chat_start = chat_start
        self.explorer_pace = explorer_pace
        self._settings = settings
        self._parts = parts
        self._session: ChatSession | None = None
        self.terminal_signals = TerminalSignalsGlue(self, self._notify_settings)
        """Notifications and the window title (see `ui/terminal_signals.py`)."""
        self.preview = ConfigPreview.of(settings)
        """What the first frame shows of the settings (the session validates them after it)."""
        # The theme and Refine toggle chosen last time (a flag or variable still wins for this run).
        self.data_dir = data_dir(self.preview.data_dir)
        """Where the store, the preferences and the kept pane live (known before validation)."""
        self.preferences_path = preferences_path(self.data_dir)
        self.preferences = Preferences()
        """What the user chose in the app (saved on each change); a flag's value is not a choice."""
        saved = Preferences()
        if isinstance(settings, ConfigSource):
            self.preferences = Preferences.load(self.preferences_path)
            saved = for_this_run(self.preferences, settings)
        self.refine_at_start = self.preview.refine if saved.refine is None else saved.refine
        """Whether Refine is on when the session starts (the status bar shows it in the first frame)."""
        specs, self.theme_problems = discover_themes()
        self._code_themes: dict[str, str] = {}
        for spec in specs.values():
            self.register_theme(spec.theme)
            self._code_themes[spec.theme.name] = spec.code_theme
        self.theme_names = sorted(specs)
        wanted = saved.theme if saved.theme and saved.theme in specs else self.preview.theme
        if self.get_theme(wanted) is None:
            self.theme_problems.append(f"unknown theme {wanted!r}; using {DEFAULT_THEME}")
            wanted = DEFAULT_THEME if self.get_theme(DEFAULT_THEME) is not None else "textual-dark"
        # Not `self.theme = wanted`: before the app runs, that schedules a full CSS reparse and
        # restyle right after the first mount, before the first frame. The first parse reads the
        # current theme anyway, so set the value quietly and the classes its watcher would set.
        self.set_reactive(TuiAssistApp.theme, wanted)
        self.stylesheet.set_variables(self.get_css_variables())
        dark = self.current_theme.dark
        self.set_class(dark, "-dark-mode", update=False)
        self.set_class(not dark, "-light-mode", update=False)

    @property
    def session(self) -> ChatSession:
        """The chat session, built on first use: after the first frame (its modules are not few)."""
        if self._session is None:
            from tui_assist.session.chat import ChatSession

            self._session = ChatSession(self._settings, **self._parts)
            self._session.refine = self.refine_at_start
        return self._session

    @property
    def code_theme(self) -> str:
        """The Pygments style for code blocks in the current theme."""
        default = "monokai" if self.current_theme.dark else "friendly"
        return self._code_themes.get(self.theme, default)

    @property
    def main_screen(self) -> MainScreen:
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        raise RuntimeError("the main screen is not installed")

    def get_default_screen(self) -> Screen[Any]:
        return MainScreen(self.chat_start, connect=self._connect, session=lambda: self.session)

    def _connect(self, host: Host, launcher: Launcher) -> TurnController:
        """The main screen's controller over the session (see `Connect`)."""
        from tui_assist.session.controller import TurnController

        return TurnController(self.session, host, launcher=launcher)

    @property
    def interrupt_key(self) -> str:
        """The key that interrupts a turn or quits (ctrl+c unless the keymap moved it)."""
        return keymap(self).get("interrupt-or-quit", "ctrl+c")

    def action_interrupt_or_quit(self) -> None:
        """ctrl+c that copied nothing: the chat interrupts its turn or quits (see MainScreen)."""
        if isinstance(self.screen, MainScreen):
            self.screen.interrupt_or_quit()
        elif self.main_screen.running:
            self.main_screen.action_cancel_turn()
        else:
            self.action_help_quit()

    def _notify_settings(self) -> tuple[NotifyMode, float] | None:
        """`(notify, notify_after)` once the settings are loaded and valid."""
        session = self._session
        if session is None or not session.ready:
            return None
        try:
            settings = session.settings
        except ConfigError:
            return None
        return settings.notify, settings.notify_after

    def on_mount(self) -> None:
        self.terminal_signals.start()
        self.theme_changed_signal.subscribe(self, lambda theme: self.save_preferences(theme=theme.name))
        for problem in self.theme_problems:
            self.notify(problem, severity="warning", timeout=6)
        if self.start == "explore":
            self.open_explorer()

    def action_open_explorer(self) -> None:
        self.open_explorer()

    def open_explorer(self) -> None:
        """Show the Workflow Explorer (escape returns to the chat)."""
        from tui_assist.ui.screens.explorer import ExplorerScreen

        self.push_screen(ExplorerScreen(pace=self.explorer_pace))

    def exit(
        self, result: int | None = None, return_code: int = 0, message: RenderableType | None = None
    ) -> None:
        # While the screen is still up: the conversation pane as it is left, for its next resume.
        if self._session is not None and self._session.ready and isinstance(self.screen, MainScreen):
            self.screen.kept_pane.keep(self._session)
        super().exit(result, return_code, message)

    async def on_unmount(self) -> None:
        self.terminal_signals.stop()
        from tui_assist.ui.widgets.streaming_markdown import highlight_deferred

        highlight_deferred()  # (a quit before Pygments loaded must not leave code plain in the process)
        if self._session is not None:
            await self._session.aclose()

    def switch_theme(self, name: str) -> None:
        self.theme = name

    def action_choose_theme(self) -> None:
        """Pick one of our themes (the shipped ones and the user's) from a searchable list."""
        from textual.command import SimpleCommand

        self.search_commands(
            [
                SimpleCommand(
                    name,
                    partial(self.switch_theme, name),
                    "the current theme" if name == self.theme else None,
                )
                for name in self.theme_names
            ],
            placeholder="Search for themes…",
        )

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        # Textual's own "Theme" lists every Textual theme: the palette offers ours instead.
        for command in super().get_system_commands(screen):
            if command.title != "Theme":
                yield command

    def save_preferences(self, *, theme: str | None = None, refine: bool | None = None) -> None:
        """Remember a theme or Refine toggle the user chose, for the next start (in the data dir)."""
        if theme is not None:
            self.preferences.theme = theme
        if refine is not None:
            self.preferences.refine = refine
        self.preferences.save(self.preferences_path)


def run(
    settings: Settings | ConfigSource, *, screen: StartScreen = "chat", chat: StartOptions | None = None
) -> int:
    """Run the TUI until the user quits; returns the process exit code.

    `screen="explore"` opens the Workflow Explorer first (`tui-assist explore`); `chat` says which
    conversation to open and what to send first (`tui-assist "PROMPT"`, `--continue`, `--resume`).
    """
    app = TuiAssistApp(settings, start=screen, chat_start=chat)
    app.run()
    return app.return_code or 0
