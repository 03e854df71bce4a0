"""Conversations as documents: the one Markdown (and JSON) exporter, behind `/export` and `history export`.

A stored conversation is exported from the store page by page (`Store.all_turns`), so a
10,000-turn conversation is never held in memory: `export_chunks` yields the document piece by
piece. Each turn is written with its rounds (verdict, feedback, answer) and its tool calls (input
and output in fences the content cannot close). A session without a store exports its in-memory
history with the same writer (`messages_markdown`), turn by turn, without what only the store
knows (timings, usage, rounds). The JSON shapes (`conversation_dict`, `turn_dict`) are the ones
`history show --json` prints too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from tui_assist.core.conversation import Message, ToolResultBlock, ToolUseBlock
from tui_assist.core.events import FileDiff, ToolCallFinished
from tui_assist.core.tool_labels import tool_title, unified_diff

if TYPE_CHECKING:
    from pathlib import Path

    from tui_assist.store import Store
    from tui_assist.store.rows import ConversationRow, RoundRow, ToolCallRow, TurnRow

ExportFormat = Literal["md", "json"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("md", "json")


class ExportError(Exception):
    """A conversation cannot be exported; the message is one line for users."""


def write_export(path: Path, document: str) -> None:
    """Write an exported `document` to `path`, making its folders; all of it or nothing.

    The file is replaced whole (`write_atomically`): a failed or interrupted write leaves the file
    that was there as it was.

    Raises:
        OSError: when the folder cannot be made or the file written.
    """
    from tui_assist.tools.safe_io import write_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, document.encode("utf-8"))


def iso(ts: float | None) -> str | None:
    """A timestamp as local ISO 8601 to the second (None stays None)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def row_dict(row: object, names: str, **values: Any) -> dict[str, Any]:
    """A row as a JSON object: the attributes `names` lists (space-separated), in that order.

    A name given in `values` takes that value instead of the attribute (a formatted time, a
    renamed field).
    """
    return {name: values[name] if name in values else getattr(row, name) for name in names.split()}


def conversation_dict(c: ConversationRow) -> dict[str, Any]:
    """A conversation as the JSON documents write it."""
    return row_dict(
        c,
        "id title model workdir created_at updated_at turns",
        created_at=iso(c.created_at),
        updated_at=iso(c.updated_at),
        turns=c.turn_count,
    )


def turn_dict(t: TurnRow) -> dict[str, Any]:
    """A turn as the JSON documents write it (without its rounds and calls)."""
    return row_dict(
        t,
        "id seq strategy prompt answer outcome error usage rounds tool_calls duration started_at finished_at",
        usage=t.usage.to_dict(),
        duration=round(t.duration, 3),
        started_at=iso(t.started_at),
        finished_at=iso(t.finished_at),
    )


def _call_dict(c: ToolCallRow) -> dict[str, Any]:
    return row_dict(c.call, "name input output is_error duration", duration=round(c.call.duration, 3))


def _round_dict(r: RoundRow) -> dict[str, Any]:
    return row_dict(
        r,
        "index answer verdict feedback usage tool_calls",
        usage=r.usage.to_dict(),
        tool_calls=[_call_dict(c) for c in r.evidence],
    )


async def json_turns(store: Store, conversation: ConversationRow, *, details: bool) -> AsyncIterator[str]:
    """A conversation as one JSON object (`conversation`, `turns`), written turn by turn.

    Args:
        store: An open store.
        conversation: The conversation.
        details: Give each turn its `rounds` (with `verdict`, `feedback`, `tool_calls`) and the
            `tool_calls` made outside rounds (`history export`); without, turns only (`history show`).

    Returns:
        The document's pieces, in order.
    """
    yield '{\n"conversation": ' + json.dumps(conversation_dict(conversation), ensure_ascii=False)
    yield ',\n"turns": ['
    first = True
    async for turn in store.all_turns(conversation.id):
        data = turn_dict(turn)
        if details:
            rounds = await store.rounds(turn.id)
            calls = [c for c in await store.tool_calls(turn.id) if c.round_index is None]
            data |= {"rounds": [_round_dict(r) for r in rounds], "tool_calls": [_call_dict(c) for c in calls]}
        yield ("\n" if first else ",\n") + json.dumps(data, ensure_ascii=False)
        first = False
    yield "\n]\n}\n"


async def export_chunks(store: Store, conversation: ConversationRow, fmt: str) -> AsyncIterator[str]:
    """A stored conversation as a document, everything included, piece by piece.

    Args:
        store: An open store.
        conversation: The conversation.
        fmt: `md` (Markdown for people) or `json` (see `json_turns`).

    Returns:
        The document's pieces, in order.

    Raises:
        ExportError: for an unknown format (before anything is yielded).
    """
    if fmt not in EXPORT_FORMATS:
        raise ExportError(f"unknown export format {fmt!r} (use md or json)")
    if fmt == "json":
        async for piece in json_turns(store, conversation, details=True):
            yield piece
        return
    c = conversation
    yield (
        f"# {c.title}\n\n- id: `{c.id}`\n- model: `{c.model}`\n- workdir: `{c.workdir}`\n"
        f"- created: {iso(c.created_at)}\n- updated: {iso(c.updated_at)}\n- turns: {c.turn_count}\n"
    )
    async for t in store.all_turns(c.id):
        rounds = await store.rounds(t.id)
        diffs = await _diffs(store, t.id)
        calls = [_Call.of_row(c, diffs) for c in await store.tool_calls(t.id) if c.round_index is None]
        meta = (
            f"{iso(t.started_at)} · {t.duration:.1f} s · {t.usage.input_tokens} in / "
            f"{t.usage.output_tokens} out tokens · {t.tool_calls} tool calls"
        )
        workdir = c.workdir
        text = _turn(
            f"Turn {t.seq} · {t.strategy} · {t.outcome}", meta, t.prompt, t.answer, t.error, calls, workdir
        )
        for r in rounds:
            text += f"\n### Round {r.index} · {r.verdict.upper()}\n\n"
            text += f"**Feedback:** {r.feedback or '(none)'}\n\n"
            text += f"**Answer:**\n\n{r.answer or '(no answer)'}\n"
            text += _calls([_Call.of_row(c, diffs) for c in r.evidence], "####", workdir)
        yield text


