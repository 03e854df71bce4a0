"""Input tokens billed over a scripted 200-turn session, history compaction on versus off.

Runs the real SDK against the loopback fake, which here plays a model with a small context
window: a request whose input (len(json)/4 tokens, the fake's count) plus its `max_tokens`
passes the window is refused as the API refuses it (`400 prompt is too long: N tokens > M
maximum`, or `input length and max_tokens exceed context limit: N + K > M`). Every third turn runs a
real `bash` command with a few KB of output; the others are plain questions with long answers.

- Off: the agent turns run with no context guard, as before this feature; the session fails
  at the window. The script reports the first failing turn and what was billed until then.
- On: the session's `ContextKeeper` (compact_at 0.8) keeps every request inside the window.

"Billed" weighs input as the API prices it relative to base input: uncached x1, cache writes
x1.25, cache reads x0.1 (summariser calls included).

    python bench/bench_compaction.py [--turns 200] [--window 16000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.anthropic import Error, FakeAnthropic, RecordedRequest, Reply, ToolUse, estimate_tokens  # noqa: E402
from tui_assist.core.approval import ApprovalPolicy  # noqa: E402
from tui_assist.core.conversation import Conversation, Usage  # noqa: E402
from tui_assist.core.observer import NullObserver  # noqa: E402
from tui_assist.core.turn import TurnDeps  # noqa: E402
from tui_assist.providers.anthropic import AnthropicProvider  # noqa: E402
from tui_assist.session.context import ContextKeeper  # noqa: E402
from tui_assist.tools.registry import toolbox_factory  # noqa: E402
from tui_assist.turns.agent import AgentTurn  # noqa: E402


def prompt(i: int) -> str:
    if i % 3 == 0:
        return f"Turn {i}: run the listing for module {i} and tell me what stands out."
    return f"Turn {i}: explain how part {i} of the design works, with the trade-offs."


def answer(i: int) -> str:
    return f"Part {i}: " + f"the component handles case {i} by delegating, then checks the result; " * 18


def make_model(window: int) -> object:
    """The fake's behaviour: refuse what passes the window, summarise, run a tool every third turn."""

    def step(req: RecordedRequest) -> Reply | Error:
        body = req.body or {}
        tokens = estimate_tokens({k: body.get(k) for k in ("system", "tools", "messages")})
        if tokens > window:
            return Error(400, message=f"prompt is too long: {tokens} tokens > {window} maximum")
        if tokens + body["max_tokens"] > window:
            limit = f"{tokens} + {body['max_tokens']} > {window}"
            return Error(400, message=f"input length and `max_tokens` exceed context limit: {limit}")
        if "You summarise" in json.dumps(body.get("system")):
            return Reply("Summary: the user walked through the design part by part; " * 6)
        messages = body["messages"]
        prompts = [
            first["text"]
            for m in messages
            if m["role"] == "user" and (first := m["content"][0]).get("type") == "text"
            and first["text"].startswith("Turn ")
        ]  # fmt: skip
        turn = int(prompts[-1].split(":")[0].split()[1])
        if turn % 3 == 0 and messages[-1]["content"][0].get("type") == "text":
            command = f"head -c 3000 /dev/zero | tr '\\0' x; echo ' module {turn}'"
            return Reply([ToolUse("bash", {"command": command}, id=f"toolu_{turn}")])
        return Reply(answer(turn))

    return step


@dataclass
class Run:
    billed: float = 0.0
    per_turn: list[float] = field(default_factory=lambda: list[float]())
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    failed_at: int | None = None
    error: str = ""
    compactions: int = 0
    peak_request: int = 0
    seconds: float = 0.0


async def run(compaction: bool, turns: int, window: int, workdir: Path) -> Run:
    with FakeAnthropic(validate_requests=False) as fake:
        step = make_model(window)
        fake.add(*([step] * (turns * 4)))
        provider = AnthropicProvider(api_key="bench", base_url=fake.base_url)
        keeper = ContextKeeper(window=lambda: window, provider=provider) if compaction else None
        deps = TurnDeps(
            provider,
            toolbox_factory(workdir),
            approvals=ApprovalPolicy("allow"),
            context=keeper,
            max_tokens=1024,
        )
        conversation = Conversation("bench")
        out = Run()
        started = time.perf_counter()
        for i in range(turns):
            result = await AgentTurn(deps).run(conversation, prompt(i), NullObserver())
            u = result.usage
            out.usage = out.usage + u
            billed = u.input_tokens + 1.25 * u.cache_creation_input_tokens + 0.1 * u.cache_read_input_tokens
            out.billed += billed
            out.per_turn.append(billed)
            if result.outcome == "error":
                out.failed_at, out.error = i + 1, result.error or ""
                break
            out.turns = i + 1
        out.seconds = time.perf_counter() - started
        out.compactions = keeper.compactions if keeper is not None else 0
        sizes = [
            estimate_tokens({k: (r.body or {}).get(k) for k in ("system", "tools", "messages")})
            for r in fake.requests
            if r.status == 200 and r.path == "/v1/messages"
        ]
        out.peak_request = max(sizes, default=0)
        await provider.aclose()
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--window", type=int, default=16_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        off = asyncio.run(run(False, args.turns, args.window, Path(tmp)))
        on = asyncio.run(run(True, args.turns, args.window, Path(tmp)))
    print(f"{args.turns}-turn scripted session, context window {args.window:,} tokens (fake), compact_at 0.8")
    print(
        f"{'':14}{'turns done':>11}{'input (all)':>13}{'billed':>11}{'peak request':>14}{'compactions':>13}{'time':>8}"
    )
    for name, r in (("compaction off", off), ("compaction on", on)):
        total = r.usage.total_input_tokens
        print(
            f"{name:14}{r.turns:>11}{total:>13,}{r.billed:>11,.0f}{r.peak_request:>14,}{r.compactions:>13}"
            f"{r.seconds:>7.1f}s"
        )
    if off.failed_at is not None:
        print(f"compaction off: turn {off.failed_at} fails at the window: {off.error}")
    if on.failed_at is not None:
        print(f"compaction on: turn {on.failed_at} failed: {on.error}")
    if off.turns and on.turns >= off.turns:
        same = sum(on.per_turn[: off.turns])
        print(f"the first {off.turns} turns, billed: off {off.billed:,.0f}, on {same:,.0f}")
        tail = on.per_turn[-50:]
        print(
            f"billed input per turn with compaction: mean {on.billed / on.turns:,.0f}, "
            f"last {len(tail)} turns {sum(tail) / len(tail):,.0f}, max {max(on.per_turn):,.0f}"
        )


if __name__ == "__main__":
    main()
