# pyright: strict
"""The grounded flow's `sql_query` tool: one read-only statement at a time, bounded.

A user's SQLite file is opened read-only, and every query passes three independent guards, so a
hole in one is not a hole in the tool:

1. `validate_sql` reads the text: exactly one statement, starting with `SELECT` or `WITH`
   (comments and string literals are skipped, so `';'` inside a literal is fine and a second
   statement hidden after a comment is not).
2. An SQLite *authorizer* allows only reading: `SELECT`, reading columns, functions (minus a
   deny-list) and recursive CTEs. Writes, `ATTACH`, every `PRAGMA` (reads included: the schema is
   given to the model up front), schema changes and transactions are refused by SQLite itself,
   whatever the text looked like.
3. The connection is opened with `mode=ro` and `PRAGMA query_only`, so even an authorizer bug
   could not write.

Limits: at most `max_rows` rows come back (the result says when it was cut), and a progress
handler interrupts a query that runs longer than `timeout` seconds. Errors are returned as text
the model can read and correct, never raised into the flow.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_assist.core.text import clip

SQL_TOOL_NAME = "sql_query"
"""The tool's name, as the model sees it."""
MAX_ROWS = 100
"""Rows a query may return by default."""
TIMEOUT = 2.0
"""Seconds a query may run by default."""
MAX_CELL_CHARS = 200
"""Longer cell values are cut in the tool's output."""
MAX_SQL_CHARS = 4000
"""Longer query texts are refused."""

_DENIED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})
_ALLOWED_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})


class SqlRefused(ValueError):
    """A query was refused before it ran (not read-only, several statements, too long...)."""


def _strip_comments_and_literals(sql: str) -> str:
    """The query with comments removed and string / identifier literals blanked out."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
            out.append(" ")
        elif ch == "/" and sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif ch in "'\"`[":
            close = "]" if ch == "[" else ch
            j = i + 1
            while j < n:
                if sql[j] == close:
                    if close != "]" and j + 1 < n and sql[j + 1] == close:
                        j += 2  # a doubled quote inside the literal
                        continue
                    break
                j += 1
            out.append(ch + "x" + close)
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def validate_sql(sql: str) -> str:
    """Check that `sql` is one read-only statement, and return it without a trailing `;`.

    Args:
        sql: The query text a model (or a rule) proposed.

    Returns:
        The statement to run.

    Raises:
        SqlRefused: when it is empty, too long, several statements, or does not start with
            `SELECT` or `WITH`.
    """
    text = sql.strip()
    if not text:
        raise SqlRefused("the query is empty")
    if len(text) > MAX_SQL_CHARS:
        raise SqlRefused(f"the query is longer than {MAX_SQL_CHARS} characters")
    bare = _strip_comments_and_literals(text).strip()
    while bare.endswith(";"):
        bare = bare[:-1].rstrip()
        text = text.rstrip().removesuffix(";").rstrip()
    if ";" in bare:
        raise SqlRefused("only a single statement is allowed (found more than one)")
    first = bare.split(None, 1)[0].lower() if bare else ""
    if first not in ("select", "with"):
        raise SqlRefused(
            f"only a read-only SELECT (or WITH ... SELECT) is allowed, not {first.upper() or 'nothing'}"
        )
    return text


def _authorize(action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None) -> int:
    if action in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if (arg2 or "").lower() in _DENIED_FUNCTIONS else sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


@dataclass(frozen=True, slots=True)
class QueryResult:
    """What one `sql_query` call returned."""

    sql: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    truncated: bool = False
    """Whether more rows existed than the row limit let through."""
    error: str | None = None
    """Why the query was refused or failed; None when it ran."""
    duration_ms: int = 0

    @property
    def ok(self) -> bool:
        """Whether the query ran."""
        return self.error is None

    def to_text(self, limit: int = MAX_CELL_CHARS) -> str:
        """The result as compact text for the model: a header line, then one line per row.

        Args:
            limit: Longest cell text kept.

        Returns:
            The text (the error message for a failed query).
        """
        if self.error is not None:
            return f"error: {self.error}"
        lines = [" | ".join(self.columns)]
        for row in self.rows:
            cells = ["NULL" if v is None else str(v) for v in row]
            lines.append(" | ".join(clip(c, limit, fold=False) for c in cells))
        more = " (truncated: more rows exist; aggregate or add a LIMIT)" if self.truncated else ""
        lines.append(f"({len(self.rows)} row{'s' if len(self.rows) != 1 else ''}{more})")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table in the user's database."""

    name: str
    type: str


@dataclass(frozen=True, slots=True)
class Table:
    """One table of the user's database, with its columns."""

    name: str
    columns: tuple[Column, ...]


