"""Numbered schema migrations, tracked by `PRAGMA user_version`.

Migration N brings the schema from version N-1 to N. `migrate` applies each pending one in its own
`BEGIN IMMEDIATE` transaction together with the version bump, re-reading the version under the
write lock, so two processes opening a fresh database at once cannot both apply it. Every
statement is also written to be harmless when repeated (`IF NOT EXISTS`), so running a migration
twice is a no-op rather than an error.

Schema notes:

- `turns.pk` is an explicit `INTEGER PRIMARY KEY` because the FTS index is an external-content
  table keyed by rowid, and `VACUUM` may renumber implicit rowids.
- `turns.outcome` is `running` from `begin_turn` until the turn is committed or cancelled.
  `turns.owner` names the store instance that began it, so crash recovery can tell a dead
  instance's turn from a live one in another process.
- A tool call is stored once, in `tool_calls`, with the round it belongs to; a round's evidence is
  read back from there in execution order.
- Tables with large rows (messages, rounds, tool calls, events) are rowid tables with a
  `UNIQUE (turn_id, ...)` index rather than `WITHOUT ROWID`: rows of a few KB spill into overflow
  pages much earlier in a `WITHOUT ROWID` b-tree, which tripled the file size in the benchmark.
- `audit` has no foreign keys: it is an append-only ledger that outlives what it describes.
- Flow runs (m002) are not turns: `flow_runs` keeps each run's final state (the JSON of the flow's
  typed state, question and draft included), which is what a run stopped as `awaiting_approval`
  is resumed from. `flow_audit` holds exactly one audit line per run (a JSON object with counts,
  ids and sizes only, never question or answer text), keyed by `run_id` so completing an approved
  run rewrites its line instead of adding a second one. Like `audit`, it has no foreign keys.
- Checkpoints (m003): `workdir_checkpoints` holds, per workdir, the shadow-repository commits
  taken before and after each turn (`turn_id` set) and around each rewind (`turn_id` NULL), in
  order: a rewind needs every change the app made since, whatever conversation made it, to tell
  them from the user's own. `turns.rewound_at` marks turns a rewind took out of the conversation:
  they leave the history sent to the model but stay in the database.
- `history_summaries` (m004) keeps, per conversation, the latest summary that stands in for the
  oldest turns in what is sent to the model (the turns themselves are never changed). It covers
  the history up to and including `through_turn_id`; a summary whose turn is deleted goes with it,
  and one whose turn was rewound is not loaded, so a summary never outlives the turns it describes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import aiosqlite


class MigrationError(Exception):
    """The database cannot be brought to this version's schema."""


async def _run(db: aiosqlite.Connection, statements: Sequence[str]) -> None:
    for statement in statements:
        await db.execute(statement)


