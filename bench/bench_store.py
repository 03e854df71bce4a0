"""Store benchmark: insert throughput and paging through a 10,000-turn conversation.

Run: `python bench/bench_store.py [--turns N] [--page N]`. Everything happens in a temporary
directory on the same filesystem as the system temp dir. Figures:

- insert throughput: `begin_turn` + `commit_turn` per turn (two durable transactions, each
  fsynced: WAL with `synchronous=FULL`), with a realistic turn (a prompt, a longer answer, the
  history pair, one tool call and a dozen events);
- open: `Store.open` on the existing database (migrations check, crash recovery), then the first
  page a chat view shows (the newest turns);
- paging: walking the whole conversation backwards page by page with `turns_page(before_seq=...)`,
  with the peak Python memory (tracemalloc) while doing so, next to loading every turn at once for
  contrast. tracemalloc sees Python objects, not SQLite's own page cache (bounded by its
  `cache_size`, 2 MB by default).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import tracemalloc
from pathlib import Path

from table import print_rows  # bench/table.py (the script's folder is on sys.path)

from tui_assist.core.conversation import Message, Usage
from tui_assist.core.events import (
    NodeFinished,
    NodeStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    UsageRecorded,
)
from tui_assist.core.evidence import ToolCallRecord
from tui_assist.core.turn import TurnResult
from tui_assist.store import Store
from tui_assist.store.db import DB_FILENAME

PROMPT = "Explain how the migration runner decides which numbered scripts still need to run. " * 3
ANSWER = "It reads PRAGMA user_version and applies every later migration in its own transaction. " * 12


def make_turn(i: int) -> tuple[TurnResult, list[TurnEvent]]:
    turn_id = f"turn-{i:06d}"
    agent, tool = f"{turn_id}-agent", f"{turn_id}-tool"
    prompt, answer = f"{i}: {PROMPT}", f"{i}: {ANSWER}"
    usage = Usage(1200 + i % 100, 300, 0, 900)
    call = ToolCallRecord(tool, agent, "bash", {"command": "ls -la"}, "total 0\n" * 20, False, 0.05)
    events: list[TurnEvent] = [
        NodeStarted(node_id=turn_id, parent_id=None, node_kind="turn", label="agent turn", detail=prompt),
        NodeStarted(node_id=agent, parent_id=turn_id, node_kind="agent", label="agent", detail=prompt),
        TextDelta(node_id=agent, text="Let me look."),
        UsageRecorded(node_id=agent, usage=Usage(600, 40)),
        ToolCallStarted(node_id=tool, parent_id=agent, call_id="c1", name="bash", input=call.input),
        ToolCallFinished(node_id=tool, call_id="c1", name="bash", output=call.output, duration=call.duration),
        *(TextDelta(node_id=agent, text=answer[k : k + 16]) for k in range(0, len(answer), 16)),
        UsageRecorded(node_id=agent, usage=Usage(600, 260)),
        NodeFinished(node_id=agent, outcome="answered", output=answer),
        NodeFinished(node_id=turn_id, outcome="answered", output=answer),
    ]
    result = TurnResult(
        turn_id=turn_id,
        strategy="agent",
        prompt=prompt,
        answer=answer,
        outcome="answered",
        usage=usage,
        history=[Message.user(prompt), Message.assistant(answer)],
        evidence=[call],
        duration=1.5,
    )
    return result, events


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


async def bench(turns: int, page: int) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        data_dir = Path(tmp)
        store = await Store.open(data_dir)
        conversation_id = await store.create_conversation(title="bench", model="m", workdir=tmp)
        commit_time = 0.0
        started = time.perf_counter()
        for i in range(turns):
            result, events = make_turn(i)
            await store.begin_turn(
                conversation_id=conversation_id,
                turn_id=result.turn_id,
                strategy="agent",
                prompt=result.prompt,
            )
            t0 = time.perf_counter()
            await store.commit_turn(conversation_id, result, events)
            commit_time += time.perf_counter() - t0
        total = time.perf_counter() - started
        await store.close()
        size = sum(p.stat().st_size for p in data_dir.glob(DB_FILENAME + "*"))
        rows += [
            ("turns inserted", f"{turns:,}"),
            ("insert: begin_turn + commit_turn", f"{turns / total:,.0f} turns/s ({total:.1f} s total)"),
            (
                "insert: commit_turn alone",
                f"{turns / commit_time:,.0f} turns/s ({1000 * commit_time / turns:.2f} ms each)",
            ),
            ("database size (db + wal)", fmt_bytes(size)),
        ]

        t0 = time.perf_counter()
        store = await Store.open(data_dir)
        t_open = time.perf_counter() - t0
        first = await store.turns_page(conversation_id, limit=page)
        t_first = time.perf_counter() - t0
        assert len(first) == min(page, turns) and first[-1].seq == turns
        rows += [
            ("open store", f"{1000 * t_open:.1f} ms"),
            (f"open + first page ({page} newest turns)", f"{1000 * t_first:.1f} ms"),
        ]

        tracemalloc.start()
        t0 = time.perf_counter()
        seen, pages, before = len(first), 1, first[0].seq
        while True:
            batch = await store.turns_page(conversation_id, limit=page, before_seq=before)
            if not batch:
                break
            seen, pages, before = seen + len(batch), pages + 1, batch[0].seq
        t_all = time.perf_counter() - t0
        _, peak_paging = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert seen == turns, seen
        rows += [
            (
                f"page through all ({pages} pages of {page})",
                f"{1000 * t_all:.0f} ms ({1000 * t_all / pages:.2f} ms/page)",
            ),
            ("peak Python memory while paging", fmt_bytes(peak_paging)),
        ]

        tracemalloc.start()
        t0 = time.perf_counter()
        everything = await store.turns_page(conversation_id, limit=turns + 1, offset=0)
        t_everything = time.perf_counter() - t0
        _, peak_all = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert len(everything) == turns
        del everything
        rows.append(
            (
                "for contrast: all turns in one query",
                f"{1000 * t_everything:.0f} ms, peak {fmt_bytes(peak_all)}",
            )
        )

        t0 = time.perf_counter()
        history = await store.load_history(conversation_id)
        rows.append(
            (f"load_history ({len(history):,} messages)", f"{1000 * (time.perf_counter() - t0):.0f} ms")
        )
        t0 = time.perf_counter()
        events = await store.turn_events(first[-1].id)
        rows.append(
            (f"turn_events of one turn ({len(events)} rows)", f"{1000 * (time.perf_counter() - t0):.2f} ms")
        )
        t0 = time.perf_counter()
        hits = await store.search(f"{turns - 1} migration runner")
        rows.append(
            (f"search over {turns:,} turns ({len(hits)} hits)", f"{1000 * (time.perf_counter() - t0):.1f} ms")
        )
        t0 = time.perf_counter()
        await store.stats()
        rows.append(("stats (audit, by week)", f"{1000 * (time.perf_counter() - t0):.1f} ms"))
        await store.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--page", type=int, default=50)
    args = parser.parse_args()
    print_rows(asyncio.run(bench(args.turns, args.page)))


if __name__ == "__main__":
    main()
