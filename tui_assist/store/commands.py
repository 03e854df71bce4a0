"""The `tui-assist history ...` and `tui-assist stats` commands, minus argument parsing.

Each function takes an open store, its parameters and the streams to write to, and returns the
exit code: 0 on success, 2 for a usage error (an unknown or ambiguous id, an unknown format). Ids
may be given whole or as a unique prefix, as git accepts short hashes. Conversations are written
page by page, so showing or exporting a 10,000-turn conversation never holds it all in memory.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any, Literal, TextIO

from tui_assist.core.events import FileDiff, ToolCallFinished
from tui_assist.core.text import clip
from tui_assist.core.tool_labels import tool_title, unified_diff
from tui_assist.store.db import Store, UnknownIdError
from tui_assist.store.rows import ConversationRow, RoundRow, SearchHit, ToolCallRow, TurnRow, WeekStats

ExportFormat = Literal["md", "json"]
PAGE = 200
"""Turns read per query while showing or exporting a conversation."""
EXIT_OK = 0
EXIT_USAGE = 2


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _conversation_dict(c: ConversationRow) -> dict[str, Any]:
    return {
        "id": c.id,
        "title": c.title,
        "model": c.model,
        "workdir": c.workdir,
        "created_at": _iso(c.created_at),
        "updated_at": _iso(c.updated_at),
        "turns": c.turn_count,
    }


def _turn_dict(t: TurnRow) -> dict[str, Any]:
    return {
        "id": t.id,
        "seq": t.seq,
        "strategy": t.strategy,
        "prompt": t.prompt,
        "answer": t.answer,
        "outcome": t.outcome,
        "error": t.error,
        "usage": t.usage.to_dict(),
        "rounds": t.rounds,
        "tool_calls": t.tool_calls,
        "duration": round(t.duration, 3),
        "started_at": _iso(t.started_at),
        "finished_at": _iso(t.finished_at),
    }


def _call_dict(c: ToolCallRow) -> dict[str, Any]:
    return {
        "name": c.name,
        "input": c.input,
        "output": c.output,
        "is_error": c.is_error,
        "duration": round(c.duration, 3),
    }


def _round_dict(r: RoundRow) -> dict[str, Any]:
    return {
        "index": r.index,
        "answer": r.answer,
        "verdict": r.verdict,
        "feedback": r.feedback,
        "usage": r.usage.to_dict(),
        "tool_calls": [_call_dict(c) for c in r.evidence],
    }


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


async def _all_turns(store: Store, conversation_id: str) -> AsyncIterator[TurnRow]:
    after = 0
    while True:
        page = await store.turns_page(conversation_id, after_seq=after, limit=PAGE)
        for turn in page:
            yield turn
        if len(page) < PAGE:
            return
        after = page[-1].seq


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
    if as_json:
        print(_dump([_conversation_dict(c) for c in rows]), file=out)
        return EXIT_OK
    if not rows:
        print("No conversations yet.", file=out)
        return EXIT_OK
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
        out.write('{\n"conversation": ' + json.dumps(_conversation_dict(conversation), ensure_ascii=False))
        out.write(',\n"turns": [')
        first = True
        async for turn in _all_turns(store, conversation.id):
            out.write(("\n" if first else ",\n") + json.dumps(_turn_dict(turn), ensure_ascii=False))
            first = False
        out.write("\n]\n}\n")
        return EXIT_OK
    c = conversation
    print(c.title, file=out)
    print(
        f"id {c.id} · model {c.model} · workdir {c.workdir} · created {_when(c.created_at)} · "
        f"updated {_when(c.updated_at)} · {c.turn_count} turns",
        file=out,
    )
    async for t in _all_turns(store, c.id):
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
    if as_json:
        print(_dump([_hit_dict(h) for h in hits]), file=out)
        return EXIT_OK
    if not hits:
        print("No matches.", file=out)
        return EXIT_OK
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
    return {
        "conversation_id": h.conversation_id,
        "conversation_title": h.conversation_title,
        "turn_id": h.turn_id,
        "seq": h.seq,
        "outcome": h.outcome,
        "started_at": _iso(h.started_at),
        "prompt_snippet": h.prompt_snippet,
        "answer_snippet": h.answer_snippet,
    }


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
    if fmt not in ("md", "json"):
        print(f"unknown export format {fmt!r} (use md or json)", file=err or sys.stderr)
        return EXIT_USAGE
    conversation = await _resolve(store, conversation_id, err if err is not None else sys.stderr)
    if conversation is None:
        return EXIT_USAGE
    if fmt == "json":
        out.write('{\n"conversation": ' + json.dumps(_conversation_dict(conversation), ensure_ascii=False))
        out.write(',\n"turns": [')
        first = True
        async for turn in _all_turns(store, conversation.id):
            rounds = await store.rounds(turn.id)
            calls = [c for c in await store.tool_calls(turn.id) if c.round_index is None]
            data = _turn_dict(turn) | {
                "rounds": [_round_dict(r) for r in rounds],
                "tool_calls": [_call_dict(c) for c in calls],
            }
            out.write(("\n" if first else ",\n") + json.dumps(data, ensure_ascii=False))
            first = False
        out.write("\n]\n}\n")
        return EXIT_OK
    _export_header(conversation, out)
    async for turn in _all_turns(store, conversation.id):
        rounds = await store.rounds(turn.id)
        calls = [c for c in await store.tool_calls(turn.id) if c.round_index is None]
        _export_turn(turn, rounds, calls, out, await _diffs(store, turn.id), str(conversation.workdir))
    return EXIT_OK


def _fence(text: str, info: str = "") -> str:
    """A fenced code block that the content cannot close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def _export_header(c: ConversationRow, out: TextIO) -> None:
    out.write(f"# {c.title}\n\n")
    out.write(f"- id: `{c.id}`\n- model: `{c.model}`\n- workdir: `{c.workdir}`\n")
    out.write(f"- created: {_iso(c.created_at)}\n- updated: {_iso(c.updated_at)}\n- turns: {c.turn_count}\n")


