"""Turns: begun before the model is called, committed (or cancelled) in one transaction, read back.

A committed turn writes its row, the history it adds, its rounds, tool calls, events and audit
line together; a cancelled one keeps its events and tool calls but adds no history.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

import aiosqlite

from tui_assist.core.conversation import Message, Usage
from tui_assist.core.events import TurnEvent, event_from_dict, event_to_dict
from tui_assist.core.evidence import ToolCallRecord
from tui_assist.core.tree import NodeLog
from tui_assist.store.audit import hook_counts, insert_audit_line
from tui_assist.store.base import RUNNING, StoreBase, StoreError, UnknownIdError, dumps_json, usage_from_json
from tui_assist.store.event_log import coalesce_text, folded, summarize
from tui_assist.store.rows import AuditLine, RoundRow, ToolCallRow, TurnRow

if TYPE_CHECKING:
    from tui_assist.core.turn import TurnResult

_CALL_COLUMNS = "turn_id, seq, round_idx, node_id, parent_id, name, input, output, is_error, duration"
"""The columns `_tool_call_row` reads, in its order."""

_TURN_COLUMNS = (
    "id, conversation_id, seq, strategy, prompt, answer, outcome, error, input_tokens, output_tokens, "
    "cache_creation_input_tokens, cache_read_input_tokens, rounds, tool_calls, duration, started_at, "
    "finished_at"
)


class TurnsMixin(StoreBase):
    """Writing and reading turns."""

    # -- writing turns -----------------------------------------------------------------------

    async def begin_turn(
        self, *, conversation_id: str, turn_id: str, strategy: str, prompt: str, model: str | None = None
    ) -> None:
        """Commit a `running` row for a turn about to start (on `model`). Call it before any model call.

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
                await self._insert_turn(db, conversation_id, turn_id, strategy, prompt, now, model)
            except sqlite3.IntegrityError as exc:
                raise StoreError(f"turn {turn_id!r} already exists") from exc
            await db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))
        self._changed(conversation_id)

    async def _insert_turn(
        self,
        db: aiosqlite.Connection,
        conversation_id: str,
        turn_id: str,
        strategy: str,
        prompt: str,
        at: float,
        model: str | None = None,
    ) -> None:
        await db.execute(
            "INSERT INTO turns "
            "(id, conversation_id, seq, strategy, prompt, outcome, started_at, owner, model) "
            "VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE conversation_id = ?), "
            "?, ?, ?, ?, ?, ?)",
            (
                turn_id,
                conversation_id,
                conversation_id,
                strategy,
                prompt,
                RUNNING,
                at,
                self._instance_id,
                model,
            ),
        )

    async def commit_turn(
        self, conversation_id: str, result: TurnResult, events: Sequence[TurnEvent] | NodeLog
    ) -> None:
        """Store a finished turn (any outcome but cancelled) in one transaction.

        Updates the turn row, appends `result.history` to the conversation's history, and inserts
        the rounds, tool calls, events and the audit line. If anything fails, nothing of it is
        written and the turn stays `running`. A turn that was never begun is inserted.

        Args:
            conversation_id: The conversation the turn belongs to.
            result: What the strategy returned.
            events: The turn's events (`TurnRecorder.events`), or the log that folded them
                (the session's: then nothing folds them again).

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
            await self._insert_messages(db, turn_id, result.history)
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
                        dumps_json([m.to_dict() for m in r.transcript]),
                        dumps_json(asdict(r.usage)),
                        dumps_json(asdict(r.critic_usage)),
                    )
                    for r in result.rounds
                ],
            )
            calls: list[tuple[int | None, ToolCallRecord]] = [(None, call) for call in result.evidence]
            calls += [(r.index, call) for r in result.rounds for call in r.evidence]
            line = AuditLine(
                at=now,
                conversation_id=conversation_id,
                turn_id=turn_id,
                strategy=result.strategy,
                outcome=result.outcome,
                rounds=len(result.rounds),
                tool_calls=result.tool_calls,
                usage=usage,
                duration=result.duration,
            )
            await self._store_ending(db, line, calls, folded(events))
        self._changed(conversation_id)  # (again: a turn may be committed without being begun)

    async def mark_cancelled(
        self, turn_id: str, events: Sequence[TurnEvent] | NodeLog, history: Sequence[Message] = ()
    ) -> None:
        """Store a cancelled turn: outcome `cancelled`, its events and tool calls, and `history`.

        Idempotent for a turn that is already cancelled.

        Args:
            turn_id: A turn begun with `begin_turn`.
            events: The turn's events so far (`TurnRecorder.events`), or their log.
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
            log = folded(events)
            summary = summarize(log)
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
            await self._insert_messages(db, turn_id, history)
            line = AuditLine(
                at=now,
                conversation_id=str(conversation_id),
                turn_id=turn_id,
                strategy=str(strategy),
                outcome="cancelled",
                rounds=summary.rounds,
                tool_calls=len(summary.calls),
                usage=usage,
                duration=duration,
            )
            await self._store_ending(db, line, summary.calls, log)

    async def _store_ending(
        self,
        db: aiosqlite.Connection,
        line: AuditLine,
        calls: Sequence[tuple[int | None, ToolCallRecord]],
        log: NodeLog,
    ) -> None:
        """What every ended turn stores: its calls and events, its audit line, the conversation's time.

        The events and the audit line's hook counts are read off the turn's one fold, `log`.
        """
        await self._insert_calls(db, line.turn_id, calls)
        await self._insert_events(db, line.turn_id, log)
        hooks_run, hooks_blocked = hook_counts(log)
        await insert_audit_line(db, replace(line, hooks_run=hooks_run, hooks_blocked=hooks_blocked))
        await db.execute(
            "UPDATE conversations SET updated_at = ? WHERE id = ?", (line.at, line.conversation_id)
        )

    async def _insert_messages(
        self, db: aiosqlite.Connection, turn_id: str, history: Sequence[Message]
    ) -> None:
        await db.executemany(
            "INSERT INTO messages (turn_id, position, role, data) VALUES (?, ?, ?, ?)",
            [(turn_id, i, m.role, dumps_json(m.to_dict())) for i, m in enumerate(history)],
        )

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
                    dumps_json(call.input),
                    call.output,
                    int(call.is_error),
                    call.duration,
                )
                for seq, (round_index, call) in enumerate(calls)
            ],
        )

    async def _insert_events(self, db: aiosqlite.Connection, turn_id: str, log: NodeLog) -> None:
        await db.executemany(
            "INSERT INTO events (turn_id, seq, kind, node_id, data) VALUES (?, ?, ?, ?, ?)",
            [
                (turn_id, seq, event.kind, event.node_id, dumps_json(event_to_dict(event)))
                for seq, event in enumerate(coalesce_text(log))
            ],
        )

    # -- reading turns -----------------------------------------------------------------------

    async def get_turn(self, turn_id: str) -> TurnRow | None:
        """One turn, or None if the id is unknown."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                f"SELECT {_TURN_COLUMNS} FROM turns WHERE id = ?", (turn_id,)
            )
        return next((_turn_row(row) for row in rows), None)

    async def resolve_turn_id(self, text: str) -> str:
        """The turn whose id is `text` or, failing that, the only one starting with it.

        Raises:
            UnknownIdError: when no turn, or more than one, matches.
        """
        return await self._resolve_id("turns", "turn", text)

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
        base = f"SELECT {_TURN_COLUMNS} FROM turns WHERE conversation_id = ? AND rewound_at IS NULL"
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

    async def all_turns(self, conversation_id: str, *, page: int = 200) -> AsyncIterator[TurnRow]:
        """Every turn of a conversation, oldest first, read `page` turns per query.

        So showing or exporting a 10,000-turn conversation never holds it all in memory.

        Args:
            conversation_id: The conversation.
            page: Turns read per query.

        Returns:
            An async iterator over its turns (rewound ones left out).
        """
        after = 0
        while True:
            rows = await self.turns_page(conversation_id, after_seq=after, limit=page)
            for turn in rows:
                yield turn
            if len(rows) < page:
                return
            after = rows[-1].seq

    async def turn_events(self, turn_id: str) -> list[TurnEvent]:
        """A stored turn's events, in order, ready for `tui_assist.core.tree.build_tree`."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT data FROM events WHERE turn_id = ? ORDER BY seq", (turn_id,)
            )
        return [event_from_dict(json.loads(row[0])) for row in rows]

    async def events_of(self, turn_ids: Sequence[str]) -> dict[str, list[TurnEvent]]:
        """The events of several stored turns in one read (a page of turns to redraw), each in order.

        Args:
            turn_ids: The turns; one without events maps to an empty list.
        """
        found: dict[str, list[TurnEvent]] = {turn_id: [] for turn_id in turn_ids}
        if not found:
            return found
        marks = ", ".join("?" * len(found))
        async with self._lock:
            rows = await self._db.execute_fetchall(
                f"SELECT turn_id, data FROM events WHERE turn_id IN ({marks}) ORDER BY turn_id, seq",
                list(found),
            )
        for turn_id, data in rows:
            found[turn_id].append(event_from_dict(json.loads(data)))
        return found

    async def messages_of(
        self, turn_ids: Sequence[str], *, role: str | None = None
    ) -> dict[str, list[Message]]:
        """The history messages of several stored turns in one read, each turn's in order.

        Args:
            turn_ids: The turns; one without messages maps to an empty list.
            role: Only the messages of this role (`user`, `assistant`), when given.
        """
        found: dict[str, list[Message]] = {turn_id: [] for turn_id in turn_ids}
        if not found:
            return found
        marks = ", ".join("?" * len(found))
        sql = f"SELECT turn_id, data FROM messages WHERE turn_id IN ({marks})"
        params: list[str] = list(found)
        if role is not None:
            sql += " AND role = ?"
            params.append(role)
        async with self._lock:
            rows = await self._db.execute_fetchall(sql + " ORDER BY turn_id, position", params)
        for turn_id, data in rows:
            found[turn_id].append(Message.from_dict(json.loads(data)))
        return found

    async def tool_calls(self, turn_id: str) -> list[ToolCallRow]:
        """A turn's tool calls in execution order (every round, sub-agents included)."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                f"SELECT {_CALL_COLUMNS} FROM tool_calls WHERE turn_id = ? ORDER BY seq",
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
                f"SELECT {_CALL_COLUMNS} FROM tool_calls "
                "WHERE turn_id = ? AND round_idx IS NOT NULL ORDER BY seq",
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
                usage=usage_from_json(usage),
                critic_usage=usage_from_json(critic_usage),
            )
            for idx, answer, verdict, feedback, transcript, usage, critic_usage in rows
        ]


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


def _tool_call_row(row: Any) -> ToolCallRow:
    record = ToolCallRecord(
        node_id=str(row[3]),
        parent_id=str(row[4]),
        name=str(row[5]),
        input=json.loads(row[6]),
        output=str(row[7]),
        is_error=bool(row[8]),
        duration=float(row[9]),
    )
    return ToolCallRow(str(row[0]), int(row[1]), None if row[2] is None else int(row[2]), record)
