"""Streaming a long Markdown answer through the TUI's conversation pane, headless.

Streams a ~100 KB Markdown answer in 5,000 deltas through the real path (core events posted to
the main screen, `CoreEvent` -> conversation -> `StreamingMarkdown`) and compares it with
rendering the finished answer once through the same widget. Prints:

- CPU time of streaming / CPU time of rendering once (goal: <= 2.5x), for deltas fed as fast as
  the loop takes them and for deltas paced at 1,000 per second;
- the longest event-loop stall seen while streaming (goal: < 100 ms);
- the latency from posting the last delta to a frame that shows it, at 1,000 deltas/s
  (goal: <= 250 ms);
- optionally (`--turns N`) memory after N short turns, to show it stays flat.

`--history N` mounts N finished turns (a prompt, a few paragraphs of Markdown, a tool call; every
third one a refine turn with two rounds and verdicts) in the pane before each measurement, so the
figures show whether a frame's cost grows with the conversation as well as with the answer. With
`--panels` they go through the main screen as a live turn's events do, so the agent tree and the
flow panel hold them too (as in a real session).

Run: `.venv/bin/python bench/bench_streaming.py` (add `--quick` for a smaller run).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.pilot import Pilot  # noqa: E402

from tui_assist.core.events import (  # noqa: E402
    NodeFinished,
    NodeStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEvent,
    VerdictReached,
)
from tui_assist.session.config import Settings  # noqa: E402
from tui_assist.ui.app import TuiAssistApp  # noqa: E402
from tui_assist.ui.bridge import CoreEvent, TextualObserver  # noqa: E402
from tui_assist.ui.widgets.turn_parts import AnswerText  # noqa: E402

SIZE = (120, 40)


def make_document(target: int = 100_000) -> str:
    """A deterministic Markdown answer of about `target` characters with varied blocks."""
    parts: list[str] = []
    i = 0
    while sum(len(p) + 2 for p in parts) < target:
        i += 1
        parts.append(f"## Section {i}: what the logs show")
        parts.append(
            f"Paragraph {i}. The service restarted **{i % 7 + 2} times** between 02:00 and 03:00; "
            f"each restart followed a `SIGTERM` from the supervisor. See [the runbook](https://example.com/{i}) "
            "for the escalation path, and note that *retries* were capped at three per minute, which "
            "explains the gaps in the request log that the on-call engineer noticed."
        )
        parts.append(
            "\n".join(f"- item {i}.{k}: check `service-{k}` health and its last deploy" for k in range(4))
        )
        if i % 3 == 0:
            body = "\n".join(f"    result_{k} = handle(event_{k})  # step {k}" for k in range(8))
            parts.append(f"```python\ndef replay_{i}(events):\n{body}\n    return True\n```")
        if i % 4 == 0:
            rows = "\n".join(
                f"| host-{k} | {k * 13 % 97} | {'ok' if k % 2 else 'degraded'} |" for k in range(5)
            )
            parts.append("| host | restarts | state |\n|---|---|---|\n" + rows)
        if i % 5 == 0:
            parts.append("> A note from the previous incident: the cache warmed within two minutes.")
    return "\n\n".join(parts) + "\n"


def split_deltas(text: str, count: int) -> list[str]:
    size = max(1, len(text) // count)
    deltas = [text[i : i + size] for i in range(0, len(text), size)]
    if len(deltas) > count:
        deltas[count - 1] = "".join(deltas[count - 1 :])
        deltas = deltas[:count]
    return deltas


class StallMonitor:
    """Measures how late a 5 ms sleep wakes up: the longest time the loop was busy."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.max_stall = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(self.interval)
            self.max_stall = max(self.max_stall, time.perf_counter() - start - self.interval)

    def __enter__(self) -> StallMonitor:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


def _app() -> TuiAssistApp:
    settings = Settings(provider="scripted", workdir=Path("/tmp"))
    return TuiAssistApp(settings, provider_factory=lambda: _NoProvider(), use_store=False)


class _NoProvider:
    name = "none"
    model = "bench"

    async def complete(self, request, sink):  # pragma: no cover - never called
        raise RuntimeError("not used")

    async def aclose(self) -> None:
        return None


def _history_answer(n: int) -> str:
    return (
        f"## Turn {n}\n\nThe deploy of **service-{n % 7}** failed at the health check; the logs show "
        f"`exit 137` twice, which is the OOM killer. See [the runbook](https://example.com/{n}).\n\n"
        f"- raise the memory limit to {256 + n % 4 * 128} MiB\n- cap the worker pool at {n % 5 + 2}\n"
        "- redeploy and watch the first five minutes\n\n"
        "The earlier restarts were unrelated: a config reload, *not* a crash, and the cache warmed "
        "within two minutes each time, so nothing else needs attention today.\n"
    )