class SqlSource:
    """A user's SQLite file, opened read-only, queried through `query` only.

    Create it with `SqlSource.open`; queries run in a worker thread, one at a time.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path, *, max_rows: int, timeout: float) -> None:
        self._conn = conn
        self._lock = asyncio.Lock()
        self.path = path
        """The database file."""
        self.max_rows = max_rows
        """Rows a query may return."""
        self.timeout = timeout
        """Seconds a query may run."""

    @classmethod
    async def open(cls, path: Path, *, max_rows: int = MAX_ROWS, timeout: float = TIMEOUT) -> SqlSource:
        """Open `path` read-only with the guards in place.

        Args:
            path: An existing SQLite file.
            max_rows: Rows a query may return.
            timeout: Seconds a query may run.

        Returns:
            The source; close it with `close`.

        Raises:
            FileNotFoundError: when the file does not exist.
            sqlite3.DatabaseError: when it is not an SQLite database.
        """
        resolved = path.resolve()
        if not resolved.is_file():
            raise FileNotFoundError(f"no database file at {path}")

        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(f"{resolved.as_uri()}?mode=ro", uri=True, check_same_thread=False)
            try:
                conn.execute("PRAGMA query_only = ON")
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # fails on a non-database
                conn.set_authorizer(_authorize)
            except BaseException:
                conn.close()
                raise
            return conn

        conn = await asyncio.to_thread(connect)
        return cls(conn, resolved, max_rows=max_rows, timeout=timeout)

    async def close(self) -> None:
        """Close the database."""
        async with self._lock:
            await asyncio.to_thread(self._conn.close)

    async def query(self, sql: str) -> QueryResult:
        """Validate and run one query within the row and time limits.

        Args:
            sql: The query text.

        Returns:
            The result; a refused or failed query is a result with `error` set.
        """
        try:
            statement = validate_sql(sql)
        except SqlRefused as exc:
            return QueryResult(sql, error=f"refused: {exc}")
        async with self._lock:
            return await asyncio.to_thread(self._run, statement)

    def _run(self, statement: str) -> QueryResult:
        started = time.monotonic()
        deadline = started + self.timeout

        def over_time() -> int:
            return 1 if time.monotonic() > deadline else 0

        self._conn.set_progress_handler(over_time, 1000)
        try:
            cursor = self._conn.execute(statement)
            rows = cursor.fetchmany(self.max_rows + 1)
            columns = tuple(str(d[0]) for d in cursor.description or ())
            cursor.close()
        except sqlite3.Error as exc:
            elapsed = int((time.monotonic() - started) * 1000)
            message = str(exc)
            if isinstance(exc, sqlite3.OperationalError) and "interrupted" in message:
                message = f"the query ran longer than the {self.timeout:g} s limit and was stopped"
            elif "not authorized" in message or "prohibited" in message:
                message = f"refused: only reading is allowed ({message})"
            elif isinstance(exc, sqlite3.ProgrammingError) and "one statement" in message:
                message = "refused: only a single statement is allowed"
            return QueryResult(statement, error=message, duration_ms=elapsed)
        finally:
            self._conn.set_progress_handler(None, 0)
        truncated = len(rows) > self.max_rows
        kept = tuple(tuple(r) for r in rows[: self.max_rows])
        return QueryResult(
            statement, columns, kept, truncated, duration_ms=int((time.monotonic() - started) * 1000)
        )

    async def tables(self) -> list[Table]:
        """The user tables and views with their columns (SQLite's own tables left out).

        Read with fixed statements of this module's own, outside the authorizer (which refuses
        every pragma); the connection stays read-only.
        """

        def read() -> list[Table]:
            self._conn.set_authorizer(None)
            try:
                names = self._conn.execute(
                    "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY name"
                ).fetchall()
                return [
                    Table(
                        str(name),
                        tuple(
                            Column(str(r[1]), str(r[2] or ""))
                            for r in self._conn.execute(f"PRAGMA table_info({quote_identifier(str(name))})")
                        ),
                    )
                    for (name,) in names
                ]
            finally:
                self._conn.set_authorizer(_authorize)

        async with self._lock:
            return await asyncio.to_thread(read)

    async def distinct_text(self, table: str, column: str, limit: int = 50) -> list[str]:
        """The distinct text values of one column (for the rules planner), at most `limit`.

        Args:
            table: A table name from `tables`.
            column: One of its columns.
            limit: At most this many values.

        Returns:
            The values, or an empty list when the column holds more than `limit` distinct values
            (it is then free text, not a category).
        """
        result = await self.query(
            f"SELECT DISTINCT {quote_identifier(column)} FROM {quote_identifier(table)} "
            f"WHERE typeof({quote_identifier(column)}) = 'text' LIMIT {limit + 1}"
        )
        if not result.ok or len(result.rows) > limit:
            return []
        return [str(r[0]) for r in result.rows]


def quote_identifier(name: str) -> str:
    """`name` as a quoted SQL identifier (inner quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: str) -> str:
    """`value` as a quoted SQL string literal (inner quotes doubled)."""
    return "'" + value.replace("'", "''") + "'"


def schema_text(tables: Sequence[Table]) -> str:
    """The schema as short lines for a prompt: `expenses(id INTEGER, amount REAL, ...)`."""
    return "\n".join(
        f"{t.name}({', '.join(f'{c.name} {c.type}'.strip() for c in t.columns)})" for t in tables
    )
