"""Markdown rendered with Rich and Pygments, shared by every `StreamingMarkdown` of an app.

One markdown-it parser, one Rich console per app and theme, lexers and syntax themes made once:
a streamed block renders again at every flush, so whatever Rich would build again for each
render is built here once. Code highlighting can be deferred while Pygments loads
(`defer_highlighting`), so a resumed conversation's last answer is drawn first in plain text.
"""

from __future__ import annotations

import io
import weakref
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, ClassVar, Protocol

from rich.console import Console
from textual.app import App
from textual.strip import Strip

from tui_assist.ui.textual_private import rich_markdown
from tui_assist.ui.themes import markdown_rich_theme

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from pygments.lexer import Lexer
    from rich.console import ConsoleOptions, RenderResult
    from rich.markdown import Markdown, MarkdownElement
    from rich.syntax import SyntaxTheme


class Rendered(Protocol):
    """A widget drawn by a `MarkdownRenderer`, which can draw itself again."""

    def render_again(self) -> None:
        """Render every line again (the Markdown styles changed)."""
        ...


@dataclass(slots=True)
class MarkdownRenderer:
    """Renders Markdown text into strips with one console (an app's theme and code theme)."""

    key: tuple[str, str]
    console: Console
    code_theme: str

    def render(self, text: str, width: int, *, highlight: bool | None = None) -> list[Strip]:
        """`text` as lines `width` wide; code is highlighted unless `defer_highlighting` holds it."""
        if not text.strip():
            return []
        options = self.console.options.update(width=width, max_width=width)
        plain = _plain_code is not None if highlight is None else not highlight
        markdown = parsed_markdown(text, self.code_theme, plain_code=plain)
        lines = self.console.render_lines(markdown, options, pad=False)
        strips = [Strip(line) for line in lines]
        while strips and not _has_content(strips[0]):
            strips.pop(0)
        while strips and not _has_content(strips[-1]):
            strips.pop()
        return strips


_parser: MarkdownIt | None = None
"""The one markdown-it parser (made on first use)."""


def parsed_markdown(text: str, code_theme: str, *, plain_code: bool = False) -> Markdown:
    """Rich's `Markdown` of `text` (no hyperlinks), parsed by one shared parser.

    Rich's `Markdown.__init__` builds a new markdown-it parser for every text, the bulk of
    rendering a streamed block (which renders again at every flush while an answer streams);
    this sets the object up as that `__init__` does, with the parser reused (see `rich_markdown`).
    `plain_code` draws code blocks as plain text, without loading a lexer.
    """
    return rich_markdown(_code_markdown(plain_code), text, load_parser().parse(text), code_theme)


def load_parser() -> MarkdownIt:
    """The shared markdown-it parser, and Rich's Markdown, imported (slow, so late) and made once."""
    global _parser
    if _parser is None:
        # markdown-it is slow to import: not before first paint.
        import rich.markdown  # noqa: F401
        from markdown_it import MarkdownIt

        _parser = MarkdownIt().enable("strikethrough").enable("table")
    return _parser


@cache
def _code_markdown(plain_code: bool) -> type[Markdown]:
    """Rich's `Markdown`, its code blocks highlighted with a lexer and a theme made once (Rich makes
    both again for each render of a block, and a streaming block renders at every flush); with
    `plain_code`, drawn as plain text as wide and as tall as highlighted, in the code theme's own
    text and background colours (only a lexer's colours are missing)."""
    from pygments.token import Token
    from rich.markdown import CodeBlock, Markdown
    from rich.padding import Padding
    from rich.syntax import Syntax
    from rich.text import Text

    class HighlightedCodeBlock(CodeBlock):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            code = str(self.text).rstrip()
            yield Syntax(
                code, _lexer(self.lexer_name), theme=_syntax_theme(self.theme), word_wrap=True, padding=1
            )

    class PlainCodeBlock(CodeBlock):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            style = _syntax_theme(self.theme).get_style_for_token(Token.Text)
            yield Padding(Text(str(self.text).rstrip(), style=style), 1, style=style, expand=True)

    block = PlainCodeBlock if plain_code else HighlightedCodeBlock

    class CodeMarkdown(Markdown):
        elements: ClassVar[dict[str, type[MarkdownElement]]] = {
            **Markdown.elements,
            "fence": block,
            "code_block": block,
        }

    return CodeMarkdown


@lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer:
    """The Pygments lexer Rich's `Syntax` would make for a code block's language (plain text for one
    Pygments does not know), made once: lexers keep only their options."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=True, tabsize=4)
    except ClassNotFound:
        return _lexer("text")


@cache
def _syntax_theme(name: str) -> SyntaxTheme:
    """Rich's syntax theme `name`, made once (it caches the style of each token it has seen)."""
    from rich.syntax import Syntax

    return Syntax.get_theme(name)


_plain_code: weakref.WeakSet[Rendered] | None = None
"""While highlighting is deferred (`defer_highlighting`): the widgets that drew code plain."""


def defer_highlighting() -> None:
    """Draw code blocks as plain text until `highlight_deferred` (Pygments is still loading).

    A resumed conversation's last answer is what its user waits for, and loading Pygments and a
    lexer (in `warm_up`, a thread) took about as long as opening the store, in the way of the
    first paint. The answer is drawn without them first, then again in colour.
    """
    global _plain_code
    if _plain_code is None:
        _plain_code = weakref.WeakSet()


def drawn_plain(widget: Rendered) -> None:
    """Note that `widget` draws with highlighting deferred: it is drawn again once it is back."""
    if _plain_code is not None:
        _plain_code.add(widget)


def highlighting_deferred() -> bool:
    """Whether code is drawn plain for now (see `defer_highlighting`)."""
    return _plain_code is not None


def highlight_deferred() -> None:
    """Highlight code again (after `warm_up`): the widgets that drew it plain draw it again."""
    global _plain_code
    widgets, _plain_code = _plain_code, None
    for widget in widgets or ():
        widget.render_again()


_WARM_UP = "# Warm\n\n- a **list** with `code`\n\n```python\nprint(1)\n```\n"


def warm_up() -> None:
    """Import and run what the first answer's Markdown needs (in a thread, before any turn).

    The Markdown parser, Pygments and its lexers are slow to load (the first code block stalled
    the event loop with its lexer's set-up while an answer streamed), and the first answer should
    not pay for it.
    """
    console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor", width=40)
    MarkdownRenderer(("", ""), console, "monokai").render(_WARM_UP, 40, highlight=True)


def _has_content(strip: Strip) -> bool:
    return any(segment.text.strip("\n") for segment in strip)


_renderers: weakref.WeakKeyDictionary[App[object], MarkdownRenderer] = weakref.WeakKeyDictionary()


def markdown_renderer(app: App[object]) -> MarkdownRenderer:
    """The Rich renderer for `app`'s current theme (shared by every widget of the app)."""
    code_theme = str(getattr(app, "code_theme", "monokai"))
    key = (app.theme, code_theme)
    renderer = _renderers.get(app)
    if renderer is None or renderer.key != key:
        variables = app.theme_variables or app.get_css_variables()
        console = Console(
            file=io.StringIO(),
            force_terminal=True,
            color_system="truecolor",
            theme=markdown_rich_theme(variables),
            highlight=False,
            emoji=False,
            legacy_windows=False,
            width=80,
        )
        renderer = _renderers[app] = MarkdownRenderer(key, console, code_theme)
    return renderer