async def m001_initial(db: aiosqlite.Connection) -> None:
    """Conversations, turns, history messages, rounds, tool calls, events, audit and FTS."""
    await _run(
        db,
        (
            """
            CREATE TABLE IF NOT EXISTS conversations (
                id TEXT PRIMARY KEY,
                title TEXT NOT NULL,
                model TEXT NOT NULL,
                workdir TEXT NOT NULL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS conversations_by_updated ON conversations (updated_at DESC, id)",
            """
            CREATE TABLE IF NOT EXISTS turns (
                pk INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                strategy TEXT NOT NULL,
                prompt TEXT NOT NULL,
                answer TEXT NOT NULL DEFAULT '',
                outcome TEXT NOT NULL DEFAULT 'running',
                error TEXT,
                input_tokens INTEGER NOT NULL DEFAULT 0,
                output_tokens INTEGER NOT NULL DEFAULT 0,
                cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
                cache_read_input_tokens INTEGER NOT NULL DEFAULT 0,
                rounds INTEGER NOT NULL DEFAULT 0,
                tool_calls INTEGER NOT NULL DEFAULT 0,
                duration REAL NOT NULL DEFAULT 0,
                started_at REAL NOT NULL,
                finished_at REAL,
                owner TEXT NOT NULL DEFAULT '',
                UNIQUE (conversation_id, seq)
            )
            """,
            "CREATE INDEX IF NOT EXISTS turns_running ON turns (owner) WHERE outcome = 'running'",
            """
            CREATE TABLE IF NOT EXISTS messages (
                id INTEGER PRIMARY KEY,
                turn_id TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
                position INTEGER NOT NULL,
                role TEXT NOT NULL,
                data TEXT NOT NULL,
                UNIQUE (turn_id, position)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS rounds (
                id INTEGER PRIMARY KEY,
                turn_id TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
                idx INTEGER NOT NULL,
                answer TEXT NOT NULL,
                verdict TEXT NOT NULL,
                feedback TEXT NOT NULL,
                transcript TEXT NOT NULL,
                usage TEXT NOT NULL,
                critic_usage TEXT NOT NULL,
                UNIQUE (turn_id, idx)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS tool_calls (
                id INTEGER PRIMARY KEY,
                turn_id TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                round_idx INTEGER,
                node_id TEXT NOT NULL,
                parent_id TEXT NOT NULL,
                name TEXT NOT NULL,
                input TEXT NOT NULL,
                output TEXT NOT NULL,
                is_error INTEGER NOT NULL,
                duration REAL NOT NULL,
                UNIQUE (turn_id, seq)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS events (
                id INTEGER PRIMARY KEY,
                turn_id TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                kind TEXT NOT NULL,
                node_id TEXT NOT NULL,
                data TEXT NOT NULL,
                UNIQUE (turn_id, seq)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS audit (
                id INTEGER PRIMARY KEY,
                at REAL NOT NULL,
                conversation_id TEXT NOT NULL,
                turn_id TEXT NOT NULL,
                strategy TEXT NOT NULL,
                outcome TEXT NOT NULL,
                rounds INTEGER NOT NULL,
                tool_calls INTEGER NOT NULL,
                input_tokens INTEGER NOT NULL,
                output_tokens INTEGER NOT NULL,
                cache_creation_input_tokens INTEGER NOT NULL,
                cache_read_input_tokens INTEGER NOT NULL,
                duration REAL NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS audit_by_at ON audit (at)",
            """
            CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5 (
                prompt, answer, content = 'turns', content_rowid = 'pk', tokenize = 'unicode61'
            )
            """,
            """
            CREATE TRIGGER IF NOT EXISTS turns_fts_insert AFTER INSERT ON turns BEGIN
                INSERT INTO turns_fts (rowid, prompt, answer) VALUES (new.pk, new.prompt, new.answer);
            END
            """,
            """
            CREATE TRIGGER IF NOT EXISTS turns_fts_delete AFTER DELETE ON turns BEGIN
                INSERT INTO turns_fts (turns_fts, rowid, prompt, answer)
                VALUES ('delete', old.pk, old.prompt, old.answer);
            END
            """,
            """
            CREATE TRIGGER IF NOT EXISTS turns_fts_update AFTER UPDATE OF prompt, answer ON turns BEGIN
                INSERT INTO turns_fts (turns_fts, rowid, prompt, answer)
                VALUES ('delete', old.pk, old.prompt, old.answer);
                INSERT INTO turns_fts (rowid, prompt, answer) VALUES (new.pk, new.prompt, new.answer);
            END
            """,
        ),
    )


async def m002_flow_runs(db: aiosqlite.Connection) -> None:
    """Flow runs (their state, for runs awaiting approval) and one audit line per run."""
    await _run(
        db,
        (
            """
            CREATE TABLE IF NOT EXISTS flow_runs (
                run_id TEXT PRIMARY KEY,
                flow TEXT NOT NULL,
                outcome TEXT NOT NULL,
                state TEXT NOT NULL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS flow_runs_by_outcome ON flow_runs (outcome, created_at)",
            """
            CREATE TABLE IF NOT EXISTS flow_audit (
                id INTEGER PRIMARY KEY,
                run_id TEXT NOT NULL UNIQUE,
                flow TEXT NOT NULL,
                at REAL NOT NULL,
                outcome TEXT NOT NULL,
                line TEXT NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS flow_audit_by_at ON flow_audit (at)",
        ),
    )


async def m003_checkpoints(db: aiosqlite.Connection) -> None:
    """Workdir checkpoints (the shadow repository's commits around each turn) and rewound turns."""
    await _run(
        db,
        (
            """
            CREATE TABLE IF NOT EXISTS workdir_checkpoints (
                id INTEGER PRIMARY KEY,
                workdir TEXT NOT NULL,
                turn_id TEXT,
                before TEXT NOT NULL,
                after TEXT,
                at REAL NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS workdir_checkpoints_by_workdir ON workdir_checkpoints (workdir, id)",
            "CREATE INDEX IF NOT EXISTS workdir_checkpoints_by_turn ON workdir_checkpoints (turn_id)",
        ),
    )
    columns = {row[1] for row in await db.execute_fetchall("PRAGMA table_info(turns)")}
    if "rewound_at" not in columns:  # ALTER TABLE has no IF NOT EXISTS
        await db.execute("ALTER TABLE turns ADD COLUMN rewound_at REAL")


async def m004_history_summaries(db: aiosqlite.Connection) -> None:
    """The summary each conversation's compacted history starts with."""
    await _run(
        db,
        (
            """
            CREATE TABLE IF NOT EXISTS history_summaries (
                conversation_id TEXT PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
                through_turn_id TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
                covered_messages INTEGER NOT NULL,
                covered_turns INTEGER NOT NULL,
                summary TEXT NOT NULL,
                tokens_before INTEGER NOT NULL,
                tokens_after INTEGER NOT NULL,
                created_at REAL NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS history_summaries_by_turn ON history_summaries (through_turn_id)",
        ),
    )


async def m005_audit_hooks(db: aiosqlite.Connection) -> None:
    """The audit line counts the user's hooks that ran in the turn, and those that blocked."""
    columns = {row[1] for row in await db.execute_fetchall("PRAGMA table_info(audit)")}
    for column in ("hooks_run", "hooks_blocked"):
        if column not in columns:  # ALTER TABLE has no IF NOT EXISTS
            await db.execute(f"ALTER TABLE audit ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0")


async def m006_turn_models(db: aiosqlite.Connection) -> None:
    """Each turn keeps the model it ran on (`/model` switches mid-conversation); NULL: the conversation's."""
    columns = {row[1] for row in await db.execute_fetchall("PRAGMA table_info(turns)")}
    if "model" not in columns:
        await db.execute("ALTER TABLE turns ADD COLUMN model TEXT")


Migration = Callable[[aiosqlite.Connection], Awaitable[None]]

MIGRATIONS: tuple[Migration, ...] = (
    m001_initial,
    m002_flow_runs,
    m003_checkpoints,
    m004_history_summaries,
    m005_audit_hooks,
    m006_turn_models,
)
"""Every migration, in order: `MIGRATIONS[n - 1]` brings the schema to version n."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this code writes."""


async def schema_version(db: aiosqlite.Connection) -> int:
    """The database's `user_version`."""
    async with db.execute("PRAGMA user_version") as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row is not None else 0


async def check_version(db: aiosqlite.Connection) -> int:
    """The database's schema version, read without writing anything.

    Raises:
        MigrationError: when the database was written by a newer version of the program.
        sqlite3.DatabaseError: when the file is not a database.
    """
    version = await schema_version(db)
    if version > SCHEMA_VERSION:
        raise MigrationError(
            f"the history database's schema version {version} is newer than this program's "
            f"({SCHEMA_VERSION}): it was written by a newer tui-assist"
        )
    return version


async def migrate(db: aiosqlite.Connection) -> int:
    """Apply every pending migration, each in its own write transaction.

    The connection must be in autocommit mode (`isolation_level=None`).

    Args:
        db: An open connection.

    Returns:
        The schema version after migrating.

    Raises:
        MigrationError: when the database was written by a newer version of the program.
    """
    while True:
        await db.execute("BEGIN IMMEDIATE")
        try:
            version = await check_version(db)
            if version == SCHEMA_VERSION:
                await db.execute("COMMIT")
                return version
            await MIGRATIONS[version](db)
            await db.execute(f"PRAGMA user_version = {version + 1}")
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise
