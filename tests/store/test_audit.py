from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tui_assist.core.conversation import Usage
from tui_assist.store import Store

from .conftest import Clock
from .helpers import REFINE_ANSWER, REFINE_PROMPT, plain_events, plain_result, run_refine

DAY = 86_400.0


async def test_stats_by_iso_week(data_dir: Path) -> None:
    clock = Clock()  # Wednesday 2025-01-15, ISO week 2025-W03
    store = await Store.open(data_dir, clock=clock)
    try:
        conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")

        async def turn(turn_id: str, outcome: str, usage: Usage) -> None:
            await store.begin_turn(
                conversation_id=conversation_id, turn_id=turn_id, strategy="agent", prompt="p"
            )
            result = plain_result(turn_id, "p", "a", usage=usage)
            result.outcome = outcome  # type: ignore[assignment]
            await store.commit_turn(conversation_id, result, [])

        await turn("w3a", "answered", Usage(100, 10, 5, 7))
        await turn("w3b", "unverified", Usage(50, 5))
        clock.now += 7 * DAY  # 2025-W04
        await turn("w4a", "answered", Usage(1, 2))
        await store.begin_turn(conversation_id=conversation_id, turn_id="w4c", strategy="refine", prompt="p")
        await store.mark_cancelled("w4c", [])
        clock.now -= 22 * DAY  # Tuesday 2024-12-31 belongs to ISO week 2025-W01
        await turn("w1", "error", Usage())

        weeks = await store.stats()
    finally:
        await store.close()
    assert [w.week for w in weeks] == ["2025-W01", "2025-W03", "2025-W04"]
    w1, w3, w4 = weeks
    assert (w3.turns, w3.outcomes) == (2, {"answered": 1, "unverified": 1})
    assert w3.usage == Usage(150, 15, 5, 7)
    assert (w4.turns, w4.outcomes, w4.usage) == (2, {"answered": 1, "cancelled": 1}, Usage(1, 2))
    assert (w1.turns, w1.outcomes) == (1, {"error": 1})


async def test_audit_lines_hold_no_prompt_or_answer_text(store: Store, tmp_path: Path) -> None:
    conversation_id = await store.create_conversation(title="t", model="m", workdir="/w")
    run = await run_refine(store, tmp_path, conversation_id, "r1")
    secret_prompt, secret_answer = "SECRETPROMPTXYZ", "SECRETANSWERXYZ"
    await store.begin_turn(
        conversation_id=conversation_id, turn_id="a1", strategy="agent", prompt=secret_prompt
    )
    await store.commit_turn(
        conversation_id, plain_result("a1", secret_prompt, secret_answer), plain_events("a1", secret_answer)
    )
    lines = await store.audit_lines()
    assert [(a.turn_id, a.strategy, a.outcome, a.rounds, a.tool_calls) for a in lines] == [
        ("r1", "refine", "answered", 2, 2),
        ("a1", "agent", "answered", 0, 0),
    ]
    assert lines[0].usage == run.result.usage
    text = "\n".join(a.to_json() for a in lines)
    with sqlite3.connect(store.path) as raw:
        text += "\n" + json.dumps(raw.execute("SELECT * FROM audit").fetchall())
    for needle in (secret_prompt, secret_answer, REFINE_PROMPT, REFINE_ANSWER, "penguins", "eggs"):
        assert needle not in text
    assert set(json.loads(lines[0].to_json())) == {
        "at",
        "conversation_id",
        "turn_id",
        "strategy",
        "hooks_run",
        "hooks_blocked",
        "outcome",
        "rounds",
        "tool_calls",
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "duration",
    }