def _export_calls(
    calls: list[ToolCallRow] | tuple[ToolCallRow, ...],
    heading: str,
    out: TextIO,
    diffs: dict[str, FileDiff],
    workdir: str,
) -> None:
    if not calls:
        return
    out.write(f"\n{heading} Tool calls\n\n")
    for i, call in enumerate(calls, 1):
        status = "error" if call.is_error else "ok"
        diff = diffs.get(call.node_id)
        out.write(f"{i}. `{tool_title(call.name, call.input, diff)}` ({status}, {call.duration:.2f} s)\n\n")
        if diff is not None:  # an edit reads as what it changed
            name = os.path.relpath(diff.path, workdir) if workdir else diff.path
            out.write("Diff:\n\n" + _fence(unified_diff(diff, name), "diff") + "\n\n")
        else:
            out.write(
                "Input:\n\n" + _fence(json.dumps(call.input, ensure_ascii=False, indent=2), "json") + "\n\n"
            )
        out.write("Output:\n\n" + _fence(call.output) + "\n\n")


async def _diffs(store: Store, turn_id: str) -> dict[str, FileDiff]:
    """The file diffs of a turn's editor writes, by tool-call node (from its event log)."""
    return {
        e.node_id: e.diff
        for e in await store.turn_events(turn_id)
        if isinstance(e, ToolCallFinished) and e.diff is not None
    }


def _export_turn(
    t: TurnRow,
    rounds: list[RoundRow],
    calls: list[ToolCallRow],
    out: TextIO,
    diffs: dict[str, FileDiff] | None = None,
    workdir: str = "",
) -> None:
    diffs = diffs or {}
    out.write(f"\n## Turn {t.seq} · {t.strategy} · {t.outcome}\n\n")
    out.write(
        f"*{_iso(t.started_at)} · {t.duration:.1f} s · {t.usage.input_tokens} in / "
        f"{t.usage.output_tokens} out tokens · {t.tool_calls} tool calls*\n"
    )
    out.write(f"\n### Prompt\n\n{t.prompt}\n")
    out.write(f"\n### Answer\n\n{t.answer or '(no answer)'}\n")
    if t.error:
        out.write(f"\n> {t.error}\n")
    _export_calls(calls, "###", out, diffs, workdir)
    for r in rounds:
        out.write(f"\n### Round {r.index} · {r.verdict.upper()}\n\n")
        out.write(f"**Feedback:** {r.feedback or '(none)'}\n\n")
        out.write(f"**Answer:**\n\n{r.answer or '(no answer)'}\n")
        _export_calls(r.evidence, "####", out, diffs, workdir)


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
    if as_json:
        print(_dump([_week_dict(w) for w in weeks]), file=out)
        return EXIT_OK
    if not weeks:
        print("No turns yet.", file=out)
        return EXIT_OK
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
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        cells = [
            row[0].ljust(widths[0]),
            *(cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)),
        ]
        print("  ".join(cells).rstrip(), file=out)
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
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    print(file=out)
    for row in table:
        cells = [row[0].ljust(widths[0]), *(c.rjust(n) for c, n in zip(row[1:], widths[1:], strict=True))]
        print("  ".join(cells).rstrip(), file=out)


def _week_dict(w: WeekStats) -> dict[str, Any]:
    return {
        "week": w.week,
        "turns": w.turns,
        "outcomes": w.outcomes,
        **w.usage.to_dict(),
        "tool_calls": w.tool_calls,
        "rounds": w.rounds,
        "flow_runs": w.flow_runs,
        "flow_outcomes": w.flow_outcomes,
    }
