"""The main screen's footer rebuilds once for a burst of binding changes, and shows the last."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input
from textual.widgets._footer import FooterKey

from tui_assist.ui.widgets.footer import KeysFooter


class FooterApp(App[None]):
    BINDINGS = [Binding("f7", "send", "Send"), Binding("f8", "stop", "Stop")]

    def __init__(self) -> None:
        super().__init__()
        self.running = False

    def compose(self) -> ComposeResult:
        yield Input()
        yield KeysFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("send", "stop"):
            return (action == "stop") == self.running  # False hides the key
        return True


def shown(app: App[None]) -> set[str]:
    return {key.description for key in app.query(FooterKey).results(FooterKey) if key.display}


async def test_a_burst_of_binding_changes_rebuilds_the_footer_once_with_the_last(monkeypatch) -> None:
    rebuilds: list[int] = []
    recompose = Footer.recompose

    async def counted(self: Footer) -> None:
        rebuilds.append(1)
        await recompose(self)

    monkeypatch.setattr(Footer, "recompose", counted)
    app = FooterApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert "Send" in shown(app) and "Stop" not in shown(app)
        rebuilds.clear()

        for running in (True, False, True):  # three changes before the next frame
            app.running = running
            app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()

        assert len(rebuilds) == 1
        assert "Stop" in shown(app) and "Send" not in shown(app)

        rebuilds.clear()
        keys = set(app.query(FooterKey).results(FooterKey))
        app.screen.refresh_bindings()  # "changed" to what they were: the keys stay as built
        await pilot.pause()
        await pilot.pause()
        assert rebuilds == [] and set(app.query(FooterKey).results(FooterKey)) == keys

        app.running = False  # a later change still reaches the footer
        app.screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert "Send" in shown(app) and "Stop" not in shown(app)


async def test_rebuilds_leave_no_watchers_of_removed_keys_behind() -> None:
    """Each key binds `compact` to the footer; the removed keys' watchers must not pile up (they kept
    the keys alive and made every rebuild slower than the one before)."""
    app = FooterApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        footer = app.query_one(KeysFooter)
        for running in (True, False) * 5:
            app.running = running
            app.screen.refresh_bindings()
            await pilot.pause()
            await pilot.pause()
        watchers = getattr(footer, "__watchers")["compact"]
        keys = list(app.query(FooterKey).results(FooterKey))
        assert keys
        assert all(node.is_attached for node, _ in watchers)
        assert len(watchers) <= len(keys)


class KeysScreen(Screen[None]):
    """A screen that focuses its prompt as it mounts, as the main screen does."""

    AUTO_FOCUS = "Input"
    BINDINGS = [Binding("f7", "send", "Send")]

    def compose(self) -> ComposeResult:
        yield Input()
        yield KeysFooter()


class KeysApp(App[None]):
    def get_default_screen(self) -> Screen[None]:
        return KeysScreen()


async def test_the_first_frame_shows_the_keys() -> None:
    """Textual's own footer builds its first keys a refresh after the bindings are ready: four
    frames after the rest of the screen."""
    app = KeysApp()
    keys_in_frames: list[set[str]] = []
    display = app._display

    def recorded(screen: Screen[object], renderable: object) -> None:
        if renderable is not None:
            keys = app.query(FooterKey).results(FooterKey)
            keys_in_frames.append({key.description for key in keys if key.region})
        display(screen, renderable)  # type: ignore[arg-type]

    app._display = recorded  # type: ignore[method-assign]
    async with app.run_test() as pilot:
        await pilot.pause()
    assert "Send" in keys_in_frames[0]
