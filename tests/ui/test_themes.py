from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.helpers import make_app, palette_searched, screen_text, settled, wait_until
from tui_assist.paths import themes_dir, user_themes_dir
from tui_assist.ui.themes import ThemeFileError, discover_themes, load_theme_file, markdown_rich_theme

SHIPPED = {"tui-dark", "tui-light", "tui-high-contrast"}


def test_shipped_themes_load_from_the_themes_dir() -> None:
    found, problems = discover_themes([themes_dir()])
    assert problems == []
    assert SHIPPED <= set(found)
    assert found["tui-dark"].theme.dark and not found["tui-light"].theme.dark
    assert (themes_dir() / "base.tcss").is_file()


def test_theme_files_use_no_colours_outside_the_theme(tmp_path: Path) -> None:
    """UI code reads colours from theme variables only: no hex colours in widget CSS or code."""
    import ast
    import re

    ui = Path(__file__).resolve().parents[2] / "tui_assist" / "ui"
    offenders = []
    for path in [*ui.rglob("*.py"), *ui.rglob("*.tcss"), themes_dir() / "base.tcss"]:
        text = path.read_text()
        if path.suffix == ".py":  # a module docstring may show an example theme file
            text = text.replace(ast.get_docstring(ast.parse(text), clean=False) or "", "")
        offenders += [
            f"{path.name}: {m.group(0)}" for m in re.finditer(r"#[0-9a-fA-F]{6}\b|\b(?:rgb|hsl)\(", text)
        ]
    assert offenders == []


def test_user_theme_files_are_loaded_and_override(tmp_path: Path) -> None:
    folder = user_themes_dir()
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text('name = "mine"\ndark = false\n[colors]\nprimary = "#112233"\n')
    (folder / "broken.toml").write_text("name = [\n")
    found, problems = discover_themes()
    assert "mine" in found and SHIPPED <= set(found)
    assert len(problems) == 1 and "broken.toml" in problems[0]


def test_a_theme_without_primary_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('name = "bad"\n[colors]\nbackground = "#000000"\n')
    with pytest.raises(ThemeFileError):
        load_theme_file(path)


def test_markdown_styles_come_from_the_theme() -> None:
    found, _ = discover_themes([themes_dir()])
    variables = found["tui-light"].theme.to_color_system().generate()
    style = markdown_rich_theme(variables).styles["markdown.h1"]
    assert style.color is not None and style.color.triplet is not None
    assert style.color.triplet.hex.lower() == "#0969da"


@pytest.mark.parametrize("theme", sorted(SHIPPED))
async def test_the_app_starts_in_the_configured_theme(theme: str) -> None:
    app = make_app([], theme=theme)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await pilot.pause()
        assert app.theme == theme
        assert (
            app.code_theme
            == {"tui-dark": "monokai", "tui-light": "friendly", "tui-high-contrast": "ansi_dark"}[theme]
        )


async def test_unknown_theme_falls_back_and_says_so() -> None:
    app = make_app([], theme="no-such-theme")
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await pilot.pause()
        assert app.theme == "tui-dark"
        assert any("unknown theme 'no-such-theme'" in n.message for n in app._notifications)


async def test_switching_theme_from_the_palette_rerenders_markdown() -> None:
    app = make_app(["# Heading\n\nSome `code`."])
    async with app.run_test(size=(100, 30)) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.press(*"hi", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"theme: choose")
        await wait_until(pilot, lambda: palette_searched(app, "theme: choose"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: palette_searched(app, ""))
        await pilot.press(*"tui-light")
        await wait_until(pilot, lambda: palette_searched(app, "tui-light"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.theme == "tui-light")
        await settled(pilot)  # restyled in the new theme
        assert "Heading" in screen_text(app)
        from tui_assist.ui.widgets.turn_parts import AnswerText

        answer = app.query_one(AnswerText)
        answer.render_lines(answer.region.reset_offset)
        heading = next(s for s in answer.render_line(0) if s.text.strip())
        assert heading.style is not None and heading.style.color is not None
        assert heading.style.color.triplet is not None
        assert heading.style.color.triplet.hex == "#0969da"  # tui-light's primary
