"""The rewind picker: the conversation's turns, each with the files it changed; then what to restore.

Choosing a turn shows its plan (files restored, deleted, and the user's own changes that are kept);
`f` / `c` / `b` pick the files, the conversation or both, `enter` rewinds, `escape` goes back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui_assist.core.text import clip
from tui_assist.session.rewind import RewindPlan, RewindScope

if TYPE_CHECKING:
    from tui_assist.session.checkpoints import FileChange
    from tui_assist.session.history import History, TurnRow


@dataclass(frozen=True, slots=True)
class RewindChoice:
    """The plan the user confirmed."""

    plan: RewindPlan
    prompt: str
    """The rewound turn's prompt (it goes back into the input)."""


_SCOPES: dict[str, RewindScope] = {"f": "files", "c": "conversation", "b": "both"}


class RewindScreen(ModalScreen[RewindChoice | None]):
    """Pick a turn to go back to before, then what to restore."""

    DEFAULT_CSS = """
    RewindScreen { align: center middle; background: $background 60%; }
    RewindScreen > #rewind { width: 90%; max-width: 110; height: 80%; border: thick $accent;
        background: $surface; padding: 0 1; }
    RewindScreen #rewind-title { text-style: bold; color: $accent; }
    RewindScreen #rewind-turns { height: 1fr; }
    RewindScreen #rewind-plan { height: 1fr; display: none; }
    RewindScreen.-planning #rewind-turns { display: none; }
    RewindScreen.-planning #rewind-plan { display: block; }
    RewindScreen #rewind-keys { color: $foreground 70%; }
    """
    BINDINGS = [
        Binding("escape", "back", "Back", id="rewind-back"),
        Binding("f", "scope('f')", "Files", id="rewind-files", show=False),
        Binding("c", "scope('c')", "Conversation", id="rewind-conversation", show=False),
        Binding("b", "scope('b')", "Both", id="rewind-both", show=False),
        Binding("enter", "confirm", "Rewind", id="rewind-confirm", show=False),
    ]

    def __init__(self, history: History, conversation_id: str) -> None:
        super().__init__()
        self.history, self.conversation_id = history, conversation_id
        self._prompts: dict[str, str] = {}
        self.plan: RewindPlan | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind"):
            yield Static("Rewind: go back to before a turn", id="rewind-title")
            yield OptionList(id="rewind-turns")
            with VerticalScroll(id="rewind-plan"):
                yield Static(id="rewind-plan-text")
            yield Static("enter choose · escape close", id="rewind-keys")

    def on_mount(self) -> None:
        self.load_turns()

    @work(exclusive=True, group="rewind")
    async def load_turns(self) -> None:
        turns = list(reversed(await self.history.turns(self.conversation_id, 200)))
        # Newest first: the usual way back is one step.
        for turn in turns:
            self._prompts[turn.id] = turn.prompt
        options = [Option(_turn_label(turn, "files …"), id=turn.id) for turn in turns]
        turn_list = self.query_one(OptionList)
        turn_list.add_options(options or [Option("No turns in this conversation yet.", disabled=True)])
        turn_list.highlighted = 0 if options else None
        turn_list.focus()
        if turns:
            self.fill_file_summaries(turns)

    @work(exclusive=True, group="rewind-files")
    async def fill_file_summaries(self, turns: list[TurnRow]) -> None:
        """Each turn's changed files, after the list shows: they cost two git processes a turn."""
        turn_list = self.query_one(OptionList)
        for turn in turns:
            turn_list.replace_option_prompt(
                turn.id,
                _turn_label(turn, _files_text(await self.history.turn_changes(turn.id))),
            )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.show_plan(event.option.id, "both")

    @work(exclusive=True, group="rewind")
    async def show_plan(self, turn_id: str, scope: RewindScope) -> None:
        self.add_class("-planning")
        text = self.query_one("#rewind-plan-text", Static)
        text.update("Working out what would change…")
        self.plan = plan = await self.history.plan_rewind(turn_id, scope)
        text.update(describe_plan(plan))
        self.query_one("#rewind-keys", Static).update(
            "f files only · c conversation only · b both · enter rewind · escape back"
        )

    def action_scope(self, key: str) -> None:
        if self.plan is not None:
            self.show_plan(self.plan.turn_id, _SCOPES[key])

    def action_confirm(self) -> None:
        if self.plan is None:
            turns = self.query_one(OptionList)
            if turns.highlighted is not None:
                option = turns.get_option_at_index(turns.highlighted)
                if option.id is not None:
                    self.show_plan(option.id, "both")
            return
        self.dismiss(RewindChoice(self.plan, self._prompts.get(self.plan.turn_id, "")))

    def action_back(self) -> None:
        if self.plan is None:
            self.dismiss(None)
            return
        self.plan = None
        self.remove_class("-planning")
        self.query_one("#rewind-keys", Static).update("enter choose · escape close")
        self.query_one(OptionList).focus()


def _files_text(changes: list[FileChange] | None) -> str:
    if changes is None:
        return "no file snapshot"
    if not changes:
        return "no files changed"
    names = ", ".join(c.path for c in changes[:3])
    return f"{len(changes)} file(s): {names}" + (" …" if len(changes) > 3 else "")


def _turn_label(turn: TurnRow, files: str) -> Content:
    return Content.assemble(
        (f"#{turn.seq} ", "bold"), clip(turn.prompt, 60), ("  " + files, "$foreground 60%")
    )


def describe_plan(plan: RewindPlan) -> Content:
    """The plan as the picker shows it: what is restored, deleted, kept, and taken out."""
    lines: list[Content] = [Content.styled(f"Rewind to before this turn ({plan.scope}):", "bold")]
    files = plan.files
    if plan.problem and plan.scope != "conversation":
        lines.append(Content.styled(f"Files can't be rewound: {plan.problem}", "$warning"))
    if files is not None:
        lines += [Content.assemble(("  restore ", "$success"), path) for path in files.restore]
        lines += [Content.assemble(("  delete  ", "$error"), path) for path in files.delete]
        if files.user_changed:
            lines.append(
                Content.styled("You changed these after the turn; they are kept as they are:", "$warning")
            )
            lines += [Content(f"  keep    {change.path}") for change in files.user_changed]
        lines += [Content(f"  keep    {k.path} ({k.reason.replace('_', ' ')})") for k in files.kept]
        if files.is_empty:
            lines.append(Content("  the files are as they were before this turn"))
    if plan.turns:
        lines.append(Content(f"Conversation: {len(plan.turns)} turn(s) taken out, this one and later ones."))
    return Content("\n").join(lines)
