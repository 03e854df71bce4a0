"""The prompt: a multi-line editor where enter sends and shift+enter / ctrl+j add a line."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class Prompt(TextArea):
    """Where the user types. Posts `Prompt.Submitted` on enter."""

    DEFAULT_CSS = """
    Prompt {
        height: auto;
        min-height: 3;
        max-height: 10;
        border: tall $border-blurred;
        background: $surface;
    }
    Prompt:focus {
        border: tall $primary;
    }
    Prompt.-running {
        border: tall $warning 60%;
    }
    """
    BINDINGS = [
        Binding("enter", "submit", "Send", id="send"),
        Binding("shift+enter,ctrl+j,alt+enter", "newline", "Newline", id="insert-newline", show=False),
    ]
    _OWN_ACTIONS = ("submit", "newline")

    class Submitted(Message):
        """The user sent a prompt."""

        def __init__(self, prompt: Prompt, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

        @property
        def control(self) -> Prompt:
            return self.prompt

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.placeholder = "Ask something…  (enter sends · shift+enter or ctrl+j: new line)"

    async def _on_key(self, event: events.Key) -> None:
        # TextArea inserts a newline for enter before bindings are consulted, and a priority
        # binding would run ahead of characters still queued here (typing fast and pressing
        # enter sent half the prompt). So our two bindings are resolved here, in key order,
        # with the user's keymap applied.
        bindings = self._bindings.copy()
        if self.app._keymap:
            bindings.apply_keymap(self.app._keymap)
        for binding in bindings.key_to_bindings.get(event.key, ()):
            if binding.action in self._OWN_ACTIONS:
                event.stop()
                event.prevent_default()
                await self.run_action(binding.action)
                return
        await super()._on_key(event)

    def action_submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        self.clear()
        self.post_message(self.Submitted(self, text))

    def action_newline(self) -> None:
        self.insert("\n")
