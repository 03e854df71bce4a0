# pyright: strict
"""The grounded flow's corpus index: Markdown and text files, chunked, in SQLite FTS5.

Each file becomes a document (`handbook-expenses.md` → `handbook-expenses`) cut into chunks
along its headings and paragraphs; a chunk id names both (`handbook-expenses#c0004`), so an
answer's citation can be checked against what retrieval actually returned.

Re-indexing is incremental: `refresh` compares each file's size and modification time with what
the index recorded, reads (and hashes) only the files that differ, and rewrites the chunks of a
file only when its content hash changed. A corpus of unchanged files costs one `stat` per file.

Ranking and relevance are two separate questions here:

- *Order* comes from FTS5's BM25 over the chunk's title, heading and text (heading words weigh
  most: they say what a chunk is about).
- *Relevance* is a normalized score in [0, 1]: the IDF-weighted share of the question's content
  terms that the chunk contains. Raw BM25 values depend on corpus size and are not comparable
  between corpora, so a fixed relevance floor over them would mean nothing; the share is
  comparable, and a term that appears nowhere in the corpus (the rarest of all) pulls it down
  hardest, which is what makes an off-topic question fall under the floor.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiosqlite

INDEXED_SUFFIXES = frozenset({".md", ".markdown", ".txt"})
"""The file types the index reads; anything else in the corpus (e.g. `glossary.json`) is skipped."""
MAX_FILE_BYTES = 2_000_000
"""Larger files are skipped: a corpus of documents, not of data dumps."""
CHUNK_WORDS = 90
"""A chunk grows paragraph by paragraph up to about this many words."""
CANDIDATES = 30
"""Chunks BM25 hands to the relevance scoring per search."""
PREFIX_MIN_CHARS = 4
"""Query terms at least this long also match as a prefix."""
MAX_QUERY_TERMS = 16
"""Content terms of a question used for retrieval (the rest are ignored)."""

STOP_WORDS = frozenset(
    """a about after all also am an and any are as at be been before being but by can could did do
    does doing for from get got had has have how i if in into is it its let may me might more most
    much must my need no not of on once only or our out over own per please same shall should so
    some such than that the their them then there these they this those through to too under until
    up us very was we were what when where which while who whom why will with would you your
    tell know want many ask asking draft drafting write compose explain describe summarize
    summarise""".split()
)
"""Words that say nothing about a topic (including what to *do* with an answer: draft, explain);
dropped from queries."""

_WORD = re.compile(r"[a-z0-9]+")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_SLUG = re.compile(r"[^a-z0-9]+")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """
    CREATE TABLE IF NOT EXISTS files (
        path TEXT PRIMARY KEY,
        doc_id TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        sha256 TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS chunks (
        id INTEGER PRIMARY KEY,
        chunk_id TEXT NOT NULL UNIQUE,
        doc_id TEXT NOT NULL,
        title TEXT NOT NULL,
        heading TEXT NOT NULL,
        text TEXT NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (doc_id)",
    """
    CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (
        title, heading, text, content = 'chunks', content_rowid = 'id', tokenize = 'porter unicode61'
    )
    """,
    """
    CREATE TRIGGER IF NOT EXISTS chunks_fts_insert AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts (rowid, title, heading, text)
        VALUES (new.id, new.title, new.heading, new.text);
    END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
        VALUES ('delete', old.id, old.title, old.heading, old.text);
    END
    """,
)


def query_terms(text: str) -> list[str]:
    """The content terms of a text: lower-cased words, stop words dropped, first occurrence kept.

    Args:
        text: A question or a rephrased query.

    Returns:
        At most `MAX_QUERY_TERMS` distinct terms, in order of appearance.
    """
    terms = [w for w in _WORD.findall(text.casefold()) if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())]
    return list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]


def doc_id_for(relative: str) -> str:
    """A document id from a corpus-relative path: `Policies/Travel Guide.md` → `policies-travel-guide`.

    Args:
        relative: The path, with `/` separators.

    Returns:
        The id (lower-case letters, digits and dashes; `doc` if nothing is left).
    """
    stem = relative.rsplit(".", 1)[0] if "." in relative.rsplit("/", 1)[-1] else relative
    return _SLUG.sub("-", stem.casefold()).strip("-") or "doc"


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a document, as indexed."""

    chunk_id: str
    """`<doc_id>#c<NNNN>`, numbered from 1 within the document."""
    doc_id: str
    title: str
    """The document's title (its first `#` heading, or its file name)."""
    heading: str
    """The section path inside the document (`Hotels`, or `Claims > Receipts`); may be empty."""
    text: str


