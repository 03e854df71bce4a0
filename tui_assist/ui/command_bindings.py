"""How the chat binds the command table's commands: their keys, screen actions and palette titles.

The commands themselves (name, arguments, help) are declared once, UI-free, in
`session/commands.py`; this table says, by command name, how the TUI offers each one that has a
key or a palette entry: the Textual action it runs, its key bindings (Textual's key spelling,
remappable by binding id under `[keymap]`) and its palette title. The screen's bindings
(`MainScreen.BINDINGS`) and the palette (`ui/commands.py`) are built from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.binding import Binding

if TYPE_CHECKING:
    from tui_assist.session.commands import Command


@dataclass(frozen=True, slots=True)
class KeyBinding:
    """How a command is bound to a key (remappable by `id` under `[keymap]`)."""

    id: str
    """The stable binding id (kebab-case), as `[keymap]` names it."""
    key: str
    """The default key(s), Textual's spelling (`ctrl+r`, `f4`)."""
    label: str
    """The footer's and `/help`'s word for it."""
    show: bool = True
    """Whether the footer shows it."""
    priority: bool = False
    """Whether it wins over the focused widget's own binding of the same key."""
    tooltip: str = ""


@dataclass(frozen=True, slots=True)
class Bound:
    """How the chat offers one command besides `/NAME`."""

    action: str
    """The Textual action its key and palette entry run (`toggle_refine`; `app.` for the app's)."""
    keys: tuple[KeyBinding, ...] = ()
    palette: str = ""
    """Its palette title (`area: verb`); empty: not in the palette."""


BOUND: dict[str, Bound] = {
    "new": Bound(
        "new_conversation",
        (KeyBinding("new-conversation", "ctrl+n", "New", show=False),),
        "session: new conversation",
    ),
    "resume": Bound(
        "resume_conversation", (KeyBinding("resume-conversation", "ctrl+o", "Resume"),), "session: resume"
    ),
    "refine": Bound(
        "toggle_refine", (KeyBinding("toggle-refine", "ctrl+r", "Refine", priority=True),), "refine: toggle"
    ),
    "export": Bound("export_markdown", palette="session: export markdown"),
    "theme": Bound("app.choose_theme", palette="theme: choose"),
    "rewind": Bound(
        "idle_escape", (KeyBinding("rewind-escape", "escape", "Rewind", priority=True, show=False),)
    ),
    "cancel": Bound(
        "cancel_turn", (KeyBinding("cancel-turn", "escape", "Cancel turn", priority=True),), "turn: cancel"
    ),
    "mode": Bound("cycle_mode", (KeyBinding("cycle-mode", "shift+tab", "Mode", priority=True, show=False),)),
    "tree": Bound("toggle_tree", (KeyBinding("toggle-tree", "f2", "Tree"),), "panels: toggle tree"),
    "flow": Bound("toggle_flow", (KeyBinding("toggle-flow", "f3", "Flow"),), "panels: toggle flow"),
    "review": Bound(
        "review_round",
        (KeyBinding("review-round", "f4", "Review", tooltip="Review the latest refine round"),),
        "round: review latest",
    ),
    "copy": Bound(
        "copy_answer",
        (
            KeyBinding(
                "copy-answer",
                "f5",
                "Copy",
                tooltip="Copy the message selected in the conversation (up/down there), else the last answer",
            ),
        ),
    ),
    "copy-last": Bound("copy_answer(True)", palette="answer: copy last"),
    "find": Bound("find", (KeyBinding("find", "ctrl+f", "Find", show=False),)),
    # Priority: the prompt (a TextArea) binds f6 itself; this one is enabled only after a failure.
    "retry": Bound(
        "retry_turn",
        (
            KeyBinding(
                "retry-turn", "f6", "Retry", priority=True, tooltip="Send the prompt that failed again"
            ),
        ),
    ),
    "grounded": Bound("ask_grounded", palette="flow: grounded question"),
    "approve-flow": Bound(
        "approve_flow", (KeyBinding("approve-flow", "f8", "Approve held run"),), "flow: approve held run"
    ),
    "explore": Bound("app.open_explorer", palette="flow: explore help-desk patterns"),
    "mcp": Bound("list_mcp", palette="mcp: list servers"),
    "mcp-restart": Bound("restart_mcp", palette="mcp: restart server"),
}
"""How each command with a key or a palette entry is offered, by its name in `COMMANDS`, in the
order of `COMMANDS` (so the screen's keys are bound without importing the command table, and its
slash commands, before the first frame)."""


def bound_commands() -> list[tuple[Command, Bound]]:
    """The commands the chat binds, in the command table's order (the footer's and the palette's)."""
    from tui_assist.session.commands import COMMANDS

    return [(command, BOUND[command.name]) for command in COMMANDS if command.name in BOUND]


def command_bindings() -> list[Binding]:
    """The main screen's key bindings (the app's own actions are bound by the app).

    The turn's own keys (those that win over the prompt's: Refine, cancel, mode, retry) come
    first, so the footer shows them first; the rest follow in the table's order.
    """
    bindings = [
        Binding(
            key.key,
            bound.action,
            key.label,
            id=key.id,
            show=key.show,
            priority=key.priority,
            tooltip=key.tooltip,
        )
        for bound in BOUND.values()
        for key in bound.keys
        if not bound.action.startswith("app.")
    ]
    return sorted(bindings, key=lambda binding: not binding.priority)
