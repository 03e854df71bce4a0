r"""@-file mentions: the workdir's files as completion candidates, fuzzy matching, and attaching.

Three parts, all without a UI:

- **Candidates** (`list_candidates`, cached by `MentionCompleter`): in a git repository the
  tracked and the untracked-but-not-ignored files (`git ls-files -co --exclude-standard`, run in
  the workdir so that paths are relative to it even when it is a subfolder of the repository);
  elsewhere, or when git lists nothing (an ignored folder), a breadth-first walk bounded in
  entries and depth that skips version-control data, dependency installs and tool caches. The
  parents of every file are candidates too, spelled with a final `/`.
- **Matching** (`FuzzyMatcher`): a query matches a path when its characters occur in it in
  order, ignoring case. Scoring one path in Python takes microseconds, too long to score 100,000
  per keystroke, so the work is arranged to run in C:
  - paths are sorted shortest first and lowercased once; for each character a mask (one byte per
    path, held as an int) says which paths contain it, so `&` over the query's characters gives
    the paths that hold them all, in any order, in microseconds;
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
- **Attaching** (`expand_mentions`): every `@path` of a prompt that names a file or a directory
  inside the workdir adds a labelled block to the text sent to the model. The blocks come
  *before* the prompt, as Anthropic advises for long documents (the question reads best last):

  ```
  <attached-files>
  <file path="src/app.py">
  …the file's text…
  </file>
  <directory path="src/" entries="3">
  app.py
  util/
  util/x.py
  </directory>
  </attached-files>

  explain @src/app.py
  ```

  A path outside the workdir (`..`, an absolute path, a symlink leading out) is never read, by
  the same rule as the file tools (`tools.base.confine`). Binary files, non-UTF-8 text and special
  files (FIFOs, devices, sockets: never opened) are refused with a reason; a missing path stays
  plain text with a notice. Text is cut at a size limit with a marker.

How a mention is written: `@` starts a mention at the start of the text, after whitespace or
after an opening bracket or quote (`(`, `[`, `{`, `<`, `"`, `'`, a backtick), so `a@b.com` is not
one. The path runs to the next whitespace; trailing punctuation (`,;:!?` and closing brackets and
quotes, and a final `.` after a name) is not part of it, so `see @app.py.` names `app.py`. A path
with spaces is quoted: `@"my notes.txt"` (inside the quotes `\"` and `\\` stand for `"` and `\`).
Mentions inside fenced code blocks (```` ``` ````) are ignored: pasted code is full of decorators.
"""

from __future__ import annotations

import asyncio
import codecs
import functools
import heapq
import html
import operator
import os
import re
import stat
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, islice, repeat
from pathlib import Path
from typing import Literal

from tui_assist.core.text import truncation_marker

MAX_ENTRIES = 200_000
"""At most this many candidates (files and directories) are listed."""
MAX_DEPTH = 20
"""The walk (outside git) descends at most this many directories below the workdir."""
SKIPPED_DIRS = frozenset(
    {
        # version-control data
        ".git",
        ".hg",
        ".svn",
        ".jj",
        # installed dependencies (a virtualenv under any other name is recognised by its pyvenv.cfg)
        "node_modules",
        ".venv",
        # caches that tools rebuild on their own; `.cache` is where XDG puts them all
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".cache",
    }
)
"""Directories the walk neither lists nor enters: nobody means to attach what is inside them."""
GIT_TIMEOUT = 30.0
"""Seconds `git ls-files` may take before the walk is used instead."""

MAX_FILE_CHARS = 50_000
"""Characters of one file attached at most; the rest is cut with a marker."""
MAX_TOTAL_CHARS = 200_000
"""Characters attached at most by one prompt, all files and listings together."""
MAX_DIR_ENTRIES = 500
"""Entries of a directory listing at most (the shallowest are kept)."""
_BINARY_PROBE = 8192
"""A NUL byte in this many first bytes marks a file as binary (as `tools/files.py` does)."""


# ---------------------------------------------------------------------------------------------
# Candidates


