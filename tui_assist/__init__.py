"""tui_assist: a terminal chat assistant. Importing this package loads no Textual."""

__version__ = "0.1.0"
