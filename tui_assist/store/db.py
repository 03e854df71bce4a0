"""The store: conversations, turns, rounds, events and audit lines in one SQLite file.

How a host uses it for one turn:

1. `begin_turn` commits a `running` row *before* any model call, so a crash at any later point
   leaves a row that the next `Store.open` finds and marks `cancelled`.
2. The strategy runs with `store.recorder()` as one more observer behind `FanOutObserver`; the
   recorder only buffers events in memory.
3. `commit_turn` writes everything the turn produced in ONE transaction: the turn row, the history
   it adds, rounds, tool calls, events and the audit line. A UI shows the turn as done only after
   it returns. A cancel calls `mark_cancelled` instead, which keeps the events but adds no history.

Only committed turns contribute to `load_history`, so nothing half-written ever reaches a model.

Concurrency: WAL lets readers and one writer proceed together; every write is a `BEGIN IMMEDIATE`
transaction, which takes the write lock up front and waits (the busy timeout) instead of failing
when another process holds it. Within a process one `asyncio.Lock` serializes use of the single
connection, so coroutines never interleave statements of different transactions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import aiosqlite

from tui_assist.core.agent import ToolCallRecord
from tui_assist.core.conversation import Message, Usage
from tui_assist.core.events import (
    NodeStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    UsageRecorded,
    event_from_dict,
    event_to_dict,
)
from tui_assist.core.nodes import new_id
from tui_assist.core.turn import TurnResult
from tui_assist.store.fts import fts_query
from tui_assist.store.lock import InstanceLock, is_alive
from tui_assist.store.migrations import check_version, migrate
from tui_assist.store.recorder import TurnRecorder
from tui_assist.store.rows import (
    AuditLine,
    ConversationRow,
    FlowRunRow,
    RoundRow,
    SearchHit,
    ToolCallRow,
    TurnRow,
    WeekStats,
)

DB_FILENAME = "tui_assist.db"
"""The database file's name inside the data dir."""

RUNNING = "running"
"""`turns.outcome` of a turn that has begun and not yet been committed or cancelled."""

INTERRUPTED = "interrupted: the program stopped before the turn finished"
"""`turns.error` of a turn found `running` after its owner died."""

_TURN_COLUMNS = (
    "id, conversation_id, seq, strategy, prompt, answer, outcome, error, input_tokens, output_tokens, "
    "cache_creation_input_tokens, cache_read_input_tokens, rounds, tool_calls, duration, started_at, "
    "finished_at"
)
_CONVERSATION_COLUMNS = (
    "c.id, c.title, c.model, c.workdir, c.created_at, c.updated_at, "
    "(SELECT COUNT(*) FROM turns t WHERE t.conversation_id = c.id)"
)


class StoreError(Exception):
    """A store operation cannot be done as asked (unknown id, turn already final...)."""


class UnknownIdError(StoreError, LookupError):
    """No conversation or turn has this id (or no unique one starts with it)."""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _usage_from_json(text: str) -> Usage:
    data: dict[str, Any] = json.loads(text)
    return Usage(**data)


def title_from_prompt(prompt: str, limit: int = 60) -> str:
    """A conversation title from its first prompt: the first non-empty line, shortened.

    Args:
        prompt: The first prompt of the conversation.
        limit: The longest title, in characters.

    Returns:
        The title (`untitled` for a blank prompt).
    """
    line = next((part.strip() for part in prompt.splitlines() if part.strip()), "")
    if not line:
        return "untitled"
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def coalesce_text(events: Iterable[TurnEvent]) -> list[TurnEvent]:
    """Merge runs of consecutive `TextDelta`s of one node into one delta.

    A model call streams hundreds of deltas; the tree and the text they fold into are the same
    once merged, so the store keeps one row per run instead of one per chunk. A `StreamRetried`
    or any other event ends a run, so retries replay exactly as they happened.

    Args:
        events: Events in order.

    Returns:
        The same events with delta runs merged.
    """
    merged: list[TurnEvent] = []
    for event in events:
        last = merged[-1] if merged else None
        if isinstance(event, TextDelta) and isinstance(last, TextDelta) and last.node_id == event.node_id:
            merged[-1] = TextDelta(node_id=event.node_id, text=last.text + event.text)
        else:
            merged.append(event)
    return merged


@dataclass(slots=True)
class _EventSummary:
    """What a cancelled turn's events tell about it (there is no `TurnResult`)."""

    usage: Usage = field(default_factory=Usage)
    rounds: int = 0
    calls: list[tuple[int | None, ToolCallRecord]] = field(
        default_factory=lambda: list[tuple[int | None, ToolCallRecord]]()
    )


