from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tui_assist.core.tooling import ToolContext, ToolInputError
from tui_assist.tools.subagent import AgentTool


def context(tmp_path: Path, run_subagent: Any) -> ToolContext:
    return ToolContext(workdir=tmp_path, node_id="tool-7", run_subagent=run_subagent)


async def test_runs_the_subagent_with_the_given_arguments(tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []

    async def run_subagent(description: str, prompt: str) -> str:
        calls.append((description, prompt))
        return "the answer is 42"

    tool = AgentTool()
    args = tool.parse({"description": "find answer", "prompt": "What is the answer?"})
    out = await tool.run(args, context(tmp_path, run_subagent))

    assert calls == [("find answer", "What is the answer?")]
    assert out.content == "the answer is 42"
    assert not out.is_error


async def test_a_failing_subagent_becomes_an_error_result(tmp_path: Path) -> None:
    async def run_subagent(description: str, prompt: str) -> str:
        raise RuntimeError("provider down")

    tool = AgentTool()
    out = await tool.run(tool.parse({"description": "d", "prompt": "p"}), context(tmp_path, run_subagent))
    assert out.is_error
    assert "provider down" in out.content


async def test_cancellation_propagates(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def run_subagent(description: str, prompt: str) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    tool = AgentTool()
    task = asyncio.create_task(
        tool.run(tool.parse({"description": "d", "prompt": "p"}), context(tmp_path, run_subagent))
    )
    await asyncio.wait_for(started.wait(), 10)  # the sub-agent runs
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"prompt": "p"}, "description: is required"),
        ({"description": "d"}, "prompt: is required"),
        ({"description": "", "prompt": "p"}, "description"),
        ({"description": "d", "prompt": "   "}, "prompt: must not be blank"),
        ({"description": "d", "prompt": 1}, "prompt: Input should be a valid string"),
    ],
)
def test_invalid_input_is_refused(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolInputError, match=message):
        AgentTool().parse(raw)


def test_spec_summary_and_side_effects() -> None:
    tool = AgentTool()
    assert tool.spec.name == "agent"
    assert tool.spec.native_type is None
    assert tool.spec.input_schema["required"] == ["description", "prompt"]
    args = tool.parse({"description": "survey", "prompt": "List the modules."})
    assert not tool.side_effecting(args)
    assert tool.summary(args) == "sub-agent: survey\nList the modules."
