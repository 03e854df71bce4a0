"""The prompt history: what the user sent, in every conversation, for `up` / `down` in the prompt.

One small append-only file in the data dir (`prompt_history.jsonl`, one JSON string per line, so
a prompt may span lines) shared by every conversation and every running instance: appending a
line is one `write` on a file opened for appending, which two instances can do at once. The file
is bounded: past twice `max_entries` lines it is replaced (`write_atomically`: a crash leaves the
old file or the new) by one of the newest `max_entries`.

A history that can't be read or written never stops the chat: it is then empty, or not saved.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

FILE_NAME = "prompt_history.jsonl"

MAX_ENTRIES = 1_000
"""Prompts kept (the file is cut back to this many when it has grown to twice as many)."""

MAX_ENTRY_CHARS = 50_000
"""A longer prompt (a pasted log, say) is not remembered."""


class PromptHistory:
    """The prompts sent, oldest first; consecutive duplicates are dropped."""

    def __init__(self, path: Path, *, max_entries: int = MAX_ENTRIES) -> None:
        """Open the history at `path` (read on first use; created on the first `add`).

        Args:
            path: The history file.
            max_entries: How many prompts to keep.
        """
        self.path = path
        self.max_entries = max_entries
        self._entries: list[str] | None = None
        self._lines = 0
        """Lines in the file, to know when to cut it back."""

    @classmethod
    def in_data_dir(cls, folder: Path) -> PromptHistory:
        """The history of the data dir `folder`."""
        return cls(folder / FILE_NAME)

    @property
    def entries(self) -> list[str]:
        """The prompts, oldest first (read from the file the first time)."""
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def reload(self) -> None:
        """Read the file again at next use (another instance may have added to it)."""
        self._entries = None

    def add(self, prompt: str) -> bool:
        """Remember a sent prompt.

        Args:
            prompt: The prompt as sent.

        Returns:
            Whether it was added: blank prompts, overlong ones and a repeat of the newest entry are not.
        """
        entries = self.entries
        if not prompt.strip() or len(prompt) > MAX_ENTRY_CHARS or (entries and entries[-1] == prompt):
            return False
        entries.append(prompt)
        if len(entries) > self.max_entries:
            del entries[: len(entries) - self.max_entries]
        line = json.dumps(prompt, ensure_ascii=False) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._lines + 1 > 2 * self.max_entries:
                self._rewrite(entries)
            else:
                with self.path.open("a", encoding="utf-8") as file:
                    file.write(line)
                self._lines += 1
        except OSError:
            log.warning("cannot save the prompt history in %s", self.path, exc_info=True)
        return True

    def _read(self) -> list[str]:
        try:
            raw = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        except OSError:
            log.warning("cannot read the prompt history in %s", self.path, exc_info=True)
            return []
        lines = raw.splitlines()
        self._lines = len(lines)
        entries: list[str] = []
        for line in lines:
            try:
                value = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash, or another program's edit
            if isinstance(value, str) and value and not (entries and entries[-1] == value):
                entries.append(value)
        return entries[-self.max_entries :]

    def _rewrite(self, entries: list[str]) -> None:
        from tui_assist.tools.safe_io import write_atomically  # only when cutting the file back

        data = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
        write_atomically(self.path, data.encode("utf-8"), new_mode=0o600)
        self._lines = len(entries)


class HistoryBrowser:
    """Walks a `PromptHistory` from the newest prompt back, keeping the draft being typed.

    `previous` starts a walk (remembering the draft), `next` comes back, and past the newest
    entry returns the draft; `reset` ends the walk (a prompt was sent, say).
    """

    def __init__(self, history: PromptHistory) -> None:
        """Browse `history`."""
        self.history = history
        self._entries: list[str] = []
        self._index: int | None = None
        self._draft = ""

    @property
    def browsing(self) -> bool:
        """Whether a walk is under way (`next` then leads back to the draft)."""
        return self._index is not None

    def previous(self, current: str) -> str | None:
        """The prompt before the one shown, or None at the oldest.

        Args:
            current: What the prompt holds now: kept as the draft when a walk starts.
        """
        if self._index is None:
            self.history.reload()
            self._entries = list(self.history.entries)
            self._index = len(self._entries)
            self._draft = current
        if self._index == 0:
            return None
        self._index -= 1
        return self._entries[self._index]

    def next(self) -> str | None:
        """The prompt after the one shown, the draft past the newest, or None when not browsing."""
        if self._index is None:
            return None
        self._index += 1
        if self._index >= len(self._entries):
            self.reset()
            return self._draft
        return self._entries[self._index]

    def reset(self) -> None:
        """End the walk."""
        self._index = None