def _summarize(events: Sequence[TurnEvent]) -> _EventSummary:
    summary = _EventSummary()
    parents: dict[str, str | None] = {}
    round_of: dict[str, int] = {}
    started: dict[str, ToolCallStarted] = {}

    def round_index(node_id: str | None) -> int | None:
        seen: set[str] = set()
        while node_id is not None and node_id not in seen:
            if node_id in round_of:
                return round_of[node_id]
            seen.add(node_id)
            node_id = parents.get(node_id)
        return None

    for event in events:
        match event:
            case NodeStarted():
                parents[event.node_id] = event.parent_id
                if event.node_kind == "round":
                    summary.rounds += 1
                    round_of[event.node_id] = summary.rounds
            case ToolCallStarted():
                parents[event.node_id] = event.parent_id
                started[event.node_id] = event
            case ToolCallFinished():
                call = started.pop(event.node_id, None)
                if call is not None:
                    record = ToolCallRecord(
                        call.node_id,
                        call.parent_id,
                        call.name,
                        call.input,
                        event.output,
                        event.is_error,
                        event.duration,
                    )
                    summary.calls.append((round_index(call.parent_id), record))
            case UsageRecorded():
                summary.usage = summary.usage + event.usage
            case _:
                pass
    for call in started.values():  # started but never finished: the cancel cut it
        record = ToolCallRecord(
            call.node_id, call.parent_id, call.name, call.input, "(not finished)", True, 0.0
        )
        summary.calls.append((round_index(call.parent_id), record))
    return summary