def chunk_document(
    doc_id: str, text: str, *, fallback_title: str, max_words: int = CHUNK_WORDS
) -> list[Chunk]:
    """Cut a Markdown or plain-text document into chunks along headings and paragraphs.

    A chunk never spans two sections. Paragraphs of one section are joined until a chunk would
    pass `max_words`; a single longer paragraph is cut between sentences.

    Args:
        doc_id: The document's id.
        text: Its content.
        fallback_title: The title when the document has no level-1 heading.
        max_words: The size a chunk grows to.

    Returns:
        The chunks, in document order.
    """
    title = fallback_title
    stack: list[tuple[int, str]] = []
    sections: list[tuple[str, list[str]]] = [("", [])]
    paragraph: list[str] = []

    def end_paragraph() -> None:
        if paragraph:
            sections[-1][1].append(" ".join(paragraph))
            paragraph.clear()

    for raw in text.splitlines():
        line = raw.strip()
        match = _HEADING.match(line)
        if match:
            end_paragraph()
            level, name = len(match.group(1)), match.group(2).strip()
            if level == 1 and title == fallback_title and not stack:
                title = name
                continue
            stack = [(lv, n) for lv, n in stack if lv < level] + [(level, name)]
            sections.append((" > ".join(n for _, n in stack), []))
        elif not line:
            end_paragraph()
        else:
            paragraph.append(line)
    end_paragraph()
    if fallback_title == title and not any(h for h, _ in sections):
        # a plain-text file: its first short line is its title
        first = sections[0][1]
        if first and len(first[0].split()) <= 8 and not first[0].endswith("."):
            title = first.pop(0)

    chunks: list[Chunk] = []
    for heading, paragraphs in sections:
        for body in _pack(paragraphs, max_words):
            chunks.append(Chunk(f"{doc_id}#c{len(chunks) + 1:04d}", doc_id, title, heading, body))
    return chunks


def _pack(paragraphs: Sequence[str], max_words: int) -> list[str]:
    pieces: list[str] = []
    for paragraph in paragraphs:
        if len(paragraph.split()) <= max_words:
            pieces.append(paragraph)
            continue
        current: list[str] = []
        for sentence in _SENTENCE.split(paragraph):
            if current and len(" ".join([*current, sentence]).split()) > max_words:
                pieces.append(" ".join(current))
                current = []
            current.append(sentence)
        if current:
            pieces.append(" ".join(current))
    packed: list[str] = []
    for piece in pieces:
        if packed and len(packed[-1].split()) + len(piece.split()) <= max_words:
            packed[-1] = f"{packed[-1]}\n\n{piece}"
        else:
            packed.append(piece)
    return packed


@dataclass(frozen=True, slots=True)
class RefreshReport:
    """What one `refresh` changed in the index."""

    added: tuple[str, ...] = ()
    """Doc ids indexed for the first time."""
    updated: tuple[str, ...] = ()
    """Doc ids whose content changed and whose chunks were rewritten."""
    removed: tuple[str, ...] = ()
    """Doc ids whose file is gone."""
    unchanged: int = 0
    """Files left as they were."""
    chunks: int = 0
    """Chunks in the index afterwards."""

    @property
    def changed(self) -> bool:
        """Whether anything was added, rewritten or removed."""
        return bool(self.added or self.updated or self.removed)


@dataclass(frozen=True, slots=True)
class Hit:
    """A chunk a search returned, with its scores."""

    chunk: Chunk
    score: float
    """The normalized relevance in [0, 1]: the IDF-weighted share of query terms it contains."""
    bm25: float
    """FTS5's BM25 rank (lower is better); used only to order equally relevant chunks."""
    matched: tuple[str, ...]
    """The query terms the chunk contains."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The outcome of one search."""

    query: str
    terms: tuple[str, ...]
    """The content terms searched for."""
    hits: tuple[Hit, ...] = ()
    """At most `top_k` chunks at or above the relevance floor, best first."""
    top_score: float = 0.0
    """The best normalized score among all candidates (also when it is under the floor)."""
    below_floor: tuple[Hit, ...] = field(default=())
    """The best candidates that did not clear the floor (for review; never cited)."""