async def _diffs(store: Store, turn_id: str) -> dict[str, FileDiff]:
    """The file diffs of a turn's editor writes, by tool-call node (from its event log)."""
    return {
        e.node_id: e.diff
        for e in await store.turn_events(turn_id)
        if isinstance(e, ToolCallFinished) and e.diff is not None
    }


def messages_markdown(messages: Sequence[Message], *, title: str) -> str:
    """An in-memory history (a session without a store) as Markdown, written as a stored one is.

    Args:
        messages: The conversation's messages.
        title: The document's title.

    Returns:
        The document: each turn's prompt, answer and tool calls (with their results).
    """
    text = f"# {title}\n"
    seq = 0
    prompt: str | None = None
    answer = ""
    calls: list[_Call] = []
    pending: dict[str, ToolUseBlock] = {}

    def flush() -> str:
        return "" if prompt is None else _turn(f"Turn {seq}", None, prompt, answer, None, calls)

    for message in messages:
        results = [b for b in message.content if isinstance(b, ToolResultBlock)]
        if message.role == "user" and not results:
            text += flush()
            seq, prompt, answer, calls = seq + 1, message.text, "", []
            continue
        for block in results:
            use = pending.pop(block.tool_use_id, None)
            if use is not None:
                calls.append(_Call(use.name, use.input, block.content, block.is_error, None))
        pending |= {b.id: b for b in message.content if isinstance(b, ToolUseBlock)}
        if message.role == "assistant" and message.text:
            answer = message.text
    return text + flush()


@dataclass(frozen=True, slots=True)
class _Call:
    """A tool call as the document shows it (a stored one has its duration)."""

    name: str
    input: Any
    output: str
    is_error: bool
    duration: float | None
    diff: FileDiff | None = None
    """What an editor write changed (a stored call's, from the turn's event log)."""

    @classmethod
    def of_row(cls, row: ToolCallRow, diffs: dict[str, FileDiff]) -> _Call:
        call = row.call
        return cls(call.name, call.input, call.output, call.is_error, call.duration, diffs.get(call.node_id))


def _fence(text: str, info: str = "") -> str:
    """A fenced code block that the content cannot close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def _turn(
    heading: str,
    meta: str | None,
    prompt: str,
    answer: str,
    error: str | None,
    calls: list[_Call],
    workdir: str = "",
) -> str:
    text = f"\n## {heading}\n"
    if meta is not None:
        text += f"\n*{meta}*\n"
    text += f"\n### Prompt\n\n{prompt}\n"
    text += f"\n### Answer\n\n{answer or '(no answer)'}\n"
    if error:
        text += f"\n> {error}\n"
    return text + _calls(calls, "###", workdir)


def _calls(calls: Sequence[_Call], heading: str, workdir: str = "") -> str:
    if not calls:
        return ""
    text = f"\n{heading} Tool calls\n\n"
    for i, call in enumerate(calls, 1):
        status = "error" if call.is_error else "ok"
        took = f", {call.duration:.2f} s" if call.duration is not None else ""
        text += f"{i}. `{tool_title(call.name, call.input, call.diff)}` ({status}{took})\n\n"
        if call.diff is not None:  # an edit reads as what it changed
            name = os.path.relpath(call.diff.path, workdir) if workdir else call.diff.path
            text += "Diff:\n\n" + _fence(unified_diff(call.diff, name), "diff") + "\n\n"
        else:
            text += (
                "Input:\n\n" + _fence(json.dumps(call.input, ensure_ascii=False, indent=2), "json") + "\n\n"
            )
        text += "Output:\n\n" + _fence(call.output) + "\n\n"
    return text


async def export_document(
    store: Store | None, conversation_id: str | None, messages: Sequence[Message], fmt: str
) -> str:
    """A conversation as a document (`ChatSession.export`): the stored turns, else `messages`.

    Raises:
        ExportError: for an unknown format, JSON without the stored history, or nothing yet to
            export.
    """
    if conversation_id is None and not messages:
        raise ExportError("nothing to export yet: this conversation has no turns")
    if store is not None and conversation_id is not None:
        conversation = await store.get_conversation(conversation_id)
        if conversation is not None:
            return "".join([piece async for piece in export_chunks(store, conversation, fmt)])
    if fmt == "md":
        return messages_markdown(messages, title=conversation_id or "conversation")
    raise ExportError("JSON export needs the stored history, which is not available")
