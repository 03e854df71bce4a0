"""Themes as files: TOML palettes in `themes/` (shipped) and the user's theme dir.

A theme file is a small TOML document, so users can copy one and change colours without writing
Python:

```toml
name = "my-theme"
dark = true
code-theme = "monokai"        # Pygments style for code blocks (optional)

[colors]                      # the textual.theme.Theme fields
primary = "#7aa2f7"
background = "#1a1b26"

[variables]                   # optional extra CSS variables
"footer-key-foreground" = "#e0af68"
```

Markdown in the conversation is rendered by Rich, so its styles are derived here from the active
theme's variables: colours still come only from the theme.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rich.style import Style
from rich.theme import Theme as RichTheme
from textual.color import Color
from textual.theme import Theme

from tui_assist.paths import themes_dir, user_themes_dir

_COLOR_FIELDS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)


class ThemeFileError(ValueError):
    """A theme file is unreadable or malformed."""


@dataclass(frozen=True, slots=True)
class ThemeSpec:
    """A theme loaded from a file."""

    theme: Theme
    code_theme: str
    path: Path


def load_theme_file(path: Path) -> ThemeSpec:
    """Parse one theme file.

    Raises:
        ThemeFileError: when the file can't be read or lacks a name or a primary colour.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ThemeFileError(f"cannot read theme {path}: {exc}") from exc
    name = data.get("name") or path.stem
    colors = data.get("colors", {})
    if not isinstance(colors, dict) or "primary" not in colors:
        raise ThemeFileError(f"theme {path}: [colors] needs at least `primary`")
    kwargs = {key: str(colors[key]) for key in _COLOR_FIELDS if key in colors}
    for key, value in kwargs.items():
        try:
            Color.parse(value)
        except Exception as exc:
            raise ThemeFileError(f"theme {path}: {key} = {value!r} is not a colour") from exc
    variables = {str(k): str(v) for k, v in dict(data.get("variables", {})).items()}
    dark = bool(data.get("dark", True))
    if "boost" not in variables and (boost := kwargs.get("boost") or _default_boost(kwargs)):
        # Textual leaves $boost transparent when a theme sets `panel`, as ours do, and the prompt,
        # the queued prompts and the Refine badge are drawn on it: the tint it used to give.
        variables["boost"] = boost
    theme = Theme(
        name=str(name),
        primary=kwargs.pop("primary"),
        dark=dark,
        variables=variables,
        **kwargs,  # pyright: ignore[reportArgumentType] - only the colour fields are in here
    )
    code_theme = str(data.get("code-theme") or ("monokai" if dark else "friendly"))
    return ThemeSpec(theme, code_theme, path)


def _default_boost(colors: dict[str, str]) -> str | None:
    """A faint tint of the text's colour over the background, as Textual derived `boost`."""
    background = colors.get("background")
    if background is None:
        return None
    return Color.parse(background).get_contrast_text(1.0).with_alpha(0.04).css


def discover_themes(dirs: Iterable[Path] | None = None) -> tuple[dict[str, ThemeSpec], list[str]]:
    """Load every `*.toml` theme from the shipped dir, then the user dir (later names win).

    Returns:
        The themes by name, and one message per file that failed to load.
    """
    found: dict[str, ThemeSpec] = {}
    problems: list[str] = []
    for folder in dirs if dirs is not None else (themes_dir(), user_themes_dir()):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                spec = load_theme_file(path)
            except ThemeFileError as exc:
                problems.append(str(exc))
                continue
            found[spec.theme.name] = spec
    return found, problems


def _color(variables: Mapping[str, str], name: str) -> Color:
    return Color.parse(variables[name])


def markdown_rich_theme(variables: Mapping[str, str]) -> RichTheme:
    """Rich Markdown styles built from the active Textual theme's CSS variables."""
    fg = _color(variables, "foreground")
    bg = _color(variables, "background")
    primary = _color(variables, "primary").rich_color
    secondary = _color(variables, "secondary").rich_color
    accent = _color(variables, "accent").rich_color
    surface = _color(variables, "panel").rich_color
    muted = fg.blend(bg, 0.4).rich_color
    return RichTheme(
        {
            "markdown.code": Style(color=accent, bgcolor=surface),
            "markdown.code_block": Style(color=fg.rich_color, bgcolor=surface),
            "markdown.block_quote": Style(color=muted, italic=True),
            "markdown.list": Style(color=primary),
            "markdown.item.bullet": Style(color=primary, bold=True),
            "markdown.item.number": Style(color=primary),
            "markdown.hr": Style(color=muted),
            "markdown.h1.border": Style(color=primary),
            "markdown.h1": Style(color=primary, bold=True),
            "markdown.h2": Style(color=primary, bold=True, underline=True),
            "markdown.h3": Style(color=secondary, bold=True),
            "markdown.h4": Style(color=secondary, italic=True),
            "markdown.h5": Style(italic=True),
            "markdown.h6": Style(color=muted),
            "markdown.link": Style(color=primary, underline=True),
            "markdown.link_url": Style(color=secondary, underline=True),
            "markdown.table.border": Style(color=muted),
            "markdown.table.header": Style(color=primary, bold=True),
            "markdown.kbd": Style(color=accent, bold=True),
        },
        inherit=True,
    )
