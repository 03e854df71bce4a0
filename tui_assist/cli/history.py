"""The `tui-assist history ...` and `tui-assist stats` commands rendered: tables, text and JSON.

The store returns rows; this module writes them. Each function takes an open store, its parameters
and the streams to write to, and returns the exit code: 0 on success, 2 for a usage error (an
unknown or ambiguous id, an unknown format). Ids may be given whole or as a unique prefix, as git
accepts short hashes. Conversations are written page by page (`Store.all_turns`), so showing or
exporting a 10,000-turn conversation never holds it all in memory; the documents come from the
one exporter, `tui_assist.session.export`.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any, TextIO

from tui_assist.cli.errors import EXIT_OK, EXIT_USAGE
from tui_assist.core.text import clip
from tui_assist.session.export import (
    EXPORT_FORMATS,
    conversation_dict,
    export_chunks,
    iso,
    json_turns,
    row_dict,
)
from tui_assist.store.db import Store, UnknownIdError
from tui_assist.store.rows import ConversationRow, SearchHit, WeekStats


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _json_or_none(out: TextIO, rows: list[dict[str, Any]] | None, nothing: str) -> int:
    """Print the rows as a JSON array, or (None: text asked for, and there is nothing) say so."""
    print(json.dumps(rows, ensure_ascii=False, indent=2) if rows is not None else nothing, file=out)
    return EXIT_OK


async def _resolve(store: Store, conversation_id: str, err: TextIO) -> ConversationRow | None:
    try:
        resolved = await store.resolve_conversation_id(conversation_id)
    except UnknownIdError as exc:
        print(f"{exc} (see `tui-assist history list`)", file=err)
        return None
    return await store.get_conversation(resolved)


async def history_list(
    store: Store,
    out: TextIO,
    *,
    limit: int = 20,
    offset: int = 0,
    query: str | None = None,
    as_json: bool = False,
) -> int:
    """`tui-assist history list`: conversations, most recently updated first.

    Args:
        store: An open store.
        out: Where to write.
        limit: At most this many conversations.
        offset: Skip this many (paging).
        query: Keep conversations whose title contains this text (or whose id starts with it).
        as_json: Write a JSON array instead of a table.

    Returns:
        The exit code (0).
    """
    rows = await store.list_conversations(limit, offset, query)
    if as_json or not rows:
        return _json_or_none(
            out, [conversation_dict(c) for c in rows] if as_json else None, "No conversations yet."
        )
    print(f"{'ID':<16}  {'UPDATED':<16}  {'TURNS':>5}  TITLE", file=out)
    for c in rows:
        print(f"{c.id:<16}  {_when(c.updated_at):<16}  {c.turn_count:>5}  {clip(c.title, 60)}", file=out)
    return EXIT_OK


async def history_show(
    store: Store, conversation_id: str, out: TextIO, *, as_json: bool = False, err: TextIO | None = None
) -> int:
    """`tui-assist history show ID`: one conversation and every turn's prompt and answer.

    Args:
        store: An open store.
        conversation_id: The id, or a unique prefix of it.
        out: Where to write.
        as_json: Write one JSON object (`conversation`, `turns`) instead of text.
        err: Where errors go (default: stderr).

    Returns:
        The exit code: 0, or 2 for an unknown id.
    """
    conversation = await _resolve(store, conversation_id, err if err is not None else sys.stderr)
    if conversation is None:
        return EXIT_USAGE
    if as_json:
        async for piece in json_turns(store, conversation, details=False):
            out.write(piece)
        return EXIT_OK
    c = conversation
    print(c.title, file=out)
    print(
        f"id {c.id} · model {c.model} · workdir {c.workdir} · created {_when(c.created_at)} · "
        f"updated {_when(c.updated_at)} · {c.turn_count} turns",
        file=out,
    )
    async for t in store.all_turns(c.id):
        print(file=out)
        print(
            f"#{t.seq} {_when(t.started_at)} · {t.strategy} · {t.outcome} · {t.usage.input_tokens} in / "
            f"{t.usage.output_tokens} out tokens · {t.tool_calls} tool calls · {t.duration:.1f} s",
            file=out,
        )
        print("> " + t.prompt.replace("\n", "\n> "), file=out)
        if t.answer:
            print(t.answer, file=out)
        if t.error:
            print(f"[{t.error}]", file=out)
    return EXIT_OK


async def history_search(
    store: Store, query: str, out: TextIO, *, limit: int = 20, as_json: bool = False
) -> int:
    """`tui-assist history search QUERY`: turns whose prompt or answer match, best first.

    Args:
        store: An open store.
        query: Words to find (any text; quotes and dashes are plain characters).
        out: Where to write.
        limit: At most this many hits.
        as_json: Write a JSON array instead of text.

    Returns:
        The exit code (0, with or without hits).
    """
    hits = await store.search(query, limit)
    if as_json or not hits:
        return _json_or_none(out, [_hit_dict(h) for h in hits] if as_json else None, "No matches.")
    for h in hits:
        print(
            f"{h.conversation_id}  #{h.seq}  {_when(h.started_at)}  {h.outcome}  "
            f"{clip(h.conversation_title, 50)}",
            file=out,
        )
        print(f"  prompt: {clip(h.prompt_snippet, 100)}", file=out)
        if h.answer_snippet:
            print(f"  answer: {clip(h.answer_snippet, 100)}", file=out)
    return EXIT_OK


def _hit_dict(h: SearchHit) -> dict[str, Any]:
    names = "conversation_id conversation_title turn_id seq outcome started_at prompt_snippet answer_snippet"
    return row_dict(h, names, started_at=iso(h.started_at))


async def history_export(
    store: Store, conversation_id: str, out: TextIO, *, fmt: str = "md", err: TextIO | None = None
) -> int:
    """`tui-assist history export ID --format md|json`: everything, rounds and tool calls included.

    Args:
        store: An open store.
        conversation_id: The id, or a unique prefix of it.
        out: Where to write.
        fmt: `md` (Markdown for people) or `json` (one object: `conversation`, `turns`; each turn
            has `rounds` (with `verdict`, `feedback`, `tool_calls`) and the `tool_calls` made
            outside rounds).
        err: Where errors go (default: stderr).

    Returns:
        The exit code: 0, or 2 for an unknown id or format.
    """
    errors = err if err is not None else sys.stderr
    if fmt not in EXPORT_FORMATS:
        print(f"unknown export format {fmt!r} (use md or json)", file=errors)
        return EXIT_USAGE
    conversation = await _resolve(store, conversation_id, errors)
    if conversation is None:
        return EXIT_USAGE
    async for piece in export_chunks(store, conversation, fmt):
        out.write(piece)
    return EXIT_OK


async def stats(store: Store, out: TextIO, *, as_json: bool = False) -> int:
    """`tui-assist stats`: outcome counts and token sums per ISO week, from the audit lines.

    Flow runs (`flow_runs`, `flow_outcomes` in JSON; a second table in text) are counted from
    the flow audit lines, apart from turns.

    Args:
        store: An open store.
        out: Where to write.
        as_json: Write a JSON array (one object per week) instead of a table.

    Returns:
        The exit code (0).
    """
    weeks = await store.stats()
    if as_json or not weeks:
        return _json_or_none(out, [_week_dict(w) for w in weeks] if as_json else None, "No turns yet.")
    outcomes = sorted({name for w in weeks for name in w.outcomes})
    header = ["WEEK", "TURNS", *(o.upper() for o in outcomes), "IN", "OUT", "CACHE_W", "CACHE_R", "TOOLS"]
    table = [header]
    for w in weeks:
        u = w.usage
        table.append(
            [
                w.week,
                str(w.turns),
                *(str(w.outcomes.get(o, 0)) for o in outcomes),
                str(u.input_tokens),
                str(u.output_tokens),
                str(u.cache_creation_input_tokens),
                str(u.cache_read_input_tokens),
                str(w.tool_calls),
            ]
        )
    _print_table(table, out)
    _flow_table(weeks, out)
    return EXIT_OK


def _flow_table(weeks: list[WeekStats], out: TextIO) -> None:
    """Flow runs per week and outcome, under the turns table (nothing when no flow ran)."""
    flow_weeks = [w for w in weeks if w.flow_runs]
    if not flow_weeks:
        return
    outcomes = sorted({name for w in flow_weeks for name in w.flow_outcomes})
    table = [["WEEK", "FLOW RUNS", *(o.upper() for o in outcomes)]]
    table += [
        [w.week, str(w.flow_runs), *(str(w.flow_outcomes.get(o, 0)) for o in outcomes)] for w in flow_weeks
    ]
    print(file=out)
    _print_table(table, out)


def _print_table(table: list[list[str]], out: TextIO) -> None:
    """Rows of cells in columns: the first left-aligned (the week), the others right-aligned."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        cells = [row[0].ljust(widths[0]), *(c.rjust(n) for c, n in zip(row[1:], widths[1:], strict=True))]
        print("  ".join(cells).rstrip(), file=out)


def _week_dict(w: WeekStats) -> dict[str, Any]:
    counts = row_dict(w, "tool_calls rounds flow_runs flow_outcomes")
    return row_dict(w, "week turns outcomes") | w.usage.to_dict() | counts
