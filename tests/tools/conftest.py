from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tui_assist.core.tooling import ToolContext
from tui_assist.tools.registry import Toolset, default_toolbox


async def _no_subagents(description: str, prompt: str) -> str:
    raise AssertionError("this test runs no sub-agents")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workdir=tmp_path, node_id="tool-1", run_subagent=_no_subagents)


@pytest.fixture
async def toolset(tmp_path: Path) -> AsyncIterator[Toolset]:
    """A default toolset on tmp_path with short limits; its shell is killed afterwards."""
    box = default_toolbox(tmp_path, bash_timeout=0.5, max_output_chars=2_000)
    try:
        yield box
    finally:
        await box.aclose()
