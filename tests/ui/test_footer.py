"""The main screen's footer rebuilds once for a burst of binding changes, and shows the last."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.geometry import Region
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Static
from textual.widgets._footer import FooterKey

from tui_assist.ui.textual_private import PacedScreen
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


async def test_a_rebuild_of_the_keys_lays_the_screen_out_once() -> None:
    """The keys change as a turn starts and ends; each new key's first layout used to set its
    virtual size, which asked Textual for a second layout of the whole screen."""
    from tests.ui.helpers import settled

    app = FooterApp()
    async with app.run_test() as pilot:
        await settled(pilot)
        layouts: list[object] = []
        app.screen.screen_layout_refresh_signal.subscribe(app.screen, layouts.append)
        app.running = True
        app.screen.refresh_bindings()
        await settled(pilot)
        assert "Stop" in shown(app) and "Send" not in shown(app)
        assert len(layouts) == 1


async def test_changed_keys_are_rebuilt_before_the_next_frame(monkeypatch) -> None:
    """A turn's start and end change the keys and mount or grow what the screen shows. Textual's
    footer rebuilt its keys only after the next refresh: a layout of the screen of their own, a
    frame after the rest."""
    from tests.ui.helpers import settled

    frames: list[object] = []
    frames_before_rebuild: list[int] = []
    recompose = Footer.recompose

    async def counted(self: Footer) -> None:
        frames_before_rebuild.append(len(frames))
        await recompose(self)

    monkeypatch.setattr(Footer, "recompose", counted)
    app = FooterApp()
    async with app.run_test() as pilot:
        await settled(pilot)
        display = app._display

        def recorded(screen: Screen[object], renderable: object) -> None:
            if renderable is not None:
                frames.append(renderable)
            display(screen, renderable)  # type: ignore[arg-type]

        app._display = recorded  # type: ignore[method-assign]
        frames_before_rebuild.clear()

        def start_turn() -> None:  # in a handler of the app's, as the controller's calls are
            app.running = True
            app.screen.refresh_bindings()
            app.screen.refresh(layout=True)

        app.screen.call_later(start_turn)
        await settled(pilot)
        assert "Stop" in shown(app) and "Send" not in shown(app)
        assert frames and frames_before_rebuild == [0]


class _PacedFooterScreen(PacedScreen[None]):
    def compose(self) -> ComposeResult:
        yield Input()
        yield KeysFooter()


class PacedFooterApp(FooterApp):
    """The footer on a screen drawn as soon as asked for, as the main screen is."""

    def get_default_screen(self) -> Screen[None]:
        return _PacedFooterScreen()


async def test_a_rebuild_asks_for_the_layout_of_its_keys_once(monkeypatch) -> None:
    """Textual's `mount` asks for the new keys' layout when they are mounted, and again from a
    copy of that request it schedules itself, which came after the frame that laid the keys out:
    a layout of the whole screen for nothing, as every turn starts and ends."""
    from tests.ui.helpers import settled

    app = PacedFooterApp()
    async with app.run_test() as pilot:
        await settled(pilot)
        footer = app.query_one(KeysFooter)
        old_keys = set(footer.children)
        after_laid_out: list[bool] = []
        refresh = Widget.refresh

        def noted(self: Widget, *regions: Region, **options: bool) -> Widget:
            keys = footer.children
            if self is footer and options.get("layout") and keys and not old_keys & set(keys):
                after_laid_out.append(all(key.region for key in keys if key.display))
            return refresh(self, *regions, **options)

        monkeypatch.setattr(Widget, "refresh", noted)

        def start_turn() -> None:  # as the chat's turn starts: the keys change, a turn mounts
            app.running = True
            app.screen.refresh_bindings()
            app.screen.mount(Static("a turn"), before=footer)

        app.screen.call_later(start_turn)
        await settled(pilot)
        assert "Stop" in shown(app) and "Send" not in shown(app)
        assert all(key.region for key in footer.children if key.display)
        assert after_laid_out and not any(after_laid_out)  # asked while mounting, not after the layout


async def test_bound_keys_are_styled_once_as_they_mount(monkeypatch) -> None:
    """A key's `compact` starts true and is bound to the footer's false: unless it starts with the
    footer's, every key was restyled twice as it mounted (its class added, then removed)."""
    restyled: list[FooterKey] = []
    update_node_styles = FooterKey.update_node_styles

    def counted(self: FooterKey, animate: bool = True) -> None:
        restyled.append(self)
        update_node_styles(self, animate)

    monkeypatch.setattr(FooterKey, "update_node_styles", counted)
    app = FooterApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        keys = [
            key for key in app.query(FooterKey).results(FooterKey) if not key.has_class("-command-palette")
        ]
        assert "Send" in shown(app)
        assert keys and not any(key.has_class("-compact") for key in keys)
        assert not [key for key in restyled if key in keys]