class Store:
    """Async access to the tui-assist database. Create it with `Store.open`."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        *,
        path: Path,
        lock: InstanceLock,
        instance_id: str,
        clock: Callable[[], float],
    ) -> None:
        self._db = db
        self._lock = asyncio.Lock()
        self._instance_lock = lock
        self._instance_id = instance_id
        self._clock = clock
        self._closed = False
        self.path = path
        """The database file."""
        self.recovered: list[str] = []
        """Ids of turns this open found `running` after a crash and marked `cancelled`."""

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    async def open(
        cls, data_dir: Path, *, busy_timeout: float = 10.0, clock: Callable[[], float] = time.time
    ) -> Store:
        """Open (creating if need be) the database under `data_dir` and make it ready.

        Creates the directory, enables WAL, foreign keys and the busy timeout, runs pending
        migrations, and marks `cancelled` every `running` turn whose owning process has died.

        Args:
            data_dir: The data dir (see `tui_assist.paths.data_dir`).
            busy_timeout: Seconds to wait for another process's write lock before failing.
            clock: Source of timestamps (Unix seconds); tests pass a fixed one.

        Returns:
            The open store. Close it with `close`.

        Raises:
            MigrationError: when the database is from a newer version of the program.
            sqlite3.Error: when the file is not a usable database.
        """
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / DB_FILENAME
        instance_id = uuid.uuid4().hex
        lock = InstanceLock(data_dir / "locks", instance_id)
        lock.acquire()
        try:
            db = await aiosqlite.connect(path, timeout=busy_timeout, isolation_level=None)
        except BaseException:
            lock.release()
            raise
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            # Read before anything is written: a file that isn't a database, or one from a newer
            # version, must be refused as it is (switching to WAL alone rewrites its header).
            await check_version(db)
            async with db.execute("PRAGMA journal_mode = WAL") as cursor:
                mode = await cursor.fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                raise sqlite3.OperationalError(f"cannot switch {path} to WAL mode (got {mode!r})")
            await db.execute("PRAGMA synchronous = FULL")
            await db.execute("PRAGMA journal_size_limit = 8388608")
            await db.execute("PRAGMA foreign_keys = ON")
            await migrate(db)
            store = cls(db, path=path, lock=lock, instance_id=instance_id, clock=clock)
            store.recovered = await store._recover()
        except BaseException:
            await db.close()
            lock.release()
            raise
        return store

    async def close(self) -> None:
        """Mark this instance's own unfinished turns `cancelled`, then close the database.

        Closing twice is harmless.
        """
        if self._closed:
            return
        self._closed = True
        try:
            async with self._lock:
                rows = list(
                    await self._db.execute_fetchall(
                        "SELECT 1 FROM turns WHERE outcome = ? AND owner = ? LIMIT 1",
                        (RUNNING, self._instance_id),
                    )
                )
            if rows:
                await self._cancel_owned_by([self._instance_id], reason="cancelled: the store was closed")
        finally:
            try:
                await self._db.close()
            finally:
                self._instance_lock.release()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def recorder(self) -> TurnRecorder:
        """A fresh observer that buffers one turn's events for `commit_turn` / `mark_cancelled`."""
        return TurnRecorder()

    @asynccontextmanager
    async def _read(self) -> AsyncGenerator[aiosqlite.Connection]:
        """A read transaction: one consistent snapshot for several statements."""
        async with self._lock:
            await self._db.execute("BEGIN")
            try:
                yield self._db
            finally:
                with contextlib.suppress(sqlite3.Error):
                    await asyncio.shield(self._end("COMMIT"))

    @asynccontextmanager
    async def _write(self) -> AsyncGenerator[aiosqlite.Connection]:
        """A write transaction: all of its statements land, or none."""
        async with self._lock:
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                await self._end("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    await asyncio.shield(self._end("ROLLBACK"))
                raise

    async def _end(self, statement: str) -> None:
        await self._db.execute(statement)

    async def _recover(self) -> list[str]:
        """Cancel `running` turns whose owner is gone (a crash); leave live instances' turns alone."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT DISTINCT owner FROM turns WHERE outcome = ?", (RUNNING,)
            )
        lock_dir = self._instance_lock.path.parent
        dead = [
            str(row[0])
            for row in rows
            if row[0] != self._instance_id and (not row[0] or not is_alive(lock_dir, str(row[0])))
        ]
        return await self._cancel_owned_by(dead, reason=INTERRUPTED) if dead else []

    async def _cancel_owned_by(self, owners: Sequence[str], *, reason: str) -> list[str]:
        cancelled: list[str] = []
        if not owners:
            return cancelled
        now = self._clock()
        async with self._write() as db:
            for owner in owners:
                turns = await db.execute_fetchall(
                    "SELECT id, conversation_id, strategy, started_at FROM turns "
                    "WHERE outcome = ? AND owner = ?",
                    (RUNNING, owner),
                )
                for turn_id, conversation_id, strategy, started_at in turns:
                    await db.execute(
                        "UPDATE turns SET outcome = 'cancelled', error = ?, finished_at = ? WHERE id = ?",
                        (reason, now, turn_id),
                    )
                    await self._audit(
                        db,
                        AuditLine(
                            at=float(started_at),
                            conversation_id=str(conversation_id),
                            turn_id=str(turn_id),
                            strategy=str(strategy),
                            outcome="cancelled",
                            rounds=0,
                            tool_calls=0,
                            usage=Usage(),
                            duration=0.0,
                        ),
                    )
                    cancelled.append(str(turn_id))
        return cancelled

    # -- conversations -----------------------------------------------------------------------

    async def create_conversation(self, *, title: str, model: str, workdir: str) -> str:
        """Start a new, empty conversation.

        Args:
            title: Shown in lists (see `title_from_prompt`).
            model: The model it talks to.
            workdir: The directory its tools are anchored in.

        Returns:
            The new conversation's id.
        """
        conversation_id = new_id()
        now = self._clock()
        async with self._write() as db:
            await db.execute(
                "INSERT INTO conversations (id, title, model, workdir, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (conversation_id, title, model, workdir, now, now),
            )
        return conversation_id

    async def latest_conversation_id(self) -> str | None:
        """The most recently updated conversation, or None when there is none."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT id FROM conversations ORDER BY updated_at DESC, rowid DESC LIMIT 1"
            )
        return next((str(row[0]) for row in rows), None)

    async def conversation_exists(self, conversation_id: str) -> bool:
        """Whether a conversation has exactly this id."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)
            )
        return bool(list(rows))

    async def resolve_conversation_id(self, text: str) -> str:
        """The conversation whose id is `text` or, failing that, the only one starting with it.

        Raises:
            UnknownIdError: when no conversation, or more than one, matches.
        """
        if await self.conversation_exists(text):
            return text
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        async with self._lock:
            rows = list(
                await self._db.execute_fetchall(
                    "SELECT id FROM conversations WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (escaped + "%",)
                )
            )
        if not text or not rows:
            raise UnknownIdError(f"no conversation with id {text!r}")
        if len(rows) > 1:
            raise UnknownIdError(f"more than one conversation id starts with {text!r}")
        return str(rows[0][0])

    async def get_conversation(self, conversation_id: str) -> ConversationRow | None:
        """One conversation, or None if the id is unknown."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c WHERE c.id = ?", (conversation_id,)
            )
        return next((_conversation_row(row) for row in rows), None)

    async def list_conversations(
        self, limit: int = 50, offset: int = 0, query: str | None = None
    ) -> list[ConversationRow]:
        """Conversations, most recently updated first.

        Args:
            limit: At most this many.
            offset: Skip this many (for paging).
            query: Keep only conversations whose title contains this text (case-insensitive) or
                whose id starts with it.

        Returns:
            The page of conversations.
        """
        sql = f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c"
        params: list[Any] = []
        if query:
            escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            sql += " WHERE c.title LIKE ? ESCAPE '\\' OR c.id LIKE ? ESCAPE '\\'"
            params += [f"%{escaped}%", f"{escaped}%"]
        sql += " ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ? OFFSET ?"
        params += [limit, offset]
        async with self._lock:
            rows = await self._db.execute_fetchall(sql, params)
        return [_conversation_row(row) for row in rows]

    async def load_history(self, conversation_id: str) -> list[Message]:
        """The history sent to the model: finished turns' messages, in order.

        A running turn adds nothing, nor does one a crash cut (it was stored without messages); a
        turn the user interrupted adds what it kept; a refine turn adds only its clean
        `prompt -> answer` pair.
        """
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT m.data FROM turns t JOIN messages m ON m.turn_id = t.id "
                "WHERE t.conversation_id = ? AND t.outcome <> ? "
                "ORDER BY t.seq, m.position",
                (conversation_id, RUNNING),
            )
        return [Message.from_dict(json.loads(row[0])) for row in rows]

    # -- writing turns -----------------------------------------------------------------------

    async def begin_turn(self, *, conversation_id: str, turn_id: str, strategy: str, prompt: str) -> None:
        """Commit a `running` row for a turn about to start. Call it before any model call.

        Raises:
            UnknownIdError: when the conversation does not exist.
            StoreError: when a turn with this id already exists.
        """
        now = self._clock()
        async with self._write() as db:
            if not list(
                await db.execute_fetchall("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,))
            ):
                raise UnknownIdError(f"no conversation with id {conversation_id!r}")
            try:
                await self._insert_turn(db, conversation_id, turn_id, strategy, prompt, now)
            except sqlite3.IntegrityError as exc:
                raise StoreError(f"turn {turn_id!r} already exists") from exc
            await db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))

    async def _insert_turn(
        self,
        db: aiosqlite.Connection,
        conversation_id: str,
        turn_id: str,
        strategy: str,
        prompt: str,
        at: float,
    ) -> None:
        await db.execute(
            "INSERT INTO turns (id, conversation_id, seq, strategy, prompt, outcome, started_at, owner) "
            "VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE conversation_id = ?), "
            "?, ?, ?, ?, ?)",
            (turn_id, conversation_id, conversation_id, strategy, prompt, RUNNING, at, self._instance_id),
        )

    async def commit_turn(
        self, conversation_id: str, result: TurnResult, events: Sequence[TurnEvent]
    ) -> None:
        """Store a finished turn (any outcome but cancelled) in one transaction.

        Updates the turn row, appends `result.history` to the conversation's history, and inserts
        the rounds, tool calls, events and the audit line. If anything fails, nothing of it is
        written and the turn stays `running`. A turn that was never begun is inserted.

        Args:
            conversation_id: The conversation the turn belongs to.
            result: What the strategy returned.
            events: The turn's events (`TurnRecorder.events`).

        Raises:
            UnknownIdError: when the conversation does not exist.
            StoreError: when the turn belongs to another conversation or is already final.
            TypeError: when something in the result cannot be serialized as JSON.
        """
        now = self._clock()
        turn_id = result.turn_id
        async with self._write() as db:
            rows = list(
                await db.execute_fetchall(
                    "SELECT conversation_id, outcome FROM turns WHERE id = ?", (turn_id,)
                )
            )
            if not rows:
                if not list(
                    await db.execute_fetchall("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,))
                ):
                    raise UnknownIdError(f"no conversation with id {conversation_id!r}")
                await self._insert_turn(
                    db, conversation_id, turn_id, result.strategy, result.prompt, now - result.duration
                )
            elif rows[0][0] != conversation_id:
                raise StoreError(f"turn {turn_id!r} belongs to conversation {rows[0][0]!r}")
            elif rows[0][1] != RUNNING:
                raise StoreError(f"turn {turn_id!r} is already {rows[0][1]}")
            usage = result.usage
            await db.execute(
                "UPDATE turns SET strategy = ?, answer = ?, outcome = ?, error = ?, input_tokens = ?, "
                "output_tokens = ?, cache_creation_input_tokens = ?, cache_read_input_tokens = ?, "
                "rounds = ?, tool_calls = ?, duration = ?, finished_at = ? WHERE id = ?",
                (
                    result.strategy,
                    result.answer,
                    result.outcome,
                    result.error,
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_creation_input_tokens,
                    usage.cache_read_input_tokens,
                    len(result.rounds),
                    result.tool_calls,
                    result.duration,
                    now,
                    turn_id,
                ),
            )
            await db.executemany(
                "INSERT INTO messages (turn_id, position, role, data) VALUES (?, ?, ?, ?)",
                [(turn_id, i, m.role, _dumps(m.to_dict())) for i, m in enumerate(result.history)],
            )
            await db.executemany(
                "INSERT INTO rounds (turn_id, idx, answer, verdict, feedback, transcript, usage, "
                "critic_usage) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        turn_id,
                        r.index,
                        r.answer,
                        r.verdict,
                        r.feedback,
                        _dumps([m.to_dict() for m in r.transcript]),
                        _dumps(asdict(r.usage)),
                        _dumps(asdict(r.critic_usage)),
                    )
                    for r in result.rounds
                ],
            )
            calls: list[tuple[int | None, ToolCallRecord]] = [(None, call) for call in result.evidence]
            calls += [(r.index, call) for r in result.rounds for call in r.evidence]
            await self._insert_calls(db, turn_id, calls)
            await self._insert_events(db, turn_id, events)
            await self._audit(
                db,
                AuditLine(
                    at=now,
                    conversation_id=conversation_id,
                    turn_id=turn_id,
                    strategy=result.strategy,
                    outcome=result.outcome,
                    rounds=len(result.rounds),
                    tool_calls=result.tool_calls,
                    usage=usage,
                    duration=result.duration,
                ),
            )
            await db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))

    async def mark_cancelled(
        self, turn_id: str, events: Sequence[TurnEvent], history: Sequence[Message] = ()
    ) -> None:
        """Store a cancelled turn: outcome `cancelled`, its events and tool calls, and `history`.

        Idempotent for a turn that is already cancelled.

        Args:
            turn_id: A turn begun with `begin_turn`.
            events: The turn's events so far (`TurnRecorder.events`).
            history: What the turn leaves in the conversation: an interrupted turn's prompt,
                finished calls and partial answer; nothing for a turn cut by a crash.

        Raises:
            UnknownIdError: when no turn has this id.
            StoreError: when the turn was already committed with another outcome.
        """
        now = self._clock()
        async with self._write() as db:
            rows = list(
                await db.execute_fetchall(
                    "SELECT conversation_id, outcome, strategy, started_at FROM turns WHERE id = ?",
                    (turn_id,),
                )
            )
            if not rows:
                raise UnknownIdError(f"no turn with id {turn_id!r}")
            conversation_id, outcome, strategy, started_at = rows[0]
            if outcome == "cancelled":
                return
            if outcome != RUNNING:
                raise StoreError(f"turn {turn_id!r} is already {outcome}")
            summary = _summarize(events)
            usage = summary.usage
            duration = max(0.0, now - float(started_at))
            answer = history[-1].text if history and history[-1].role == "assistant" else ""
            await db.execute(
                "UPDATE turns SET outcome = 'cancelled', answer = ?, error = ?, input_tokens = ?, "
                "output_tokens = ?, cache_creation_input_tokens = ?, cache_read_input_tokens = ?, "
                "rounds = ?, tool_calls = ?, duration = ?, finished_at = ? WHERE id = ?",
                (
                    answer,
                    "cancelled",
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_creation_input_tokens,
                    usage.cache_read_input_tokens,
                    summary.rounds,
                    len(summary.calls),
                    duration,
                    now,
                    turn_id,
                ),
            )
            await db.executemany(
                "INSERT INTO messages (turn_id, position, role, data) VALUES (?, ?, ?, ?)",
                [(turn_id, i, m.role, _dumps(m.to_dict())) for i, m in enumerate(history)],
            )
            await self._insert_calls(db, turn_id, summary.calls)
            await self._insert_events(db, turn_id, events)
            await self._audit(
                db,
                AuditLine(
                    at=now,
                    conversation_id=str(conversation_id),
                    turn_id=turn_id,
                    strategy=str(strategy),
                    outcome="cancelled",
                    rounds=summary.rounds,
                    tool_calls=len(summary.calls),
                    usage=usage,
                    duration=duration,
                ),
            )
            await db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))

    async def _insert_calls(
        self, db: aiosqlite.Connection, turn_id: str, calls: Sequence[tuple[int | None, ToolCallRecord]]
    ) -> None:
        await db.executemany(
            "INSERT INTO tool_calls (turn_id, seq, round_idx, node_id, parent_id, name, input, output, "
            "is_error, duration) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    turn_id,
                    seq,
                    round_index,
                    call.node_id,
                    call.parent_id,
                    call.name,
                    _dumps(call.input),
                    call.output,
                    int(call.is_error),
                    call.duration,
                )
                for seq, (round_index, call) in enumerate(calls)
            ],
        )

    async def _insert_events(
        self, db: aiosqlite.Connection, turn_id: str, events: Sequence[TurnEvent]
    ) -> None:
        await db.executemany(
            "INSERT INTO events (turn_id, seq, kind, node_id, data) VALUES (?, ?, ?, ?, ?)",
            [
                (turn_id, seq, event.kind, event.node_id, _dumps(event_to_dict(event)))
                for seq, event in enumerate(coalesce_text(events))
            ],
        )

    async def _audit(self, db: aiosqlite.Connection, line: AuditLine) -> None:
        u = line.usage
        await db.execute(
            "INSERT INTO audit (at, conversation_id, turn_id, strategy, outcome, rounds, tool_calls, "
            "input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, duration) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                line.at,
                line.conversation_id,
                line.turn_id,
                line.strategy,
                line.outcome,
                line.rounds,
                line.tool_calls,
                u.input_tokens,
                u.output_tokens,
                u.cache_creation_input_tokens,
                u.cache_read_input_tokens,
                line.duration,
            ),
        )

    # -- reading turns -----------------------------------------------------------------------

    async def get_turn(self, turn_id: str) -> TurnRow | None:
        """One turn, or None if the id is unknown."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                f"SELECT {_TURN_COLUMNS} FROM turns WHERE id = ?", (turn_id,)
            )
        return next((_turn_row(row) for row in rows), None)

    async def turns_page(
        self,
        conversation_id: str,
        *,
        limit: int = 50,
        before_seq: int | None = None,
        after_seq: int | None = None,
        offset: int | None = None,
    ) -> list[TurnRow]:
        """One page of a conversation's turns, always oldest first within the page.

        Pages are read with an index range, so a conversation of any length is never loaded whole.
        With no position the page is the newest `limit` turns (the tail a chat view shows first).

        Args:
            conversation_id: The conversation.
            limit: At most this many turns.
            before_seq: The newest `limit` turns with `seq < before_seq` (page backwards: pass the
                first row's `seq` of the previous page).
            after_seq: The oldest `limit` turns with `seq > after_seq` (page forwards: pass the last
                row's `seq`).
            offset: The `limit` turns starting at this 0-based position.

        Returns:
            The turns, in ascending `seq`.

        Raises:
            ValueError: when more than one of `before_seq`, `after_seq`, `offset` is given.
        """
        given = [p for p in (before_seq, after_seq, offset) if p is not None]
        if len(given) > 1:
            raise ValueError("give at most one of before_seq, after_seq, offset")
        base = f"SELECT {_TURN_COLUMNS} FROM turns WHERE conversation_id = ?"
        newest_first = False
        params: list[Any]
        if after_seq is not None:
            sql, params = base + " AND seq > ? ORDER BY seq LIMIT ?", [conversation_id, after_seq, limit]
        elif offset is not None:
            sql, params = base + " ORDER BY seq LIMIT ? OFFSET ?", [conversation_id, limit, offset]
        elif before_seq is not None:
            sql, params = (
                base + " AND seq < ? ORDER BY seq DESC LIMIT ?",
                [conversation_id, before_seq, limit],
            )
            newest_first = True
        else:
            sql, params = base + " ORDER BY seq DESC LIMIT ?", [conversation_id, limit]
            newest_first = True
        async with self._lock:
            rows = await self._db.execute_fetchall(sql, params)
        turns = [_turn_row(row) for row in rows]
        return turns[::-1] if newest_first else turns

    async def turn_events(self, turn_id: str) -> list[TurnEvent]:
        """A stored turn's events, in order, ready for `tui_assist.core.tree.build_tree`."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT data FROM events WHERE turn_id = ? ORDER BY seq", (turn_id,)
            )
        return [event_from_dict(json.loads(row[0])) for row in rows]

    async def tool_calls(self, turn_id: str) -> list[ToolCallRow]:
        """A turn's tool calls in execution order (every round, sub-agents included)."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT turn_id, seq, round_idx, node_id, parent_id, name, input, output, is_error, duration "
                "FROM tool_calls WHERE turn_id = ? ORDER BY seq",
                (turn_id,),
            )
        return [_tool_call_row(row) for row in rows]

    async def rounds(self, turn_id: str) -> list[RoundRow]:
        """A refine turn's rounds, in order, each with its transcript and evidence."""
        async with self._read() as db:
            rows = await db.execute_fetchall(
                "SELECT idx, answer, verdict, feedback, transcript, usage, critic_usage FROM rounds "
                "WHERE turn_id = ? ORDER BY idx",
                (turn_id,),
            )
            call_rows = await db.execute_fetchall(
                "SELECT turn_id, seq, round_idx, node_id, parent_id, name, input, output, is_error, duration "
                "FROM tool_calls WHERE turn_id = ? AND round_idx IS NOT NULL ORDER BY seq",
                (turn_id,),
            )
        calls = [_tool_call_row(row) for row in call_rows]
        return [
            RoundRow(
                turn_id=turn_id,
                index=int(idx),
                answer=str(answer),
                verdict=str(verdict),
                feedback=str(feedback),
                transcript=tuple(Message.from_dict(m) for m in json.loads(transcript)),
                evidence=tuple(c for c in calls if c.round_index == idx),
                usage=_usage_from_json(usage),
                critic_usage=_usage_from_json(critic_usage),
            )
            for idx, answer, verdict, feedback, transcript, usage, critic_usage in rows
        ]

    async def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Full-text search over every turn's prompt and answer, best match first.

        Any text is accepted: quotes, dashes and FTS operators are treated as plain words.

        Args:
            query: What the user typed; every word must match (as a word prefix).
            limit: At most this many hits.

        Returns:
            The hits, with snippets around the matches.
        """
        expression = fts_query(query)
        if expression is None:
            return []
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT t.id, t.conversation_id, c.title, t.seq, t.outcome, t.started_at, "
                "snippet(turns_fts, 0, '[', ']', '…', 12), snippet(turns_fts, 1, '[', ']', '…', 12) "
                "FROM turns_fts JOIN turns t ON t.pk = turns_fts.rowid "
                "JOIN conversations c ON c.id = t.conversation_id "
                "WHERE turns_fts MATCH ? ORDER BY bm25(turns_fts), t.started_at DESC LIMIT ?",
                (expression, limit),
            )
        return [
            SearchHit(
                turn_id=str(r[0]),
                conversation_id=str(r[1]),
                conversation_title=str(r[2]),
                seq=int(r[3]),
                outcome=str(r[4]),
                started_at=float(r[5]),
                prompt_snippet=str(r[6] or ""),
                answer_snippet=str(r[7] or ""),
            )
            for r in rows
        ]

    # -- flow runs ---------------------------------------------------------------------------

    async def save_flow_run(
        self,
        *,
        run_id: str,
        flow: str,
        outcome: str,
        state: Mapping[str, Any],
        audit: Mapping[str, Any],
        expect_outcome: str | None = None,
    ) -> None:
        """Write a flow run's state and its one audit line, together, in one transaction.

        A run saved again (an approved run completing) keeps its creation time and audit time;
        its state, outcome and audit line are replaced, so a run never has two audit lines.

        Args:
            run_id: The run's id.
            flow: Which flow ran (`grounded`, ...).
            outcome: The run's closed outcome (`awaiting_approval` while it waits for a person).
            state: The flow's state as JSON data.
            audit: The audit line: counts, ids and sizes only, never question or answer text.
            expect_outcome: Write only if the stored run has this outcome now (compare-and-set:
                two approvals of one run cannot both complete it).

        Raises:
            UnknownIdError: when `expect_outcome` is given and the run is not stored.
            StoreError: when `expect_outcome` is given and the stored outcome differs.
        """
        now = self._clock()
        async with self._write() as db:
            if expect_outcome is not None:
                rows = list(
                    await db.execute_fetchall("SELECT outcome FROM flow_runs WHERE run_id = ?", (run_id,))
                )
                if not rows:
                    raise UnknownIdError(f"no flow run with id {run_id!r}")
                if rows[0][0] != expect_outcome:
                    raise StoreError(f"flow run {run_id!r} is {rows[0][0]}, not {expect_outcome}")
            await db.execute(
                "INSERT INTO flow_runs (run_id, flow, outcome, state, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET outcome = excluded.outcome, "
                "state = excluded.state, updated_at = excluded.updated_at",
                (run_id, flow, outcome, _dumps(dict(state)), now, now),
            )
            await db.execute(
                "INSERT INTO flow_audit (run_id, flow, at, outcome, line) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (run_id) DO UPDATE SET outcome = excluded.outcome, line = excluded.line",
                (run_id, flow, now, outcome, _dumps(dict(audit))),
            )

    async def get_flow_run(self, run_id: str) -> FlowRunRow | None:
        """One flow run by its id or, failing that, by the only id starting with `run_id`.

        Returns:
            The run, or None when no run matches.

        Raises:
            UnknownIdError: when more than one run id starts with `run_id`.
        """
        escaped = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        columns = (
            "SELECT r.run_id, r.flow, r.outcome, r.state, a.line, r.created_at, r.updated_at "
            "FROM flow_runs r LEFT JOIN flow_audit a ON a.run_id = r.run_id "
        )
        async with self._lock:
            rows = list(await self._db.execute_fetchall(columns + "WHERE r.run_id = ?", (run_id,)))
            if not rows and run_id:
                rows = list(
                    await self._db.execute_fetchall(
                        columns + "WHERE r.run_id LIKE ? ESCAPE '\\' LIMIT 2", (escaped + "%",)
                    )
                )
        if len(rows) > 1:
            raise UnknownIdError(f"more than one flow run id starts with {run_id!r}")
        return _flow_run_row(rows[0]) if rows else None

    async def flow_runs(
        self, *, outcome: str | None = None, flow: str | None = None, limit: int = 50
    ) -> list[FlowRunRow]:
        """The newest flow runs, newest first; e.g. `outcome="awaiting_approval"` lists pending ones.

        Args:
            outcome: Only runs with this outcome.
            flow: Only runs of this flow.
            limit: At most this many runs.

        Returns:
            The runs.
        """
        sql = (
            "SELECT r.run_id, r.flow, r.outcome, r.state, a.line, r.created_at, r.updated_at "
            "FROM flow_runs r LEFT JOIN flow_audit a ON a.run_id = r.run_id WHERE 1 = 1"
        )
        params: list[Any] = []
        if outcome is not None:
            sql += " AND r.outcome = ?"
            params.append(outcome)
        if flow is not None:
            sql += " AND r.flow = ?"
            params.append(flow)
        sql += " ORDER BY r.created_at DESC, r.run_id LIMIT ?"
        params.append(limit)
        async with self._lock:
            rows = await self._db.execute_fetchall(sql, params)
        return [_flow_run_row(row) for row in rows]

    async def flow_audit_lines(self, limit: int = 100) -> list[dict[str, Any]]:
        """The newest `limit` flow audit lines (one per run), oldest first."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT line FROM flow_audit ORDER BY at DESC, id DESC LIMIT ?", (limit,)
            )
        lines: list[dict[str, Any]] = [json.loads(str(row[0])) for row in rows]
        return lines[::-1]

    # -- audit and stats ---------------------------------------------------------------------

    async def audit_lines(self, limit: int = 100) -> list[AuditLine]:
        """The newest `limit` audit lines, oldest first."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT at, conversation_id, turn_id, strategy, outcome, rounds, tool_calls, input_tokens, "
                "output_tokens, cache_creation_input_tokens, cache_read_input_tokens, duration "
                "FROM audit ORDER BY id DESC LIMIT ?",
                (limit,),
            )
        lines = [
            AuditLine(
                at=float(r[0]),
                conversation_id=str(r[1]),
                turn_id=str(r[2]),
                strategy=str(r[3]),
                outcome=str(r[4]),
                rounds=int(r[5]),
                tool_calls=int(r[6]),
                usage=Usage(int(r[7]), int(r[8]), int(r[9]), int(r[10])),
                duration=float(r[11]),
            )
            for r in rows
        ]
        return lines[::-1]

    async def stats(self) -> list[WeekStats]:
        """Outcome counts and token sums per ISO week (local time), oldest week first.

        Flow runs are counted apart from turns (`flow_runs`, `flow_outcomes`), from their audit
        lines; a week with flow runs only has `turns == 0`.

        SQLite groups the audit lines by day and outcome; days are folded into ISO weeks here
        (this SQLite has no ISO-week format), so the work stays proportional to days, not turns.
        """
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT date(at, 'unixepoch', 'localtime') AS day, outcome, COUNT(*), SUM(input_tokens), "
                "SUM(output_tokens), SUM(cache_creation_input_tokens), SUM(cache_read_input_tokens), "
                "SUM(tool_calls), SUM(rounds) FROM audit GROUP BY day, outcome ORDER BY day"
            )
            flow_rows = await self._db.execute_fetchall(
                "SELECT date(at, 'unixepoch', 'localtime') AS day, outcome, COUNT(*) FROM flow_audit "
                "GROUP BY day, outcome ORDER BY day"
            )
        weeks: dict[str, dict[str, Any]] = {}
        for day, outcome, count, inp, out, cache_w, cache_r, calls, rounds in rows:
            year, week, _ = date.fromisoformat(str(day)).isocalendar()
            key = f"{year}-W{week:02d}"
            agg = weeks.setdefault(
                key, {"turns": 0, "outcomes": {}, "usage": Usage(), "calls": 0, "rounds": 0}
            )
            agg["turns"] += int(count)
            agg["outcomes"][str(outcome)] = agg["outcomes"].get(str(outcome), 0) + int(count)
            agg["usage"] = agg["usage"] + Usage(int(inp), int(out), int(cache_w), int(cache_r))
            agg["calls"] += int(calls)
            agg["rounds"] += int(rounds)
        for day, outcome, count in flow_rows:
            year, week, _ = date.fromisoformat(str(day)).isocalendar()
            key = f"{year}-W{week:02d}"
            agg = weeks.setdefault(
                key, {"turns": 0, "outcomes": {}, "usage": Usage(), "calls": 0, "rounds": 0}
            )
            flows = agg.setdefault("flows", {})
            flows[str(outcome)] = flows.get(str(outcome), 0) + int(count)
        return [
            WeekStats(
                week=key,
                turns=agg["turns"],
                outcomes=dict(sorted(agg["outcomes"].items())),
                usage=agg["usage"],
                tool_calls=agg["calls"],
                rounds=agg["rounds"],
                flow_runs=sum(agg.get("flows", {}).values()),
                flow_outcomes=dict(sorted(agg.get("flows", {}).items())),
            )
            for key, agg in sorted(weeks.items())
        ]

    async def integrity_check(self) -> str:
        """`PRAGMA integrity_check`'s verdict: `ok` for a sound database."""
        async with self._lock:
            rows = await self._db.execute_fetchall("PRAGMA integrity_check")
        return "\n".join(str(row[0]) for row in rows)