class CorpusIndex:
    """A folder of documents indexed in an SQLite database. Create it with `CorpusIndex.open`."""

    def __init__(self, db: aiosqlite.Connection, corpus: Path, path: Path) -> None:
        self._db = db
        self.corpus = corpus
        """The indexed folder (resolved)."""
        self.path = path
        """The index database file."""

    @classmethod
    async def open(cls, corpus: Path, path: Path) -> CorpusIndex:
        """Open (creating if need be) the index of `corpus` stored at `path`.

        An index file that was built for another folder is emptied, so a cached index can never
        answer with another corpus's chunks. Call `refresh` before searching.

        Args:
            corpus: The folder of documents.
            path: The index database (its directory is created).

        Returns:
            The open index; close it with `close`.

        Raises:
            NotADirectoryError: when `corpus` is not a directory.
        """
        root = corpus.resolve()
        if not root.is_dir():
            raise NotADirectoryError(f"corpus {corpus} is not a directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path, isolation_level=None)
        try:
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA:
                    await db.execute(statement)
                rows = list(await db.execute_fetchall("SELECT value FROM meta WHERE key = 'corpus'"))
                if rows and rows[0][0] != str(root):
                    await db.execute("DELETE FROM chunks")
                    await db.execute("DELETE FROM files")
                await db.execute(
                    "INSERT INTO meta (key, value) VALUES ('corpus', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(root),),
                )
                await db.execute("COMMIT")
            except BaseException:
                await db.execute("ROLLBACK")
                raise
        except BaseException:
            await db.close()
            raise
        return cls(db, root, path)

    async def close(self) -> None:
        """Close the index database."""
        await self._db.close()

    async def __aenter__(self) -> CorpusIndex:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _scan(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        for file in sorted(self.corpus.rglob("*")):
            relative = file.relative_to(self.corpus)
            if any(part.startswith(".") for part in relative.parts):
                continue
            if file.suffix.lower() in INDEXED_SUFFIXES and file.is_file():
                found[relative.as_posix()] = file
        return found

    async def refresh(self) -> RefreshReport:
        """Bring the index up to date with the folder, touching only what changed.

        Returns:
            What was added, rewritten and removed.
        """
        files = self._scan()
        rows = await self._db.execute_fetchall("SELECT path, doc_id, size, mtime_ns, sha256 FROM files")
        known = {str(r[0]): (str(r[1]), int(r[2]), int(r[3]), str(r[4])) for r in rows}
        added: list[str] = []
        updated: list[str] = []
        removed: list[str] = []
        unchanged = 0
        await self._db.execute("BEGIN IMMEDIATE")
        try:
            taken = {doc for doc, *_ in known.values()}
            for relative, (doc_id, *_) in known.items():
                if relative not in files:
                    await self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
                    await self._db.execute("DELETE FROM files WHERE path = ?", (relative,))
                    taken.discard(doc_id)
                    removed.append(doc_id)
            for relative, file in files.items():
                stat = file.stat()
                if stat.st_size > MAX_FILE_BYTES:
                    continue
                previous = known.get(relative)
                if previous is not None and previous[1:3] == (stat.st_size, stat.st_mtime_ns):
                    unchanged += 1
                    continue
                data = file.read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                if previous is not None and previous[3] == digest:
                    await self._db.execute(
                        "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?",
                        (stat.st_size, stat.st_mtime_ns, relative),
                    )
                    unchanged += 1
                    continue
                if previous is not None:
                    doc_id = previous[0]
                    await self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
                else:
                    doc_id = doc_id_for(relative)
                    if doc_id in taken:
                        doc_id = f"{doc_id}-{hashlib.sha1(relative.encode()).hexdigest()[:6]}"
                    taken.add(doc_id)
                fallback = file.stem.replace("-", " ").replace("_", " ").strip() or doc_id
                chunks = chunk_document(
                    doc_id, data.decode("utf-8", errors="replace"), fallback_title=fallback
                )
                title = chunks[0].title if chunks else fallback
                await self._db.executemany(
                    "INSERT INTO chunks (chunk_id, doc_id, title, heading, text) VALUES (?, ?, ?, ?, ?)",
                    [(c.chunk_id, c.doc_id, c.title, c.heading, c.text) for c in chunks],
                )
                await self._db.execute(
                    "INSERT INTO files (path, doc_id, title, size, mtime_ns, sha256) "
                    "VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (path) DO UPDATE SET title = excluded.title, size = excluded.size, "
                    "mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256",
                    (relative, doc_id, title, stat.st_size, stat.st_mtime_ns, digest),
                )
                (updated if previous is not None else added).append(doc_id)
            await self._db.execute("COMMIT")
        except BaseException:
            await self._db.execute("ROLLBACK")
            raise
        return RefreshReport(
            tuple(added), tuple(updated), tuple(removed), unchanged, await self.chunk_count()
        )

    async def chunk_count(self) -> int:
        """How many chunks the index holds."""
        rows = list(await self._db.execute_fetchall("SELECT COUNT(*) FROM chunks"))
        return int(rows[0][0])

    async def documents(self) -> list[tuple[str, str]]:
        """Every indexed document as `(doc_id, title)`, by doc id."""
        rows = await self._db.execute_fetchall("SELECT doc_id, title FROM files ORDER BY doc_id")
        return [(str(r[0]), str(r[1])) for r in rows]

    async def chunk(self, chunk_id: str) -> Chunk | None:
        """One chunk by id, or None."""
        rows = list(
            await self._db.execute_fetchall(
                "SELECT chunk_id, doc_id, title, heading, text FROM chunks WHERE chunk_id = ?", (chunk_id,)
            )
        )
        return _chunk(rows[0]) if rows else None

    async def document_frequency(self, term: str) -> int:
        """How many chunks contain `term` (after the index's stemming)."""
        rows = list(
            await self._db.execute_fetchall(
                "SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (_phrase(term),)
            )
        )
        return int(rows[0][0])

    async def known_terms(self, terms: Iterable[str]) -> list[str]:
        """The terms that occur somewhere in the corpus, in the order given."""
        return [t for t in terms if await self.document_frequency(t) > 0]

    async def search(self, query: str, *, top_k: int = 5, floor: float = 0.0) -> SearchResult:
        """The chunks most relevant to `query`.

        Args:
            query: A question or a rephrased query; any text is safe (no FTS syntax leaks through).
            top_k: At most this many hits.
            floor: The relevance floor: chunks scoring below it are not hits.

        Returns:
            The hits (best first), the top score and the terms searched for.
        """
        terms = query_terms(query)
        if not terms:
            return SearchResult(query, ())
        total = await self.chunk_count()
        rows = list(
            await self._db.execute_fetchall(
                "SELECT c.id, c.chunk_id, c.doc_id, c.title, c.heading, c.text, "
                "bm25(chunks_fts, 2.0, 4.0, 1.0) AS rank "
                "FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
                "WHERE chunks_fts MATCH ? ORDER BY rank, c.chunk_id LIMIT ?",
                (" OR ".join(_phrase(t) for t in terms), CANDIDATES),
            )
        )
        if not rows:
            return SearchResult(query, tuple(terms))
        ids = [int(r[0]) for r in rows]
        marks = ",".join("?" * len(ids))
        weights: dict[str, float] = {}
        holders: dict[str, set[int]] = {}
        for term in terms:
            df = await self.document_frequency(term)
            weights[term] = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
            found = await self._db.execute_fetchall(
                f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid IN ({marks})",
                (_phrase(term), *ids),
            )
            holders[term] = {int(r[0]) for r in found}
        whole = sum(weights.values())
        scored: list[Hit] = []
        for row in rows:
            matched = tuple(t for t in terms if int(row[0]) in holders[t])
            score = sum(weights[t] for t in matched) / whole if whole else 0.0
            scored.append(Hit(_chunk(row[1:6]), round(score, 4), float(row[6]), matched))
        scored.sort(key=lambda h: (-h.score, h.bm25, h.chunk.chunk_id))
        hits = tuple(h for h in scored if h.score >= floor)[:top_k]
        below = tuple(h for h in scored if h.score < floor)[:top_k]
        return SearchResult(query, tuple(terms), hits, scored[0].score, below)


def _phrase(term: str) -> str:
    # a longer word also matches its longer forms (`night` finds `nightly`, `late` finds `later`)
    quoted = '"' + term.replace('"', '""') + '"'
    return quoted + "*" if len(term) >= PREFIX_MIN_CHARS else quoted


def _chunk(row: Sequence[object]) -> Chunk:
    return Chunk(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]))


def default_index_path(data_dir: Path, corpus: Path) -> Path:
    """Where the index of `corpus` is cached under a data dir: one file per corpus folder.

    Args:
        data_dir: The program's data dir.
        corpus: The corpus folder.

    Returns:
        `<data_dir>/grounded/<hash of the resolved folder>.sqlite`.
    """
    key = hashlib.sha256(str(corpus.resolve()).encode()).hexdigest()[:16]
    return data_dir / "grounded" / f"{key}.sqlite"
