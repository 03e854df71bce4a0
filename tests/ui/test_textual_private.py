"""The private Textual and Rich APIs `ui.textual_private` relies on, and that nothing else uses one.

Each test fails when upstream changes what the fence relies on: the name, its signature, its
behaviour, or (for code the fence copies and adapts) its source.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import hashlib
import importlib
import inspect
import re
import textwrap
from functools import cache
from pathlib import Path

import pytest
from rich.console import Console
from rich.markdown import Markdown
from textual import _time
from textual._compositor import ChopsUpdate, Compositor
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.dom import DOMNode
from textual.geometry import Offset, Region, Size
from textual.reactive import Reactive, reactive
from textual.screen import Screen
from textual.strip import Strip
from textual.theme import Theme as TextualTheme
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Static

from tests.wait import wait_until
from tui_assist.paths import themes_dir
from tui_assist.ui import textual_private
from tui_assist.ui.textual_private import (
    CroppedCompositor,
    FrameTimer,
    PacedScreen,
    StripBarVerticalScroll,
    binding_chain,
    keymap,
    keymapped_bindings,
    laid_out_footer_keys,
    layout_now,
    prune_detached_watchers,
    rich_markdown,
    show_footer_keys_now,
)
from tui_assist.ui.themes import discover_themes
from tui_assist.ui.widgets.laid_out_size import LaidOutSize
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.scrollbar import StripScrollBar
from tui_assist.ui.widgets.streaming_markdown import load_parser

UI = Path(textual_private.__file__).parent


def _digest(function: object) -> str:
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:16]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("what", "function", "digest"),
    [
        ("Widget.vertical_scrollbar", Widget.vertical_scrollbar.fget, "6b140a728f0b50e4"),
        ("Widget._scroll_update", Widget._scroll_update, "edb9f6257285830d"),
        ("Screen._update_timer", Screen._update_timer.fget, "6736ab93692ef9ed"),
        ("Timer._run", Timer._run, "60c942a84c1a8765"),
        ("Widget._check_refresh", Widget._check_refresh, "ad1c8196be9747bf"),
        ("Markdown.__init__", Markdown.__init__, "f62a531a8a981101"),
        ("Compositor._get_renders", Compositor._get_renders, "8ac93299aa5d3bef"),
        ("Compositor._render_chops", Compositor._render_chops, "ca8c3359d7afd017"),
        ("ChopsUpdate.__rich_console__", ChopsUpdate.__rich_console__, "c45d5804ef810b78"),
    ],
)
def test_the_upstream_code_the_fence_adapts_is_unchanged(what: str, function: object, digest: str) -> None:
    """The fence copies these (or runs inside them): a change upstream needs the copy re-read."""
    assert _digest(function) == digest, f"{what} changed upstream: re-check ui/textual_private.py"


# -- keys ------------------------------------------------------------------------------------------


class _Keys(Widget, can_focus=True):
    BINDINGS = [
        Binding("f6", "ping", "Ping", id="ping"),
        Binding("f7", "off", "Off", id="off"),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action != "off"


class _KeysApp(App[None]):
    def compose(self) -> ComposeResult:
        yield _Keys()


async def test_the_keymap_is_what_set_keymap_installed() -> None:
    app = _KeysApp()
    async with app.run_test():
        app.set_keymap({"ping": "f9"})
        assert keymap(app) == {"ping": "f9"}


async def test_a_nodes_own_bindings_come_with_the_keymap_applied() -> None:
    app = _KeysApp()
    async with app.run_test():
        keys = app.query_one(_Keys)
        assert set(keymapped_bindings(keys).key_to_bindings) == {"f6", "f7"}
        app.set_keymap({"ping": "f9"})
        bindings = keymapped_bindings(keys)
        assert [b.action for b in bindings.key_to_bindings["f9"]] == ["ping"]
        assert "f6" not in bindings.key_to_bindings
        assert "f6" in keys._bindings.key_to_bindings  # a copy: the node's own are left alone


async def test_the_binding_chain_keeps_disabled_actions_that_active_bindings_drops() -> None:
    app = _KeysApp()
    async with app.run_test() as pilot:
        keys = app.query_one(_Keys)
        keys.focus()
        await pilot.pause()
        app.set_keymap({"ping": "f9"})
        chain = binding_chain(app.screen)
        assert chain[0][0] is keys
        assert {b.action for _, b in chain[0][1]} == {"ping", "off"}
        assert "f9" in chain[0][1].key_to_bindings  # the keymap applied
        assert "f7" not in app.screen.active_bindings  # why /help reads the chain


class _UnreadyFooter(Footer):
    """A footer that is never told its bindings changed: its keys wait for `show_footer_keys_now`."""

    def bindings_changed(self, screen: Screen) -> None:
        pass


class _FooterApp(App[None]):
    BINDINGS = [Binding("f6", "ping", "Ping")]

    def compose(self) -> ComposeResult:
        yield _UnreadyFooter()


async def test_a_footer_builds_no_keys_until_its_bindings_are_ready() -> None:
    assert isinstance(Footer._bindings_ready, reactive)
    app = _FooterApp()
    async with app.run_test() as pilot:
        footer = app.query_one(_UnreadyFooter)
        await pilot.pause()
        assert not footer.children
        show_footer_keys_now(footer)
        footer.call_later(footer.recompose)  # as Textual's footer does, in the footer's own context
        await wait_until(lambda: footer.children)


class _KeysFooter(Footer):
    def compose(self) -> ComposeResult:
        yield from laid_out_footer_keys(super().compose(), self)


class _KeysFooterApp(App[None]):
    BINDINGS = [Binding("f6", "ping", "Ping"), Binding("f7", "pong", "Pong")]

    def compose(self) -> ComposeResult:
        yield _KeysFooter()


async def test_a_footers_keys_are_made_of_the_private_footer_key_and_become_laid_out_keys() -> None:
    from textual.widgets._footer import FooterKey

    app = _KeysFooterApp()
    async with app.run_test() as pilot:
        footer = app.query_one(_KeysFooter)
        await wait_until(lambda: footer.children)
        await pilot.pause()
        keys = list(footer.children)
        assert keys and all(type(key) is textual_private.LaidOutFooterKey for key in keys)
        assert issubclass(textual_private.LaidOutFooterKey, FooterKey)
        assert all(key.region.width > 0 for key in keys)
        shown = " ".join(str(key.render()) for key in keys)
        assert "Ping" in shown and "Pong" in shown


async def test_a_footers_keys_start_as_textual_leaves_them_compact_or_not() -> None:
    """`laid_out_footer_keys` gives the bound keys the footer's `compact` before they mount; it
    relies on `FooterKey.compact` starting true and on Textual leaving the palette's key unbound
    (so compact whatever the footer's)."""
    from textual.widgets._footer import FooterKey

    assert isinstance(FooterKey.compact, reactive) and FooterKey.compact._default is True
    app = _KeysFooterApp()
    async with app.run_test() as pilot:
        footer = app.query_one(_KeysFooter)
        await wait_until(lambda: footer.children)
        await pilot.pause()
        palette = footer.query_one(".-command-palette", FooterKey)
        bound = [key for key in footer.query(FooterKey).results(FooterKey) if key is not palette]
        assert bound and not any(key.compact or key.has_class("-compact") for key in bound)
        assert palette.compact and palette.has_class("-compact")
        footer.compact = True
        await pilot.pause()
        assert all(key.compact and key.has_class("-compact") for key in bound)


class _Counter(Widget):
    count = reactive(0)


class _Watcher(Widget):
    def __init__(self, counter: _Counter) -> None:
        super().__init__()
        self.counter = counter

    def on_mount(self) -> None:
        self.watch(self.counter, "count", lambda: None, init=False)


class _WatchApp(App[None]):
    def compose(self) -> ComposeResult:
        yield _Counter()


async def test_a_removed_nodes_watchers_stay_until_pruned() -> None:
    app = _WatchApp()
    async with app.run_test():
        counter = app.query_one(_Counter)
        watcher = _Watcher(counter)
        await app.mount(watcher)
        await watcher.remove()
        watchers = getattr(counter, "__watchers")["count"]
        assert [node for node, _ in watchers] == [watcher]  # Textual keeps it
        prune_detached_watchers(counter, "count")
        assert getattr(counter, "__watchers")["count"] == []


# -- Rich's Markdown -------------------------------------------------------------------------------


def _rendered(markdown: Markdown) -> str:
    console = Console(width=60, record=True, color_system="truecolor", file=None)
    with console.capture():
        console.print(markdown)
    return console.export_text(styles=True)


def test_a_markdown_from_tokens_has_what_init_sets_and_renders_the_same() -> None:
    text = "# Title\n\nSome *text* and `code`, a [link](https://example.com).\n\n```python\nx = 1\n```\n"
    upstream = Markdown(text, code_theme="monokai", hyperlinks=False)
    ours = rich_markdown(Markdown, text, load_parser().parse(text), "monokai")
    assert set(vars(ours)) == set(vars(upstream))
    assert {k: v for k, v in vars(ours).items() if k != "parsed"} == {
        k: v for k, v in vars(upstream).items() if k != "parsed"
    }
    assert _rendered(ours) == _rendered(upstream)


# -- frames drawn when asked for -------------------------------------------------------------------


def test_the_timer_internals_the_frame_timer_uses_exist() -> None:
    assert list(inspect.signature(Timer._tick).parameters) == ["self", "next_timer", "count"]
    assert inspect.iscoroutinefunction(Timer._run) and callable(Timer._start)
    assert callable(_time.get_time) and inspect.iscoroutinefunction(_time.sleep)
    assert isinstance(inspect.getattr_static(Screen, "_update_timer"), property)
    assert callable(Screen._on_timer_update)


class _Paced(PacedScreen[None]):
    def __init__(self) -> None:
        super().__init__()
        self.ticks: list[bool] = []
        """Whether each frame laid the screen out."""

    @property
    def frames(self) -> int:
        return len(self.ticks)

    def compose(self) -> ComposeResult:
        yield Static("first", id="text")

    def _on_timer_update(self) -> None:
        self.ticks.append(self._layout_required)
        super()._on_timer_update()


class _PacedApp(App[None]):
    def get_default_screen(self) -> Screen[None]:
        return _Paced()


async def test_a_paced_screen_draws_its_frames_with_a_frame_timer() -> None:
    app = _PacedApp()
    async with app.run_test():
        screen = app.screen
        assert isinstance(screen, _Paced)
        timer = screen._update_timer
        assert isinstance(timer, FrameTimer) and timer in screen._timers
        await wait_until(lambda: screen.frames and not timer._active.is_set())
        drawn = screen.frames
        app.query_one("#text", Static).update("second")
        await wait_until(lambda: screen.frames > drawn and not timer._active.is_set())
    assert timer._task is None  # stopped with the screen, as the timers `set_interval` makes


class _TwoWidgets(_Paced):
    def compose(self) -> ComposeResult:
        yield Static("a bar", id="bar")
        yield Static("one line", id="text")


@pytest.mark.parametrize("now", [True, False])
async def test_layout_now_lays_out_in_the_frame_another_widgets_repaint_starts(now: bool) -> None:
    """A turn's end asks for the answer's last layout and repaints the status bar: asked for at
    once, the layout is in the frame the repaint starts; asked for from the widget's idle handler,
    as `refresh(layout=True)` does, it waits for the next frame, a period later."""

    class Host(App[None]):
        def get_default_screen(self) -> Screen[None]:
            return _TwoWidgets()

    app = Host()
    async with app.run_test():
        screen = app.screen
        assert isinstance(screen, _TwoWidgets)
        await wait_until(lambda: not screen._update_timer._active.is_set())
        screen.ticks = []
        text = app.query_one("#text", Static)

        async def busy() -> None:  # (the answer's pump had work of its own at the turn's end)
            await asyncio.sleep(0.1)

        text.call_later(busy)  # its idle handler, and so what `refresh` asks, comes after this
        text.update("two\nlines", layout=False)
        if now:
            layout_now(text)
        else:
            text.refresh(layout=True)
        app.query_one("#bar", Static).refresh()
        await wait_until(lambda: text.size.height == 2)
        assert screen.ticks[0] is now


class _Cropped(PacedScreen[None]):
    """A pane that scrolls, a side panel, and a bar below: the main screen's shape."""

    DEFAULT_CSS = """
    #side { width: 12; background: $panel; }
    #bar { dock: bottom; height: 1; background: $primary; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal():
            with VerticalScroll(id="pane"):
                yield Static("\n".join(f"line {i} " * 4 for i in range(60)), id="text")
            yield Static("side\npanel", id="side")
        yield Static("the status bar", id="bar")


class _CroppedApp(App[None]):
    def get_default_screen(self) -> Screen[None]:
        return _Cropped()


@pytest.mark.parametrize(
    "dirty",
    [
        [Region(2, 5, 20, 3)],  # a few rows of the pane
        [Region(0, 4, 50, 1), Region(3, 9, 5, 2)],  # two, in one crop
        [Region(10, 2, 40, 6)],  # the pane and the side panel
        [Region(0, 15, 50, 5)],  # the pane's last rows and the bar
        [Region(0, 0, 50, 20)],  # all of it (but a partial update)
    ],
)
async def test_a_cropped_compositor_writes_what_textuals_writes_rendering_only_those_rows(
    dirty: list[Region], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = _CroppedApp()
    async with app.run_test(size=(50, 20)) as pilot:
        screen = app.screen
        assert isinstance(screen._compositor, CroppedCompositor)
        pane, bar = app.query_one("#pane", VerticalScroll), app.query_one("#bar")
        pane.scroll_to(y=7, animate=False)  # the pane's text is clipped at both ends
        await pilot.pause()
        assert pane.scroll_y == 7
        rendered: list[tuple[Widget, int]] = []
        render_lines = Widget.render_lines

        def counted(widget: Widget, crop: Region) -> list[Strip]:
            rendered.append((widget, crop.height))
            return render_lines(widget, crop)

        monkeypatch.setattr(Widget, "render_lines", counted)
        writes: dict[type[Compositor], str] = {}
        rows: dict[type[Compositor], dict[Widget, int]] = {}
        for kind in (Compositor, CroppedCompositor):
            compositor = kind()
            compositor.reflow(screen, screen.size)
            compositor._dirty_regions.clear()  # the first reflow marks it all
            compositor._dirty_regions.update(dirty)
            rendered.clear()
            update = compositor.render_partial_update()
            assert isinstance(update, ChopsUpdate)
            writes[kind] = update.render_segments(app.console)
            rows[kind] = dict(rendered)  # each widget is rendered once an update
    assert writes[CroppedCompositor] == writes[Compositor]
    crop = Region.from_union(dirty)
    for widget, widget_rows in rows[CroppedCompositor].items():
        assert widget_rows <= min(rows[Compositor][widget], crop.height)
    if crop.bottom < 19:
        assert bar in rows[Compositor] and bar not in rows[CroppedCompositor]


# -- the conversation's scrollbar ------------------------------------------------------------------


class _ScrollApp(App[None]):
    def compose(self) -> ComposeResult:
        with StripBarVerticalScroll():
            yield Static("line\n" * 200)


async def test_the_scrollbar_is_a_strip_scrollbar_started_as_textual_starts_its_own() -> None:
    assert list(inspect.signature(App._start_widget).parameters) == ["self", "parent", "widget"]
    app = _ScrollApp()
    async with app.run_test(size=(40, 10)):
        pane = app.query_one(StripBarVerticalScroll)
        await wait_until(lambda: pane.vertical_scrollbar.display)
        bar = pane.vertical_scrollbar
        assert isinstance(bar, StripScrollBar) and pane._vertical_scrollbar is bar
        assert bar.parent is pane and bar.is_running
        bar.refresh()
        assert bar._repaint_required  # what Textual's `refresh` marks, and the layout clears
        pane._scroll_update(pane.virtual_size)
        assert not bar._repaint_required


# -- public behaviour the chat relies on -------------------------------------------------------------
# Not private, so outside the fence, but an upgrade (or the neighbouring minors: see
# docs/architecture.md, "Trying other Textual versions") changes them, and the chat tests that
# fail then name a symptom, not the cause.

DELIBERATELY_SHADOWED = {"ctrl+c", "super+c"}
"""Keys the prompt's editor takes first on purpose: it copies its own selection, else skips."""


def _textual_keys(node: DOMNode) -> dict[str, str]:
    """The keys Textual's own classes in `node`'s MRO bind, each with its action."""
    keys: dict[str, str] = {}
    for cls in type(node).__mro__:
        if cls.__module__.startswith("textual") and "BINDINGS" in vars(cls):
            keys |= {b.key: b.action for b in Binding.make_bindings(vars(cls)["BINDINGS"])}
    return keys


async def test_no_key_of_the_chat_is_taken_by_the_prompts_textual_bindings() -> None:
    """A key the screen or the app binds (not as a priority) reaches it while the prompt has focus:
    no Textual widget between them binds it (Textual 8.1's `TextArea` took `ctrl+f`, find)."""
    from tests.ui.helpers import make_app

    app = make_app()
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_until(lambda: isinstance(app.focused, Prompt), between=pilot.pause)
        chain = [node for node, _ in binding_chain(app.screen)]
        nearer = chain[: chain.index(app.screen)]
        ours = {
            key: binding.action
            for node in (app.screen, app)
            for key, bindings in keymapped_bindings(node).key_to_bindings.items()
            for binding in bindings
            if not binding.priority and key not in DELIBERATELY_SHADOWED
        }
        taken = [
            f"{key} ({action}) is taken by {type(node).__name__}'s {theirs[key]}"
            for node in nearer
            if (theirs := _textual_keys(node))
            for key, action in ours.items()
            if key in theirs
        ]
        assert taken == []


async def test_a_press_on_the_padding_left_of_a_text_selects_from_its_start() -> None:
    """Where a mouse selection starts (a prompt's first cell is padding): Textual 8.1 and older
    gave the offset of the text's end there, so a selection across messages lost the prompt."""
    app = _PaddedApp()
    async with app.run_test(size=(40, 5)):
        text = app.query_one(Static)
        region = text.region
        for x in range(region.x, region.x + 3):
            assert app.screen.get_widget_and_offset_at(x, region.y) == (text, Offset(0, 0)), x
        assert app.screen.get_widget_and_offset_at(region.x + 3, region.y) == (text, Offset(1, 0))


DERIVED_VARIABLES = {
    "tui-dark": {
        "border-blurred": "#191D2F",
        "error-muted": "#5C3645",
        "success-muted": "#41503A",
        "text-accent": "#EACA9B",
        "text-error": "#F9A4B4",
        "text-muted": "auto 60%",
        "text-success": "#BEDE9C",
    },
    "tui-high-contrast": {
        "error-muted": "#4C1C1C",
        "success-muted": "#004C00",
        "text-accent": "#FFFF56",
        "text-error": "#FF9595",
        "text-muted": "auto 60%",
        "text-success": "#56FF56",
    },
    "tui-light": {
        "border-blurred": "#F7F7F7",
        "error-muted": "#EAB7BC",
        "success-muted": "#B4D3BF",
        "text-accent": "#7C3200",
        "text-error": "#88161E",
        "text-muted": "auto 60%",
        "text-success": "#115324",
    },
}
"""The CSS variables our styles use that our theme files leave to Textual, as Textual 8.2.8 derives
them (8.2 made `$boost` transparent: the prompt's and the Refine badge's tint went with it)."""


def _variables_the_css_uses() -> set[str]:
    sources = [*UI.rglob("*.py"), *UI.rglob("*.tcss"), *themes_dir().glob("*.tcss")]
    return {name for path in sources for name in re.findall(r"\$([a-z][a-z0-9-]*)", path.read_text())}


async def test_the_theme_variables_textual_derives_for_our_css_are_as_recorded() -> None:
    """A change here changes the screen's colours (the snapshots fail too, naming no cause)."""
    from tests.ui.helpers import make_app

    specs, problems = discover_themes([themes_dir()])
    assert not problems and set(specs) == set(DERIVED_VARIABLES)
    used = _variables_the_css_uses()
    app = make_app()
    derived: dict[str, dict[str, str]] = {}
    async with app.run_test(size=(80, 24)):
        for name, spec in sorted(specs.items()):
            theme = spec.theme
            given = {field for field in _THEME_FIELDS if getattr(theme, field) is not None} | set(
                theme.variables
            )
            app.theme = name
            variables = app.get_css_variables()
            derived[name] = {key: variables[key] for key in sorted(used - given) if key in variables}
    assert derived == DERIVED_VARIABLES, "Textual derives these differently now: re-check the snapshots"


_THEME_FIELDS = [field.name for field in dataclasses.fields(TextualTheme)]


class _Sized(LaidOutSize, Static):
    pass


class _SizedApp(App[None]):
    def compose(self) -> ComposeResult:
        yield _Sized("\n".join(["line"] * 5))


async def test_an_awaited_mount_asks_its_parent_for_a_layout_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """`KeysFooter` drops the second of these (it came after the frame that laid out its new keys):
    were there only one, it would drop a request of its own."""
    app = App[None]()
    async with app.run_test() as pilot:
        parent = Widget()
        await app.screen.mount(parent)
        await pilot.pause()
        asked: list[bool] = []
        refresh = Widget.refresh

        def noted(self: Widget, *regions: Region, **options: bool) -> Widget:
            if self is parent and options.get("layout"):
                asked.append(True)
            return refresh(self, *regions, **options)

        monkeypatch.setattr(Widget, "refresh", noted)
        await parent.mount(Static("a key"))
        await pilot.pause()
    assert len(asked) == 2


async def test_a_laid_out_size_widget_is_sized_by_the_layout_and_asks_for_no_layout_itself() -> None:
    """`LaidOutSize` redeclares Textual's `virtual_size` without its layout flag: the layout sets it
    (`Widget._size_updated`), and a change of it must not ask for a second layout."""
    upstream = inspect.getattr_static(Widget, "virtual_size")
    assert isinstance(upstream, Reactive) and upstream._layout  # what the mixin takes away
    assert "self.set_reactive(Widget.virtual_size, virtual_size)" in inspect.getsource(Widget._size_updated)
    app = _SizedApp()
    async with app.run_test(size=(40, 10)):
        sized = app.query_one(_Sized)
        await wait_until(lambda: sized.virtual_size == Size(40, 5))  # set by the layout alone
        asked: list[dict[str, object]] = []
        refresh = sized.refresh
        sized.refresh = lambda *regions, **options: asked.append(options) or refresh(*regions, **options)  # type: ignore[method-assign]
        sized.virtual_size = Size(20, 6)
        assert not any(options.get("layout") for options in asked)


class _PaddedApp(App[None]):
    CSS = "Static { padding: 0 2; }"

    def compose(self) -> ComposeResult:
        yield Static("list files")


# -- the fence holds -------------------------------------------------------------------------------


def _upstream_private_names(cls: type) -> set[str]:
    """The private names Textual's and Rich's classes in `cls`'s MRO define or set on `self`."""
    names: set[str] = set()
    for base in cls.__mro__:
        if base.__module__.startswith(("textual", "rich")):
            names |= _class_private_names(base)
    return names


@cache
def _class_private_names(base: type) -> frozenset[str]:
    names = {name for name in vars(base) if _private(name)}
    try:
        source = textwrap.dedent(inspect.getsource(base))
    except (OSError, TypeError):
        return frozenset(names)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _self_attribute(node) and _private(node.attr):
            names.add(node.attr)
    return frozenset(names)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


def _self_attribute(node: ast.AST) -> bool:
    if not isinstance(node, ast.Attribute):
        return False
    value = node.value
    return (isinstance(value, ast.Name) and value.id in ("self", "cls")) or (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"
    )


@cache
def _all_upstream_private_names() -> frozenset[str]:
    import rich
    import textual

    names: set[str] = set()
    for package in (textual, rich):
        for path in Path(package.__file__).parent.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _private(node.name):
                    names.add(node.name)
                elif isinstance(node, ast.Attribute) and _private(node.attr):
                    names.add(node.attr)
    return frozenset(names)


def private_uses(path: Path, upstream: frozenset[str]) -> list[str]:
    """Where the module at `path` reaches into Textual or Rich: private modules, a private name of
    a Textual or Rich base class on `self` (used or overridden), or of upstream on anything else."""
    module = importlib.import_module(".".join(path.relative_to(UI.parent.parent).with_suffix("").parts))
    tree = ast.parse(path.read_text(encoding="utf-8"))
    ours: set[str] = set()
    found: list[str] = []
    where = f"{path.relative_to(UI.parent.parent)}"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(("textual", "rich")):
            parts = [*node.module.split("."), *(alias.name for alias in node.names)]
            if any(part.startswith("_") for part in parts):
                found.append(f"{where}:{node.lineno}: from {node.module} import ...")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "__new__"
        ):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node.func)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr")
            and any(isinstance(arg, ast.Constant) and str(arg.value).startswith("__") for arg in node.args)
        ):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ClassDef) and isinstance(cls := getattr(module, node.name, None), type):
            theirs = _upstream_private_names(cls)
            for inner in ast.walk(node):
                name = None
                if _self_attribute(inner):
                    name = inner.attr  # type: ignore[attr-defined]
                elif isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = inner.name
                if name is None:
                    continue
                if name in theirs:
                    found.append(f"{where}:{inner.lineno}: {node.name}.{name}")
                else:
                    ours.add(name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and not _self_attribute(node)
            and _private(node.attr)
            and node.attr in upstream
            and node.attr not in ours
        ):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_nothing_in_ui_but_the_fence_touches_a_private_name_of_textual_or_rich() -> None:
    upstream = _all_upstream_private_names()
    modules = sorted(path for path in UI.rglob("*.py") if path.name != "textual_private.py")
    found = [use for path in modules for use in private_uses(path, upstream)]
    assert found == [], "private Textual/Rich APIs outside ui/textual_private.py:\n" + "\n".join(found)


def test_the_check_finds_the_private_uses_the_fence_holds() -> None:
    """The check above would catch each of them, were they outside the fence."""
    found = "\n".join(private_uses(UI / "textual_private.py", _all_upstream_private_names()))
    for use in (
        "from textual import ...",
        "kind.__new__",
        "getattr(node, '__watchers', {})",
        "FrameTimer._run",
        "PacedScreen._update_timer",
        "StripBarVerticalScroll._scroll_update",
        "StripBarVerticalScroll._vertical_scrollbar",
        "app._keymap",
        "screen._binding_chain",
        "footer._bindings_ready",
        "from textual.widgets._footer import ...",
        "self.app._start_widget",
    ):
        assert use in found, use
