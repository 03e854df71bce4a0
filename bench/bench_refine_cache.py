"""Billed input tokens of a 3-round refine turn, prompt caching on vs off.

Runs the real SDK against the loopback fake, which emulates caching per breakpoint (prefix
tokens estimated as len(json)/4). The same script runs twice: only the provider's
`prompt_caching` flag differs. "Billed" weighs tokens as the API prices them relative to base
input: uncached x1, cache writes x1.25, cache reads x0.1.

    python bench/bench_refine_cache.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.anthropic import FakeAnthropic, Reply, ToolUse  # noqa: E402
from tui_assist.core.approval import ApprovalPolicy  # noqa: E402
from tui_assist.core.conversation import Conversation, Message, Usage  # noqa: E402
from tui_assist.core.observer import NullObserver  # noqa: E402
from tui_assist.core.turn import TurnDeps  # noqa: E402
from tui_assist.providers.anthropic import AnthropicProvider  # noqa: E402
from tui_assist.tools.registry import toolbox_factory  # noqa: E402
from tui_assist.turns.refine import RefineTurn  # noqa: E402


def script() -> list[Reply]:
    steps: list[Reply] = []
    for i in range(3):
        steps += [
            Reply([ToolUse("bash", {"command": f"seq 1 {200 * (i + 1)}"})]),
            Reply([ToolUse("str_replace_based_edit_tool", {"command": "view", "path": "."})]),
            Reply(f"Round {i + 1} answer."),
            Reply("REVISE\nShow the full count." if i < 2 else "PASS"),
        ]
    return steps


async def run(cache: bool, workdir: Path) -> Usage:
    with FakeAnthropic() as fake:
        fake.add(*script())
        provider = AnthropicProvider(api_key="bench", base_url=fake.base_url, prompt_caching=cache)
        deps = TurnDeps(provider, toolbox_factory(workdir), approvals=ApprovalPolicy("allow"))
        # Some earlier conversation, as in a real session: the stable prefix worth caching.
        history = [
            m
            for i in range(6)
            for m in (
                Message.user(f"earlier question {i} " * 40),
                Message.assistant(f"earlier answer {i} " * 80),
            )
        ]
        result = await RefineTurn(deps, max_rounds=3).run(
            Conversation("bench", history), "Count the lines.", NullObserver()
        )
        await provider.aclose()
        assert result.outcome == "answered" and len(result.rounds) == 3, result
        return result.usage


def billed(u: Usage) -> float:
    return u.input_tokens + 1.25 * u.cache_creation_input_tokens + 0.1 * u.cache_read_input_tokens


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        on, off = asyncio.run(run(True, Path(tmp))), asyncio.run(run(False, Path(tmp)))
    print(
        f"{'caching':<8} {'uncached':>9} {'cache_write':>12} {'cache_read':>11} {'total_in':>9} {'billed_in':>10}"
    )
    for name, u in (("on", on), ("off", off)):
        print(
            f"{name:<8} {u.input_tokens:>9} {u.cache_creation_input_tokens:>12} {u.cache_read_input_tokens:>11} {u.total_input_tokens:>9} {billed(u):>10.0f}"
        )
    print(f"billed input ratio on/off: {billed(on) / billed(off):.3f}")


if __name__ == "__main__":
    main()
