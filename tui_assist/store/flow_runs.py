"""Flow runs: a workflow run's state and its one audit line, saved together (and completed later)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tui_assist.store.base import StoreBase, StoreError, UnknownIdError, dumps_json, like_escaped
from tui_assist.store.rows import FlowRunRow


class FlowRunsMixin(StoreBase):
    """Saving and reading flow runs and their audit lines."""

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
                (run_id, flow, outcome, dumps_json(dict(state)), now, now),
            )
            await db.execute(
                "INSERT INTO flow_audit (run_id, flow, at, outcome, line) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (run_id) DO UPDATE SET outcome = excluded.outcome, line = excluded.line",
                (run_id, flow, now, outcome, dumps_json(dict(audit))),
            )

    async def get_flow_run(self, run_id: str) -> FlowRunRow | None:
        """One flow run by its id or, failing that, by the only id starting with `run_id`.

        Returns:
            The run, or None when no run matches.

        Raises:
            UnknownIdError: when more than one run id starts with `run_id`.
        """
        escaped = like_escaped(run_id)
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
