"""The theme and Refine toggle survive a restart (a state file in the data dir, never config.toml),
and the palette offers one theme command, ours."""

from __future__ import annotations

from pathlib import Path

from textual.command import CommandPalette
from textual.widgets import OptionList

from tests.ui.helpers import FakeToolbox, palette_searched, screen_text, wait_until
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.session.config_source import ConfigSource
from tui_assist.ui.app import TuiAssistApp

CONFIG = '# my settings, my comments\ntheme = "tui-dark"\nprovider = "scripted"\n'


def _app(tmp_path: Path, **flags: object) -> TuiAssistApp:
    source = ConfigSource.read({"workdir": str(tmp_path), **flags}, path=tmp_path / "config.toml")
    return TuiAssistApp(
        source,
        provider_factory=lambda: ScriptedProvider([]),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
        use_store=False,
    )


async def test_the_theme_and_refine_chosen_in_the_app_come_back_and_config_toml_is_untouched(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    first = _app(tmp_path)
    async with first.run_test(size=(100, 30)) as pilot:
        await first.session.wait_ready()
        assert (first.theme, first.session.refine) == ("tui-dark", False)
        await pilot.press("ctrl+r")
        first.switch_theme("tui-light")
        await pilot.pause()

    second = _app(tmp_path)
    async with second.run_test(size=(100, 30)) as pilot:
        await second.session.wait_ready()
        await pilot.pause()
        assert (second.theme, second.session.refine) == ("tui-light", True)
        assert "Refine ON" in screen_text(second)
    assert config.read_text(encoding="utf-8") == CONFIG

    # A flag still decides for its run, and that run's value is not saved as a choice.
    flagged = _app(tmp_path, theme="tui-high-contrast", refine=False)
    async with flagged.run_test(size=(100, 30)) as pilot:
        await flagged.session.wait_ready()
        await pilot.pause()
        assert (flagged.theme, flagged.session.refine) == ("tui-high-contrast", False)
    again = _app(tmp_path)
    async with again.run_test(size=(100, 30)) as pilot:
        await again.session.wait_ready()
        assert (again.theme, again.session.refine) == ("tui-light", True)


async def _palette_titles(app: TuiAssistApp, pilot, query: str) -> list[str]:
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*query)
    await wait_until(pilot, lambda: palette_searched(app, query))
    options = app.screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt).split("\n")[0] for i in range(options.option_count)]


async def test_the_palette_offers_one_theme_command_and_it_lists_our_themes(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(CONFIG, encoding="utf-8")
    app = _app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        titles = await _palette_titles(app, pilot, "theme")
        assert "theme: choose" in titles[0]
        assert not any(title.strip() == "Theme" for title in titles)  # Textual's own is hidden
        await pilot.press("enter")
        await wait_until(pilot, lambda: palette_searched(app, ""))  # our theme list, searched for nothing
        options = app.screen.query_one(OptionList)
        listed = sorted(str(options.get_option_at_index(i).prompt) for i in range(options.option_count))
        assert [line.split("\n")[0] for line in listed] == sorted(app.theme_names)
        await pilot.press(*"light")
        await wait_until(pilot, lambda: palette_searched(app, "light"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.theme == "tui-light")
