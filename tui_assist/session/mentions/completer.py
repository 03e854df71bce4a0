"""The completion source of one workdir: the candidate listing and its matcher, kept together."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from tui_assist.session.mentions.listing import MAX_DEPTH, MAX_ENTRIES, CandidateListing, list_candidates
from tui_assist.session.mentions.matcher import Completion, FuzzyMatcher


class MentionCompleter:
    """The completion source of one workdir: lists once, then matches each keystroke.

    Call `await load()` (a worker thread lists and indexes) when the prompt opens or on the first
    `@`, then `complete()` per keystroke; `load(refresh=True)` lists again (say, when the list
    opens and `age` is more than a few seconds).
    """

    def __init__(self, workdir: Path, *, max_entries: int = MAX_ENTRIES, max_depth: int = MAX_DEPTH) -> None:
        """Create the completer; nothing is listed yet.

        Args:
            workdir: The directory whose files are offered.
            max_entries: Passed to `list_candidates`.
            max_depth: Passed to `list_candidates`.
        """
        self._workdir = workdir
        self._max_entries = max_entries
        self._max_depth = max_depth
        self._state: tuple[CandidateListing, FuzzyMatcher] | None = None
        self._loading = threading.Lock()

    @property
    def listing(self) -> CandidateListing | None:
        """The current listing, or None before the first load."""
        return self._state[0] if self._state else None

    @property
    def age(self) -> float | None:
        """Seconds since the current listing was made, or None before the first load."""
        return time.monotonic() - self._state[0].listed_at if self._state else None

    def load_sync(self, *, refresh: bool = False) -> CandidateListing:
        """List and index the workdir unless already done (blocking).

        Args:
            refresh: List again even when a listing is cached.

        Returns:
            The listing now in use.
        """
        with self._loading:  # two callers at once wait for one listing
            if self._state is None or refresh:
                listing = list_candidates(
                    self._workdir, max_entries=self._max_entries, max_depth=self._max_depth
                )
                self._state = (listing, FuzzyMatcher(listing.paths))
            return self._state[0]

    async def load(self, *, refresh: bool = False) -> CandidateListing:
        """`load_sync` in a worker thread, so the event loop keeps running.

        Args:
            refresh: List again even when a listing is cached.

        Returns:
            The listing now in use.
        """
        return await asyncio.to_thread(self.load_sync, refresh=refresh)

    def complete(self, query: str, limit: int = 20) -> list[Completion]:
        """The best paths for `query` (fast enough per keystroke; empty before the first load).

        Args:
            query: What follows the `@`, as `mention_at(...).query` gives it.
            limit: How many completions to return.

        Returns:
            Completions, best first.
        """
        state = self._state
        return state[1].search(query, limit) if state else []