@dataclass(frozen=True, slots=True)
class CandidateListing:
    """The files and directories of a workdir that a mention can name."""

    paths: tuple[str, ...]
    """Relative POSIX paths; a directory ends with `/`."""
    source: Literal["git", "walk"]
    """`git` when `git ls-files` listed them, `walk` when the directory tree was walked."""
    truncated: bool
    """True when the entry or depth cap left some out."""
    listed_at: float
    """`time.monotonic()` when listed, to decide when to list again."""


def list_candidates(
    workdir: Path, *, max_entries: int = MAX_ENTRIES, max_depth: int = MAX_DEPTH
) -> CandidateListing:
    """List what a mention can name in `workdir` (blocking: run it in a thread).

    Args:
        workdir: The directory whose files are listed; paths come out relative to it.
        max_entries: At most this many paths (files and directories) are returned.
        max_depth: The walk descends at most this many levels (git lists every level).

    Returns:
        The paths, from git when `workdir` is inside a work tree and git lists anything there,
        otherwise from a walk that skips `SKIPPED_DIRS` and virtualenvs.
    """
    files = _git_files(workdir)
    if files:
        paths, truncated = _with_parent_dirs(files, max_entries)
        return CandidateListing(tuple(paths), "git", truncated, time.monotonic())
    paths, truncated = _walk(workdir, max_entries, max_depth)
    return CandidateListing(tuple(paths), "walk", truncated, time.monotonic())


