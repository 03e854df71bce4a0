"""Audit lines and statistics: one line per stored turn (and per flow run), read back and summed by week."""

from __future__ import annotations

from datetime import date
from typing import Any

import aiosqlite

from tui_assist.core.conversation import Usage
from tui_assist.core.tree import NodeLog
from tui_assist.store.base import StoreBase
from tui_assist.store.rows import AuditLine, WeekStats


def hook_counts(log: NodeLog) -> tuple[int, int]:
    """How many hook runs a turn's log shows, and how many of them blocked."""
    hooks = [r for root in log.roots for r in root.walk() if r.kind == "hook"]
    return len(hooks), sum(1 for r in hooks if r.outcome == "blocked")


async def insert_audit_line(db: aiosqlite.Connection, line: AuditLine) -> None:
    """Write one turn's audit line, inside the caller's transaction."""
    u = line.usage
    await db.execute(
        "INSERT INTO audit (at, conversation_id, turn_id, strategy, outcome, rounds, tool_calls, "
        "input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, duration, "
        "hooks_run, hooks_blocked) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            line.hooks_run,
            line.hooks_blocked,
        ),
    )


class AuditMixin(StoreBase):
    """Reading audit lines back, and the weekly statistics built from them."""

    async def audit_lines(self, limit: int = 100) -> list[AuditLine]:
        """The newest `limit` audit lines, oldest first."""
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT at, conversation_id, turn_id, strategy, outcome, rounds, tool_calls, input_tokens, "
                "output_tokens, cache_creation_input_tokens, cache_read_input_tokens, duration, "
                "hooks_run, hooks_blocked FROM audit ORDER BY id DESC LIMIT ?",
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
                hooks_run=int(r[12]),
                hooks_blocked=int(r[13]),
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