def history_events(n: int) -> tuple[str, str, list[TurnEvent]]:
    """The prompt, strategy and core events of one realistic finished turn `n`."""
    t = f"h{n}"
    tool = ToolCallStarted(
        node_id=f"{t}.tool",
        parent_id="",
        call_id=f"c{n}",
        name="bash",
        input={"command": f"journalctl -u service-{n % 7} --since -1h"},
    )
    done = ToolCallFinished(
        node_id=f"{t}.tool", call_id=f"c{n}", name="bash", output="line\n" * 40, duration=0.4
    )
    events: list[TurnEvent] = [NodeStarted(node_id=t, parent_id=None, node_kind="turn", label="turn")]
    if n % 3 == 2:
        for r in (1, 2):
            rnd, gen = f"{t}.r{r}", f"{t}.r{r}.g"
            events += [
                NodeStarted(node_id=rnd, parent_id=t, node_kind="round", label=f"round {r}"),
                NodeStarted(node_id=gen, parent_id=rnd, node_kind="generate", label="generate"),
                TextDelta(node_id=gen, text="Checking the logs first.\n"),
                replace(tool, node_id=f"{tool.node_id}{r}", parent_id=gen),
                replace(done, node_id=f"{tool.node_id}{r}"),
                TextDelta(node_id=gen, text=_history_answer(n)),
                NodeFinished(node_id=gen, output=_history_answer(n)),
                VerdictReached(
                    node_id=f"{rnd}.c",
                    round=r,
                    verdict="pass" if r == 2 else "revise",
                    feedback="" if r == 2 else "Say which limit to raise and by how much.",
                ),
                NodeFinished(node_id=rnd),
            ]
        events.append(NodeFinished(node_id=t, outcome="answered", output=_history_answer(n)))
        return f"why did deploy {n} fail? check it twice", "refine", events
    gen = f"{t}.a"
    events += [
        NodeStarted(node_id=gen, parent_id=t, node_kind="agent", label="agent"),
        TextDelta(node_id=gen, text="Let me look at the service logs.\n"),
        replace(tool, parent_id=gen),
        done,
        TextDelta(node_id=gen, text=_history_answer(n)),
        NodeFinished(node_id=gen, output=_history_answer(n)),
        NodeFinished(node_id=t, outcome="answered", output=_history_answer(n)),
    ]
    return f"why did deploy {n} fail?", "agent", events


async def mount_history(app: TuiAssistApp, pilot: Pilot[int], turns: int, *, panels: bool = False) -> None:
    """Show `turns` finished turns in the pane (and the panels), as if the session had run a while."""
    screen = app.main_screen
    conversation = screen.conversation
    for n in range(turns):
        prompt, strategy, events = history_events(n)
        conversation.begin_turn(prompt, strategy)
        for event in events:
            if panels:
                screen.apply_event(event)
            else:
                screen.log_model.apply(event)  # the screen's fold, which the pane reads
                conversation.apply(event)
        if n % 10 == 9:
            await pilot.pause()
    await pilot.pause()


async def _painted(widget: AnswerText) -> None:
    """Wait until queued deltas are flushed and a frame has been drawn after that."""
    while widget._pending or widget._timer is not None:
        await asyncio.sleep(0.001)
    done = asyncio.Event()
    widget.call_after_refresh(done.set)
    await done.wait()


async def run_stream(
    deltas: list[str], *, rate: float | None, finish: bool = True, history: int = 0, panels: bool = False
) -> dict[str, float]:
    """Stream `deltas` (paced at `rate` per second, or as fast as possible) into a fresh app."""
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if history:
            await mount_history(app, pilot, history, panels=panels)
        screen = app.main_screen
        observer = TextualObserver(screen, app)
        screen.conversation.begin_turn("stream a long answer", "agent")
        for event in (
            NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="agent turn"),
            NodeStarted(node_id="a", parent_id="t", node_kind="agent", label="agent"),
        ):
            observer.on_event(event)
        await pilot.pause()
        gc.collect()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        with StallMonitor() as monitor:
            start = time.perf_counter()
            for i, delta in enumerate(deltas):
                observer.on_event(TextDelta(node_id="a", text=delta))
                if rate is None:
                    await asyncio.sleep(0)
                else:
                    delay = start + (i + 1) / rate - time.perf_counter()
                    await asyncio.sleep(max(0.0, delay))
            last_post = time.perf_counter()
            await pilot.pause()
            widget = app.query(AnswerText).last()
            await _painted(widget)
            latency = time.perf_counter() - last_post
            if finish:
                observer.on_event(NodeFinished(node_id="a", output=""))
                observer.on_event(NodeFinished(node_id="t", outcome="answered"))
                await pilot.pause()
                await _painted(widget)
        cpu = time.process_time() - cpu0
        wall = time.perf_counter() - wall0
        assert widget.source == "".join(deltas), "the widget lost or changed streamed text"
        assert widget.finished or not finish
        return {"cpu": cpu, "wall": wall, "stall": monitor.max_stall, "latency": latency}


