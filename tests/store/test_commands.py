from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tui_assist.cli import history as commands
from tui_assist.store import Store

from .helpers import REFINE_ANSWER, REFINE_PROMPT, commit_plain, run_agent_turn, run_refine


@pytest.fixture
async def ids(store: Store, tmp_path: Path) -> dict[str, str]:
    refine = await store.create_conversation(title="Penguin eggs", model="claude-x", workdir="/w")
    await run_refine(store, tmp_path, refine, "r1")
    await run_agent_turn(store, tmp_path, refine, "a1", "and ```fenced``` ducks?", "Ducks quack.")
    other = await store.create_conversation(title="Other topic", model="claude-x", workdir="/w")
    await commit_plain(store, other, "o1", "unrelated", "reply")
    return {"refine": refine, "other": other}


async def _run(fn, *args, **kwargs) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    if "err" in kwargs:
        kwargs["err"] = err
    code = await fn(*args, out, **kwargs)
    return code, out.getvalue(), err.getvalue()


async def test_list(store: Store, ids: dict[str, str]) -> None:
    code, out, _ = await _run(commands.history_list, store)
    assert code == 0
    assert out.index(ids["other"]) < out.index(ids["refine"]) and "Penguin eggs" in out
    code, out, _ = await _run(commands.history_list, store, as_json=True)
    data = json.loads(out)
    assert [c["id"] for c in data] == [ids["other"], ids["refine"]]
    assert data[1]["turns"] == 2 and data[1]["title"] == "Penguin eggs"
    code, out, _ = await _run(commands.history_list, store, query="penguin", as_json=True)
    assert [c["id"] for c in json.loads(out)] == [ids["refine"]]


async def test_show(store: Store, ids: dict[str, str]) -> None:
    code, out, _ = await _run(commands.history_show, store, ids["refine"][:8], err=None)
    assert code == 0
    assert REFINE_PROMPT in out and REFINE_ANSWER in out and "Ducks quack." in out
    code, out, _ = await _run(commands.history_show, store, ids["refine"], as_json=True, err=None)
    data = json.loads(out)
    assert data["conversation"]["id"] == ids["refine"]
    assert [(t["seq"], t["strategy"], t["outcome"], t["rounds"]) for t in data["turns"]] == [
        (1, "refine", "answered", 2),
        (2, "agent", "answered", 0),
    ]


async def test_unknown_id_is_a_usage_error(store: Store, ids: dict[str, str]) -> None:
    for fn, kwargs in (
        (commands.history_show, {}),
        (commands.history_show, {"as_json": True}),
        (commands.history_export, {"fmt": "md"}),
        (commands.history_export, {"fmt": "json"}),
    ):
        code, out, err = await _run(fn, store, "no-such-id", err=None, **kwargs)
        assert (code, out) == (2, ""), fn
        assert "no-such-id" in err
    code, out, err = await _run(commands.history_export, store, ids["refine"], fmt="pdf", err=None)
    assert code == 2 and "pdf" in err


async def test_search(store: Store, ids: dict[str, str]) -> None:
    code, out, _ = await _run(commands.history_search, store, "penguins")
    assert code == 0 and ids["refine"] in out and "[penguins]" in out
    code, out, _ = await _run(commands.history_search, store, "quack", as_json=True)
    [hit] = json.loads(out)
    assert (hit["conversation_id"], hit["turn_id"], hit["seq"]) == (ids["refine"], "a1", 2)
    code, out, _ = await _run(commands.history_search, store, 'foo"bar -x')
    assert code == 0 and "No matches" in out


async def test_export_json_has_rounds_and_tool_calls(store: Store, ids: dict[str, str]) -> None:
    code, out, _ = await _run(commands.history_export, store, ids["refine"], fmt="json", err=None)
    assert code == 0
    data = json.loads(out)
    refine, agent = data["turns"]
    assert refine["answer"] == REFINE_ANSWER and refine["tool_calls"] == []
    assert [(r["index"], r["verdict"], r["feedback"]) for r in refine["rounds"]] == [
        (1, "revise", "Add the numbers."),
        (2, "pass", ""),
    ]
    assert refine["rounds"][0]["tool_calls"] == [
        {
            "name": "echo",
            "input": {"text": "one"},
            "output": "echo: one",
            "is_error": False,
            "duration": refine["rounds"][0]["tool_calls"][0]["duration"],
        }
    ]
    assert refine["rounds"][1]["tool_calls"][0]["output"] == "1 2 3"
    assert agent["rounds"] == []
    assert [(c["name"], c["input"], c["output"]) for c in agent["tool_calls"]] == [
        ("echo", {"text": "and ```fenced``` ducks?"}, "echo: and ```fenced``` ducks?")
    ]


async def test_export_markdown_has_rounds_and_tool_calls(store: Store, ids: dict[str, str]) -> None:
    code, out, _ = await _run(commands.history_export, store, ids["refine"], fmt="md", err=None)
    assert code == 0
    assert out.startswith("# Penguin eggs\n")
    assert "## Turn 1 · refine · answered" in out
    assert "### Round 1 · REVISE" in out and "**Feedback:** Add the numbers." in out
    assert "### Round 2 · PASS" in out
    assert "`echo one` (ok" in out and '"text": "one"' in out and "echo: one" in out
    assert "`agent: count` (ok" in out and "1 2 3" in out
    # a tool output holding ``` is fenced with a longer fence, so it cannot end the block early
    assert "````\necho: and ```fenced``` ducks?\n````" in out
    assert out.count("Draft answer about eggs.") == 1  # round 1's answer


async def test_stats(store: Store, ids: dict[str, str]) -> None:
    code, out, _ = await _run(commands.stats, store, as_json=True)
    assert code == 0
    [week] = json.loads(out)
    assert week["turns"] == 3 and week["outcomes"] == {"answered": 3}
    assert week["input_tokens"] > 0 and week["tool_calls"] == 3
    code, out, _ = await _run(commands.stats, store)
    header, row = out.splitlines()
    assert header.split()[:3] == ["WEEK", "TURNS", "ANSWERED"]
    assert row.split()[1:3] == ["3", "3"]


async def test_empty_store_outputs(store: Store) -> None:
    assert (await _run(commands.history_list, store))[1] == "No conversations yet.\n"
    assert json.loads((await _run(commands.history_list, store, as_json=True))[1]) == []
    assert (await _run(commands.stats, store))[1] == "No turns yet.\n"
    assert json.loads((await _run(commands.stats, store, as_json=True))[1]) == []
