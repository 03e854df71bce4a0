"""A long stored conversation (Markdown answers with code, some tool calls), for resume tests and
benches: run through a real `ChatSession` and store, so its turns and event logs are as a user's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from tests.ui.helpers import FakeToolbox, settings
from tui_assist.core.conversation import TextBlock, ToolUseBlock
from tui_assist.core.observer import NullObserver
from tui_assist.providers.scripted import ScriptedProvider, ScriptStep
from tui_assist.session.chat import ChatSession

if TYPE_CHECKING:
    from tui_assist.ui.app import TuiAssistApp


def answer(i: int) -> str:
    """Turn `i`'s answer: a heading, prose, a list and a Python block (about 1 KB)."""
    return (
        f"## Answer {i}\n\nHere is how to do **step {i}**, with the `helper_{i}` function and a "
        "short explanation of why it works this way.\n\n"
        f"- first, read the input of step {i}\n- then, transform it\n- finally, write it out\n\n"
        f"```python\ndef helper_{i}(values: list[int]) -> int:\n"
        f'    """Sum the values of step {i}."""\n'
        "    total = 0\n    for value in values:\n        total += value * 2\n    return total\n```\n\n"
        f"That is all for step {i}: run it and check the output.\n"
    )


def script(turns: int) -> list[ScriptStep]:
    """Replies for `turns` turns; every fifth turn runs a tool call first."""
    steps: list[ScriptStep] = []
    for i in range(turns):
        if i % 5 == 4:
            steps.append([ToolUseBlock(f"call-{i}", "bash", {"command": f"ls step{i}"})])
        steps.append([TextBlock(answer(i))])
    return steps


async def seed(data_dir: Path, workdir: Path, turns: int) -> str:
    """Store a conversation of `turns` turns in `data_dir`; returns its id."""
    provider = ScriptedProvider(script(turns), delta_chars=64)
    session = ChatSession(
        settings(workdir, data_dir=data_dir, checkpoints=False),
        provider_factory=lambda: provider,
        toolbox_factory=lambda: FakeToolbox(workdir),
        mode="bypass",
    )
    await session.load()
    try:
        for i in range(turns):
            outcome = await session.run_turn(f"prompt {i}: how do I do step {i}?", NullObserver())
            assert outcome.saved, outcome.warnings
    finally:
        await session.aclose()
    assert session.conversation_id is not None
    return session.conversation_id


def resumed_app(tmp_path: Path, conversation_id: str) -> TuiAssistApp:
    """The TUI resuming `conversation_id`, which `seed` stored in `tmp_path / "data"`; its next
    turn answers "A new answer."."""
    from tui_assist.ui.app import TuiAssistApp  # (the benches import `seed` alone)
    from tui_assist.ui.screens.main import StartOptions

    return TuiAssistApp(
        settings(tmp_path, data_dir=tmp_path / "data", checkpoints=False),
        provider_factory=lambda: ScriptedProvider(["A new answer."]),
        toolbox_factory=lambda: FakeToolbox(tmp_path),
        chat_start=StartOptions(resume=conversation_id),
    )


if __name__ == "__main__":  # python -m tests.ui.long_conversation DATA_DIR WORKDIR TURNS
    import sys

    print(asyncio.run(seed(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))))