async def run_driver_only(count: int, rate: float) -> float:
    """CPU of the pacing loop and stall monitor alone (no app): the benchmark's own share."""
    cpu0 = time.process_time()
    with StallMonitor():
        start = time.perf_counter()
        for i in range(count):
            await asyncio.sleep(max(0.0, start + (i + 1) / rate - time.perf_counter()))
    return time.process_time() - cpu0


async def run_once(document: str, history: int = 0, panels: bool = False) -> dict[str, float]:
    """Render the finished answer once through the same widget."""
    return await run_stream([document], rate=None, history=history, panels=panels)


async def run_turns(turns: int) -> list[tuple[int, float]]:
    """Short turns one after another; returns (turn, traced MB) samples."""
    app = _app()
    samples: list[tuple[int, float]] = []
    async with app.run_test(size=SIZE) as pilot:
        await app.session.wait_ready()
        await app.workers.wait_for_complete()
        screen = app.main_screen
        tracemalloc.start()
        for n in range(1, turns + 1):
            screen.conversation.begin_turn(f"question {n}", "agent")
            for event in (
                NodeStarted(node_id=f"t{n}", parent_id=None, node_kind="turn", label="agent turn"),
                NodeStarted(node_id=f"a{n}", parent_id=f"t{n}", node_kind="agent", label="agent"),
                TextDelta(node_id=f"a{n}", text=f"Answer {n}: **fine**, nothing to report.\n\n- a\n- b\n"),
                NodeFinished(node_id=f"a{n}", output="x"),
                NodeFinished(node_id=f"t{n}", outcome="answered", output="x"),
            ):
                screen.post_message(CoreEvent(event))
            await pilot.pause()
            if n % max(1, turns // 5) == 0:
                gc.collect()
                samples.append((n, tracemalloc.get_traced_memory()[0] / 1e6))
        tracemalloc.stop()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 KB in 1,000 deltas")
    parser.add_argument("--turns", type=int, default=0, help="also measure memory over N short turns")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--history", type=int, default=0, help="finished turns in the pane before streaming")
    parser.add_argument("--panels", action="store_true", help="the history in the tree and flow panel too")
    args = parser.parse_args()
    size, count = (20_000, 1_000) if args.quick else (100_000, 5_000)
    document = make_document(size)
    deltas = split_deltas(document, count)
    print(
        f"document: {len(document):,} chars, {len(deltas):,} deltas of ~{len(deltas[0])} chars; terminal {SIZE}; "
        f"{args.history} earlier turns in the pane{' and the panels' if args.panels else ''}"
    )

    history, panels = args.history, args.panels
    once = [asyncio.run(run_once(document, history, panels)) for _ in range(args.repeat)]
    fast = [
        asyncio.run(run_stream(deltas, rate=None, history=history, panels=panels)) for _ in range(args.repeat)
    ]
    paced = [
        asyncio.run(run_stream(deltas, rate=1000.0, history=history, panels=panels))
        for _ in range(args.repeat)
    ]

    def med(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    base = med(once, "cpu")
    print(f"render once          cpu {base:6.2f} s   max stall {med(once, 'stall') * 1000:6.0f} ms")
    print(
        f"stream, unpaced      cpu {med(fast, 'cpu'):6.2f} s   ratio {med(fast, 'cpu') / base:4.2f}x   "
        f"max stall {med(fast, 'stall') * 1000:6.0f} ms   wall {med(fast, 'wall'):5.2f} s"
    )
    print(
        f"stream, 1,000/s      cpu {med(paced, 'cpu'):6.2f} s   ratio {med(paced, 'cpu') / base:4.2f}x   "
        f"max stall {med(paced, 'stall') * 1000:6.0f} ms   wall {med(paced, 'wall'):5.2f} s   "
        f"last delta on screen after {med(paced, 'latency') * 1000:4.0f} ms"
    )
    driver = asyncio.run(run_driver_only(len(deltas), 1000.0))
    print(f"(of which the pacing loop and stall monitor alone, without the app: cpu {driver:.2f} s)")
    print("goals: ratio <= 2.5x, stall < 100 ms, last delta on screen <= 250 ms")
    if args.turns:
        samples = asyncio.run(run_turns(args.turns))
        print("memory over turns (traced MB): " + ", ".join(f"{n}: {mb:.1f}" for n, mb in samples))


if __name__ == "__main__":
    main()