def _git_files(workdir: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files under `workdir`, or None outside a work tree."""
    try:
        result = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=workdir,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git, workdir gone, too slow
        return None
    if result.returncode != 0:  # not a repository, or one git refuses (safe.directory)
        return None
    names = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    # An unmerged path is listed once per stage; a name with a newline cannot be typed anyway.
    return [name for name in dict.fromkeys(names) if name and "\n" not in name]


def _with_parent_dirs(files: list[str], max_entries: int) -> tuple[list[str], bool]:
    truncated = len(files) > max_entries
    files = files[:max_entries]
    dirs: dict[str, None] = {}
    for name in files:
        cut = name.rfind("/")
        while cut > 0:
            parent = name[: cut + 1]
            if parent in dirs:
                break  # its own parents were added with it
            dirs[parent] = None
            cut = name.rfind("/", 0, cut)
    paths = [*dirs, *files]
    if len(paths) > max_entries:
        truncated = True
        paths = sorted(paths, key=lambda path: (path.count("/", 0, len(path) - 1), path))[:max_entries]
    return paths, truncated


def _walk(root: Path, max_entries: int, max_depth: int) -> tuple[list[str], bool]:
    """Breadth first, so that a capped listing keeps the shallow paths people mention most."""
    found: list[str] = []
    pending: deque[tuple[str, int]] = deque([("", 0)])
    truncated = False
    while pending:
        prefix, depth = pending.popleft()
        files: list[str] = []
        subdirs: list[str] = []
        is_virtualenv = False
        try:
            with os.scandir(os.path.join(root, prefix)) as entries:
                for entry in entries:
                    name = entry.name
                    if "\n" in name:
                        continue
                    if name == "pyvenv.cfg":
                        is_virtualenv = True
                    try:
                        # Never through a symlink: it may leave the workdir or loop.
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        files.append(prefix + name)
                    elif name not in SKIPPED_DIRS:
                        subdirs.append(prefix + name + "/")
        except OSError:  # unreadable or vanished: list what the rest of the tree holds
            continue
        if is_virtualenv and prefix:
            continue  # installed packages, whatever the folder is called
        room = max_entries - len(found)
        entries_here = sorted(subdirs) + sorted(files)
        if len(entries_here) > room:
            found.extend(entries_here[:room])
            return found, True
        found.extend(entries_here)
        if depth < max_depth:
            pending.extend((subdir, depth + 1) for subdir in sorted(subdirs))
        elif subdirs:
            truncated = True
    return found, truncated


# ---------------------------------------------------------------------------------------------
# Fuzzy matching


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
"""Characters whose masks are built with the index rather than on their first keystroke (10 ms each)."""
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
            # Checking a path costs a fraction of a microsecond: checking them all would cost a
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
        """The best paths for `query` (milliseconds; empty before the first load).

        Args:
            query: What follows the `@`, as `MentionQuery.query` gives it.
            limit: How many completions to return.

        Returns:
            Completions, best first.
        """
        state = self._state
        return state[1].search(query, limit) if state else []


# ---------------------------------------------------------------------------------------------
# Finding mentions in a prompt

_OPENERS = "([{<\"'`"
_MENTION = re.compile(r"""(?<![^\s([{<"'`])@(?:"(?P<quoted>(?:[^"\\\n]|\\.)*)"|(?P<bare>[^\s"]\S*))""")
_TRAILING = frozenset(",;:!?)]}>\"'`")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_UNESCAPE = re.compile(r"\\([\"\\])")


@dataclass(frozen=True, slots=True)
class Mention:
    """One `@path` in a prompt."""

    path: str
    """The path as written, without `@`, quotes or trailing punctuation."""
    start: int
    """Index of the `@` in the prompt."""
    end: int
    """Index just past the mention (past the closing quote, before trailing punctuation)."""


@dataclass(frozen=True, slots=True)
class MentionQuery:
    """The mention being typed at the cursor, for a completion list."""

    query: str
    """What is typed between the `@` (or `@"`) and the cursor."""
    start: int
    """Index of the `@`."""
    end: int
    """Index just past the mention's text, which may go on after the cursor."""


def find_mentions(prompt: str) -> list[Mention]:
    """The `@path` mentions of a prompt, in order (see the module docstring for the syntax).

    Args:
        prompt: The prompt as typed.

    Returns:
        Every mention outside fenced code blocks.
    """
    fences = [match.span() for match in _FENCE.finditer(prompt)]
    mentions: list[Mention] = []
    for match in _MENTION.finditer(prompt):
        if any(start <= match.start() < end for start, end in fences):
            continue
        quoted = match.group("quoted")
        if quoted is not None:
            if quoted:
                mentions.append(Mention(_UNESCAPE.sub(r"\1", quoted), match.start(), match.end()))
            continue
        path = _strip_trailing(match.group("bare"))
        if path:
            mentions.append(Mention(path, match.start(), match.start() + 1 + len(path)))
    return mentions


def _strip_trailing(token: str) -> str:
    while token:
        last = token[-1]
        # A final dot ends a sentence, but `..` and `dir/.` are paths.
        if last in _TRAILING or (last == "." and len(token) > 1 and token[-2] not in "./"):
            token = token[:-1]
        else:
            break
    return token


def mention_at(text: str, cursor: int) -> MentionQuery | None:
    """The mention the cursor is in, if any, for completing it.

    Args:
        text: The prompt being typed.
        cursor: The cursor's index in `text`.

    Returns:
        The query typed so far and the span to replace with the chosen `Completion.mention`, or
        None when the cursor is not in a mention (after a space, in an e-mail address).
    """
    line_start = text.rfind("\n", 0, cursor) + 1
    at = text.rfind("@", line_start, cursor)
    while at >= 0:
        if at == 0 or text[at - 1].isspace() or text[at - 1] in _OPENERS:
            typed = text[at + 1 : cursor]
            if typed.startswith('"'):
                body = typed[1:]
                if re.fullmatch(r'(?:[^"\\]|\\.)*\\?', body):  # still inside the quotes
                    close = re.compile(r'(?:[^"\\\n]|\\.)*"?').match(text, cursor)
                    end = close.end() if close else cursor
                    return MentionQuery(_UNESCAPE.sub(r"\1", body.rstrip("\\")), at, end)
                return None
            if any(char.isspace() for char in typed):
                return None
            after = re.compile(r"\S*").match(text, cursor)
            return MentionQuery(typed, at, after.end() if after else cursor)
        at = text.rfind("@", line_start, at)
    return None


def format_mention(path: str) -> str:
    """The text that mentions `path`: `@path`, or `@"path"` when it holds spaces or quotes.

    Args:
        path: A relative path, as `Completion.path` gives it.

    Returns:
        A mention that `find_mentions` reads back as `path`.
    """
    if path and _strip_trailing(path) == path and not any(char.isspace() or char == '"' for char in path):
        return "@" + path
    return '@"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---------------------------------------------------------------------------------------------
# Attaching

RefusalReason = Literal["missing", "outside", "binary", "not_text", "special", "unreadable", "limit"]


@dataclass(frozen=True, slots=True)
class Attached:
    """A file or directory whose content goes to the model."""

    path: str
    """Relative to the workdir, as labelled in the block; a directory ends with `/`."""
    kind: Literal["file", "directory"]
    chars: int
    """Characters of content attached (a file's text, or a listing), marker not counted."""
    omitted: int
    """Characters (or, past what was read of a big file, bytes) left out; 0 when whole."""
    entries: int = 0
    """For a directory, how many entries the listing shows."""

    def describe(self) -> str:
        """One line for the pane or stderr: `attached src/app.py (1,204 characters)`."""
        if self.kind == "directory":
            what = f"listing, {self.entries} {'entry' if self.entries == 1 else 'entries'}"
        else:
            what = f"{self.chars:,} characters"
        cut = f", {self.omitted:,} more cut" if self.omitted else ""
        return f"attached {self.path} ({what}{cut})"


@dataclass(frozen=True, slots=True)
class Refused:
    """A mention that attached nothing, and why."""

    path: str
    """The path as written after `@`."""
    reason: RefusalReason
    detail: str
    """Why, in words for the user."""

    def describe(self) -> str:
        """One line for the pane or stderr: `not attached: @x.bin: a binary file`."""
        return f"not attached: {format_mention(self.path)}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Attachments:
    """What `expand_mentions` made of a prompt."""

    prompt: str
    """The prompt as typed (it keeps its `@path` mentions)."""
    text: str
    """What to send as the user message: the attached blocks, then the prompt."""
    attached: tuple[Attached, ...]
    refused: tuple[Refused, ...]

    def notices(self) -> list[str]:
        """One line per mention, attached ones first: for the pane, or stderr in headless runs."""
        return [item.describe() for item in self.attached] + [item.describe() for item in self.refused]


def expand_mentions(
    prompt: str,
    workdir: Path,
    *,
    max_file_chars: int = MAX_FILE_CHARS,
    max_total_chars: int = MAX_TOTAL_CHARS,
    max_dir_entries: int = MAX_DIR_ENTRIES,
) -> Attachments:
    """Attach the files and directories a prompt mentions (blocking I/O: use a thread in the TUI).

    Each path is attached once, however often and however spelled it is mentioned.

    Args:
        prompt: The prompt as typed.
        workdir: Only paths that resolve inside it are read.
        max_file_chars: A file's text is cut after this many characters, with a marker.
        max_total_chars: All attachments together stay within this many characters; a mention
            past it is refused.
        max_dir_entries: A directory listing shows at most this many entries.

    Returns:
        The text to send, and what was attached or refused.
    """
    # Imported here: `tools.base` loads pydantic, and the TUI imports this module before its
    # first frame (for completion) without needing confinement until a prompt is sent.
    from tui_assist.tools.base import PathOutsideWorkdir, confine

    root = workdir.resolve()
    blocks: list[str] = []
    attached: list[Attached] = []
    refused: list[Refused] = []
    seen: set[Path] = set()
    written: set[str] = set()
    budget = max_total_chars
    for mention in find_mentions(prompt):
        if mention.path in written:
            continue
        written.add(mention.path)
        try:
            resolved = confine(root, mention.path)
        except PathOutsideWorkdir:
            refused.append(Refused(mention.path, "outside", "outside the working directory"))
            continue
        if resolved in seen:
            continue
        seen.add(resolved)
        try:
            info = os.stat(resolved)
        except (FileNotFoundError, NotADirectoryError):
            refused.append(Refused(mention.path, "missing", "no such file or directory"))
            continue
        except OSError as error:
            refused.append(Refused(mention.path, "unreadable", error.strerror or str(error)))
            continue
        label = _label(root, mention.path, resolved, stat.S_ISDIR(info.st_mode))
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            refused.append(Refused(mention.path, "special", f"not a regular file ({_file_type(info)})"))
            continue
        if budget <= 0:
            refused.append(
                Refused(mention.path, "limit", f"the prompt's {max_total_chars:,}-character attachment limit")
            )
            continue
        if stat.S_ISDIR(info.st_mode):
            block, item = _directory_block(resolved, label, max_dir_entries, budget)
        else:
            outcome = _file_block(resolved, label, min(max_file_chars, budget))
            if isinstance(outcome, Refused):
                refused.append(Refused(mention.path, outcome.reason, outcome.detail))
                continue
            block, item = outcome
        budget -= item.chars
        blocks.append(block)
        attached.append(item)
    text = prompt
    if blocks:
        text = "<attached-files>\n" + "\n".join(blocks) + "\n</attached-files>\n\n" + prompt
    return Attachments(prompt, text, tuple(attached), tuple(refused))


def _label(root: Path, written: str, resolved: Path, is_dir: bool) -> str:
    """The path as the user wrote it, tidied (`./a//b` reads `a/b`); the real one if it left the root."""
    lexical = os.path.normpath(os.path.join(root, written))
    relative = os.path.relpath(lexical, root) if Path(lexical).is_relative_to(root) else None
    if relative is None or relative.startswith(".."):
        relative = os.path.relpath(resolved, root)
    relative = Path(relative).as_posix()
    if is_dir:
        return "./" if relative == "." else relative + "/"
    return relative


def _file_type(info: os.stat_result) -> str:
    mode = info.st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _file_block(path: Path, label: str, limit: int) -> tuple[str, Attached] | Refused:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        return Refused(label, "unreadable", error.strerror or str(error))
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):  # replaced since it was checked
            return Refused(label, "special", f"not a regular file ({_file_type(info)})")
        # UTF-8 takes at most 4 bytes a character: this many bytes hold `limit` characters.
        wanted = min(info.st_size, 4 * limit + 4)
        data = b"".join(_read(descriptor, wanted))
    except OSError as error:
        return Refused(label, "unreadable", error.strerror or str(error))
    finally:
        os.close(descriptor)
    if b"\x00" in data[:_BINARY_PROBE]:
        return Refused(label, "binary", "a binary file")
    whole = len(data) >= info.st_size
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=whole)
    except UnicodeDecodeError as error:
        return Refused(label, "not_text", f"not UTF-8 text ({error.reason} at byte {error.start})")
    unread = max(info.st_size - len(data), 0)
    kept = text
    if len(text) > limit or unread:
        cut = min(len(text), limit)
        line_end = text.rfind("\n", 0, cut) + 1
        if line_end > cut // 2:  # end on a whole line unless that loses too much
            cut = line_end
        kept = text[:cut]
    omitted = len(text) - len(kept) + unread
    body = kept + truncation_marker(omitted).lstrip("\n") if omitted else kept
    if body and not body.endswith("\n"):
        body += "\n"
    block = f'<file path="{html.escape(label)}">\n{body}</file>'
    return block, Attached(label, "file", len(kept), omitted)


def _read(descriptor: int, wanted: int) -> Iterator[bytes]:
    while wanted > 0:
        chunk = os.read(descriptor, min(wanted, 1 << 20))
        if not chunk:
            return
        wanted -= len(chunk)
        yield chunk


def _directory_block(path: Path, label: str, max_entries: int, budget: int) -> tuple[str, Attached]:
    files = _git_files(path)
    if files:  # git lists every level: take them all, then keep the shallowest
        paths, more = _with_parent_dirs(files, MAX_ENTRIES)
    else:  # the walk is breadth first: its first entries are the shallowest
        paths, more = _walk(path, max_entries + 1, MAX_DEPTH)
    paths.sort(key=lambda p: (p.count("/", 0, len(p) - 1), p))
    more = more or len(paths) > max_entries
    shown = sorted(paths[:max_entries])  # in tree order
    text = "\n".join(shown)
    if len(text) > budget:
        text = text[: max(text.rfind("\n", 0, budget), 0)]
        shown = text.split("\n") if text else []
        more = True
    note = "\n[... more entries not listed ...]" if more else ""
    body = (text or "(empty)") + note
    block = f'<directory path="{html.escape(label)}" entries="{len(shown)}">\n{body}\n</directory>'
    return block, Attached(label, "directory", len(text), 0, entries=len(shown))


def _mask_of(indices: list[int], count: int) -> int:
    row = bytearray(count)
    deque(map(row.__setitem__, indices, repeat(1)), maxlen=0)  # a scatter, in C
    return int.from_bytes(row, "little")
