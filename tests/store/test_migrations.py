from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite
import pytest

from tui_assist.store import DB_FILENAME, MigrationError, Store
from tui_assist.store.migrations import MIGRATIONS, SCHEMA_VERSION, m001_initial, migrate, schema_version


def _schema(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()


async def test_migrations_twice_are_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    async with aiosqlite.connect(path, isolation_level=None) as db:
        assert await schema_version(db) == 0
        assert await migrate(db) == SCHEMA_VERSION
        first = _schema(path)
        assert await migrate(db) == SCHEMA_VERSION
        # each migration is also harmless when re-run by hand
        await db.execute("BEGIN")
        for migration in MIGRATIONS:
            await migration(db)
        await db.execute("COMMIT")
        assert await schema_version(db) == SCHEMA_VERSION
    assert _schema(path) == first
    names = {name for name, _ in first}
    assert {
        "conversations",
        "turns",
        "messages",
        "rounds",
        "tool_calls",
        "events",
        "audit",
        "turns_fts",
    } <= names


async def test_store_open_twice_keeps_data_and_schema(data_dir: Path) -> None:
    store = await Store.open(data_dir)
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    await store.close()
    schema = _schema(data_dir / DB_FILENAME)
    store = await Store.open(data_dir)
    try:
        assert await store.conversation_exists(conversation_id)
    finally:
        await store.close()
    assert _schema(data_dir / DB_FILENAME) == schema


async def test_wal_foreign_keys_and_busy_timeout_are_on(store: Store) -> None:
    db = store._db  # the store's own connection: foreign_keys and busy_timeout are per connection
    async with db.execute("PRAGMA journal_mode") as cur:
        assert (await cur.fetchone())[0] == "wal"  # type: ignore[index]
    async with db.execute("PRAGMA foreign_keys") as cur:
        assert (await cur.fetchone())[0] == 1  # type: ignore[index]
    async with db.execute("PRAGMA busy_timeout") as cur:
        assert (await cur.fetchone())[0] >= 5000  # type: ignore[index]
    with pytest.raises(sqlite3.IntegrityError):
        await db.execute(
            "INSERT INTO turns (id, conversation_id, seq, strategy, prompt, started_at) VALUES ('x', 'nope', 1, 'agent', '', 0)"
        )
    # WAL is a property of the file: a fresh connection sees it too
    with sqlite3.connect(store.path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_newer_schema_is_refused(data_dir: Path) -> None:
    store = await Store.open(data_dir)
    await store.close()
    with sqlite3.connect(data_dir / DB_FILENAME) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(MigrationError):
        await Store.open(data_dir)


async def test_first_migration_is_m001(tmp_path: Path) -> None:
    assert MIGRATIONS[0] is m001_initial
