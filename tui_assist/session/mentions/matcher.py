"""Fuzzy matching of paths against a query typed one keystroke at a time.

A query matches a path when its characters occur in it in order, ignoring case. Scoring paths one
at a time in Python is too slow for a large tree at every keystroke, so the work is arranged to
run in C:

- paths are sorted shortest first and lowercased once; for each character a mask (one byte per
  path, held as an int) says which paths contain it, so `&` over the query's characters gives
  the paths that hold them all, in any order, in one pass of C;
- when few enough paths hold them, each is checked with a regular expression
  whose possessive quantifiers never backtrack (`[^a]*+a[^b]*+b…`), `itertools.compress`
  walking the paths in step with the mask; the matches are kept, so the next keystroke (which
  usually extends the query) only re-checks them;
- up to `score_all` matches are all scored. Past that the query is short, and only the paths
  that can rank high are: the shortest few whose name starts with the query, that contain it as
  typed, whose name or one of whose words starts with its first character, whose words start
  with its characters (an acronym), and of all.

The score rewards matches at the start of a path segment or a word (after `_`, `-`, `.`, a
space, or a camelCase hump), consecutive runs and characters of the file name, and charges gaps;
equal scores go to the shorter path. `bench/bench_mentions.py` measures it on 100,000 files.
"""

from __future__ import annotations

import functools
import heapq
import operator
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, islice, repeat

from tui_assist.session.mentions.syntax import format_mention


@dataclass(frozen=True, slots=True)
class Completion:
    """One path that matches a query, with what to highlight."""

    path: str
    """Relative POSIX path; a directory ends with `/`."""
    positions: tuple[int, ...]
    """Indices into `path` of the characters the query matched, ascending."""
    score: int
    """Higher is better; only comparable between results of one query."""

    @property
    def is_dir(self) -> bool:
        """True for a directory."""
        return self.path.endswith("/")

    @property
    def mention(self) -> str:
        """The text to put in the prompt for this path: `@path`, quoted when needed."""
        return format_mention(self.path)


_WORD_BREAKS = frozenset("_-. ")
_SEPARATORS = _WORD_BREAKS | {"/"}
_TO_SLASH = str.maketrans("_-. ", "////")
_WARM_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789./_-"
"""Characters whose masks are built with the index rather than on their first keystroke (which would lag)."""
_SCORE_CHAR = 16
_BONUS_SEGMENT = 10  # at the start of the path or right after `/`
_BONUS_WORD = 8  # after `_`, `-`, `.` or a space
_BONUS_CAMEL = 7  # an upper-case letter after a lower-case one
_BONUS_CONSECUTIVE = 6
_BONUS_NAME = 4  # in the file name rather than the folders
_PENALTY_GAP = 3
_MAX_GAP_PENALTY = 12


class FuzzyMatcher:
    """Ranks paths against a query typed one keystroke at a time.

    Thread-safe: a search from a worker thread may overlap with another one.
    """

    def __init__(
        self,
        paths: Sequence[str],
        *,
        score_all: int = 400,
        verify_all: int = 40_000,
        preselect: int = 100,
        examine: int = 2000,
    ) -> None:
        """Index `paths` (blocking, about a second for 100,000 paths here: run it in a thread).

        Args:
            paths: The candidates; duplicates and names with a newline are dropped.
            score_all: When at most this many paths match, every one is scored.
            verify_all: When at most this many paths hold every character of the query, each is
                checked for the subsequence, so that the matches are known exactly (and the next
                keystroke only checks those).
            preselect: Otherwise, how many paths each group of likely winners contributes.
            examine: How many paths each group reads at most to find them.
        """
        # Shortest first, then alphabetical (two stable sorts with C keys beat one tuple key).
        ordered = sorted(sorted({path for path in paths if path and "\n" not in path}), key=len)
        self._paths = ordered
        self._lower = [_lower(path) for path in ordered]
        self._name_start = [path.rfind("/", 0, len(path) - 1) + 1 for path in ordered]
        self._indices = list(range(len(ordered)))
        """Walked by `compress` rather than a `range`, which would make an int for every path."""
        self._name_first = [low[start] for low, start in zip(self._lower, self._name_start, strict=True)]
        # Each path with a `/` before every word, so that "a word starts with c" is `"/c" in it`.
        self._words = ("/" + "\n".join(self._lower).translate(_TO_SLASH).replace("\n", "\n/")).split("\n")
        self._score_all = score_all
        self._verify_all = verify_all
        self._preselect = preselect
        self._examine = examine
        self._masks: dict[tuple[str, str], int] = {}
        self._name_masks = self._by_name_start()
        self._recent: dict[str, list[int] | None] = {}
        self._lock = threading.Lock()
        for char in _WARM_CHARS:
            self._char_mask(char)
            self._word_mask(char)

    def __len__(self) -> int:
        return len(self._paths)

    def search(self, query: str, limit: int = 20) -> list[Completion]:
        """The best `limit` paths for `query`, best first.

        Args:
            query: What follows the `@`; case is ignored and a leading `./` is dropped. An empty
                query lists the shortest paths (the top of the tree).
            limit: How many completions to return.

        Returns:
            Paths that contain the query's characters in order, with the matched positions.
        """
        needle = _lower(query.removeprefix("./"))
        if not needle:
            return [Completion(path, (), 0) for path in self._paths[:limit]]
        matches = self._matches(needle)
        if matches is not None and len(matches) <= self._score_all:
            pool: Iterable[int] = matches
        elif matches is not None:
            pool = self._likely_winners(needle, _mask_of(matches, len(self._paths)), verified=True)
        else:
            pool = self._likely_winners(needle, self._holding_all(needle), verified=False)
        ranked = heapq.nsmallest(limit, map(self._scored, pool, repeat(needle)))
        return [
            Completion(self._paths[index], positions, -negative)
            for negative, index, positions in ranked  # index order is (length, path) order
        ]

    # -- which paths match ------------------------------------------------------------------

    def _matches(self, needle: str) -> list[int] | None:
        """Every matching index, ascending; None when too many paths might match to check them all."""
        with self._lock:
            if needle in self._recent:
                return self._recent[needle]
            prefixes = (needle[:cut] for cut in range(len(needle) - 1, 0, -1))
            narrowed = next((self._recent[p] for p in prefixes if self._recent.get(p) is not None), None)
        match = re.compile(_subsequence(needle)).match
        if narrowed is not None:  # the query grew: only the previous matches can still match
            matches = list(compress(narrowed, map(match, map(self._lower.__getitem__, narrowed))))
        else:
            holding = self._holding_all(needle)
            matches = None
            # Checking one path is cheap, but checking them all would cost a
            # keystroke's budget, so a query with so common characters is left to the groups.
            if holding.bit_count() <= self._verify_all:
                matches = list(self._lines(holding, match, examine=None))
        with self._lock:
            if len(self._recent) >= 16:
                del self._recent[next(iter(self._recent))]
            self._recent[needle] = matches
        return matches

    def _holding_all(self, needle: str) -> int:
        """The mask of paths that contain every character of `needle`, in any order."""
        return functools.reduce(operator.and_, map(self._char_mask, set(needle)))

    def _likely_winners(self, needle: str, within: int, *, verified: bool) -> list[int]:
        """Too many paths match to score them all: only those that can rank high are scored.

        That is, among the paths of `within` (the matches, or when they are not known, the paths
        that hold the query's characters), the shortest few of each group: any, whose name starts
        with the query's first character, where a word starts with it, that contain the query
        as it is typed, and whose name starts with it. Each group reads at most `examine` paths.
        """
        limit, first = self._preselect, needle[0]
        subsequence = None if verified else re.compile(_subsequence(needle)).match
        named = within & self._name_masks.get(first, 0)
        words = within & self._word_mask(first)
        escaped = [re.escape(char) for char in needle]
        groups = [
            (within, subsequence, self._lower),
            (named, subsequence, self._lower),
            (words, subsequence, self._lower),
            (within, re.compile("".join(escaped)).search, self._lower),
            (named, re.compile("(?:^|/)" + "".join(escaped) + "[^/]*/?$").search, self._lower),
        ]
        if not _SEPARATORS.intersection(needle):  # else `_words` (separators made `/`) misleads
            # an acronym: every character starts a word (`cfg` for `cart_form.go`)
            acronym = re.compile(".*?".join("/" + char for char in escaped)).search
            groups.append((words, acronym, self._words))
        pool: set[int] = set()
        for mask, test, texts in groups:
            pool.update(islice(self._lines(mask, test, texts, examine=self._examine), limit))
        return sorted(pool)

    def _lines(
        self,
        mask: int,
        test: Callable[[str], object] | None,
        texts: list[str] | None = None,
        *,
        examine: int | None,
    ) -> Iterator[int]:
        """The indices in `mask`, ascending, lazily; with `test`, those whose text it accepts.

        `compress` walks the mask and the texts in step, in C: no Python per path.

        Args:
            mask: One byte per path, 1 for those to read.
            test: Called with the text of each path read; None keeps them all.
            texts: One text per path for `test` (the lowered paths when None).
            examine: Read at most this many paths of the mask; None reads them all.
        """
        selected = mask.to_bytes(len(self._paths), "little")
        indices = islice(compress(self._indices, selected), examine)
        if test is None:
            return indices
        read = islice(compress(self._lower if texts is None else texts, selected), examine)
        return compress(indices, map(test, read))

    # -- masks: one byte per path (1 when it has the property), as an int for fast `&` ------------

    def _char_mask(self, char: str) -> int:
        """Paths that contain `char`."""
        key = ("char", char)
        mask = self._masks.get(key)
        if mask is None:
            mask = int.from_bytes(bytes(map(operator.contains, self._lower, repeat(char))), "little")
            self._masks[key] = mask
        return mask

    def _word_mask(self, char: str) -> int:
        """Paths where a path segment or a word (after `_`, `-`, `.` or a space) starts with `char`."""
        key = ("word", char)
        mask = self._masks.get(key)
        if mask is None:
            mask = int.from_bytes(bytes(map(operator.contains, self._words, repeat("/" + char))), "little")
            self._masks[key] = mask
        return mask

    def _by_name_start(self) -> dict[str, int]:
        """For each character, the paths whose last segment starts with it."""
        rows: dict[str, bytearray] = {}
        count = len(self._paths)
        for index, char in enumerate(self._name_first):
            row = rows.get(char)
            if row is None:
                row = rows[char] = bytearray(count)
            row[index] = 1
        return {char: int.from_bytes(row, "little") for char, row in rows.items()}

    # -- scoring ----------------------------------------------------------------------------

    def _scored(self, index: int, needle: str) -> tuple[int, int, tuple[int, ...]]:
        path, low, name_start = self._paths[index], self._lower[index], self._name_start[index]
        # Align the query as far right as it goes (into the file name), then pull it tight by
        # matching forward from where that alignment starts.
        end = len(low)
        for char in reversed(needle):
            end = low.rfind(char, 0, end)
        positions: list[int] = []
        at = end
        for char in needle:
            at = low.find(char, at)
            positions.append(at)
            at += 1
        best = _score(path, low, name_start, positions)
        run = low.rfind(needle)
        if run >= 0 and run != positions[0]:
            contiguous = list(range(run, run + len(needle)))
            score = _score(path, low, name_start, contiguous)
            if score > best:
                best, positions = score, contiguous
        return -best, index, tuple(positions)


def _score(path: str, low: str, name_start: int, positions: list[int]) -> int:
    score = 0
    previous = -2
    run_bonus = 0
    for position in positions:
        if position == 0 or low[position - 1] == "/":
            bonus = _BONUS_SEGMENT
        elif low[position - 1] in _WORD_BREAKS:
            bonus = _BONUS_WORD
        elif path[position].isupper() and path[position - 1].islower():
            bonus = _BONUS_CAMEL
        else:
            bonus = 0
        if previous < 0:
            run_bonus = bonus
            bonus *= 2  # where the match starts counts double
        elif position == previous + 1:
            # A run keeps the bonus it started with: `app` at a word start beats `a/p/p`.
            bonus = max(bonus, run_bonus, _BONUS_CONSECUTIVE)
        else:
            score -= _PENALTY_GAP + min(position - previous - 1, _MAX_GAP_PENALTY)
            run_bonus = bonus
        score += _SCORE_CHAR + bonus
        if position >= name_start:
            score += _BONUS_NAME
        previous = position
    return score


def _lower(text: str) -> str:
    """Lower case with one character per character, so positions stay valid (`İ` lowers to two)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(char if len(char.lower()) != 1 else char.lower() for char in text)


def _subsequence(needle: str) -> str:
    """A pattern for `needle`'s characters in order that never backtracks (possessive `*+`)."""
    return "".join(f"[^{char}]*+{char}" for char in map(re.escape, needle))


def _mask_of(indices: list[int], count: int) -> int:
    row = bytearray(count)
    deque(map(row.__setitem__, indices, repeat(1)), maxlen=0)  # a scatter, in C
    return int.from_bytes(row, "little")