def _conversation_row(row: Any) -> ConversationRow:
    return ConversationRow(
        id=str(row[0]),
        title=str(row[1]),
        model=str(row[2]),
        workdir=str(row[3]),
        created_at=float(row[4]),
        updated_at=float(row[5]),
        turn_count=int(row[6]),
    )


def _turn_row(row: Any) -> TurnRow:
    return TurnRow(
        id=str(row[0]),
        conversation_id=str(row[1]),
        seq=int(row[2]),
        strategy=str(row[3]),
        prompt=str(row[4]),
        answer=str(row[5]),
        outcome=str(row[6]),
        error=None if row[7] is None else str(row[7]),
        usage=Usage(int(row[8]), int(row[9]), int(row[10]), int(row[11])),
        rounds=int(row[12]),
        tool_calls=int(row[13]),
        duration=float(row[14]),
        started_at=float(row[15]),
        finished_at=None if row[16] is None else float(row[16]),
    )


def _flow_run_row(row: Any) -> FlowRunRow:
    return FlowRunRow(
        run_id=str(row[0]),
        flow=str(row[1]),
        outcome=str(row[2]),
        state=json.loads(str(row[3])),
        audit=json.loads(str(row[4])) if row[4] is not None else {},
        created_at=float(row[5]),
        updated_at=float(row[6]),
    )


def _tool_call_row(row: Any) -> ToolCallRow:
    return ToolCallRow(
        turn_id=str(row[0]),
        seq=int(row[1]),
        round_index=None if row[2] is None else int(row[2]),
        node_id=str(row[3]),
        parent_id=str(row[4]),
        name=str(row[5]),
        input=json.loads(row[6]),
        output=str(row[7]),
        is_error=bool(row[8]),
        duration=float(row[9]),
    )
