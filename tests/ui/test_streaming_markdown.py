from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.pilot import Pilot

from tests.ui.helpers import settled, wait_until
from tui_assist.core.events import NodeFinished, NodeStarted, TextDelta
from tui_assist.ui.widgets import markdown_render, stream_gc, streaming_markdown
from tui_assist.ui.widgets.conversation import Conversation
from tui_assist.ui.widgets.streaming_markdown import StreamingMarkdown
from tui_assist.ui.widgets.turn_parts import AnswerText

DOC = """# Title

First paragraph with **bold** text.

- one
- two

  continued item text

```python
def f():

    return 1
```

Last paragraph.
"""


class _Clock:
    """The widget's `time`: it stands still until a test moves it."""

    now = 100.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    clock = _Clock()
    monkeypatch.setattr(streaming_markdown, "time", clock)
    return clock


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield StreamingMarkdown(id="md")


def _lines(widget: StreamingMarkdown) -> list[str]:
    """The widget's lines of text (below the unseen gap it may keep above them while it streams)."""
    top = widget.text_top
    return [widget.render_line(top + y).text.rstrip() for y in range(widget.line_count)]


async def test_streamed_text_ends_up_the_same_as_text_given_at_once() -> None:
    app = _Host()
    async with app.run_test(size=(60, 40)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        for char in DOC:
            widget.append(char)
        widget.finish()
        await pilot.pause()
        streamed = _lines(widget)
        assert widget.source == DOC
        once = StreamingMarkdown(DOC, finished=True)
        await app.query_one(VerticalScroll).mount(once)
        await pilot.pause()
        assert _lines(once) == streamed
        text = "\n".join(streamed)
        assert "Title" in text and "def f():" in text and "return 1" in text


async def test_code_fences_and_indented_continuations_are_never_split() -> None:
    app = _Host()
    async with app.run_test(size=(60, 40)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        widget.append(DOC)
        widget.flush()
        await pilot.pause()
        chunks = widget._chunks
        fence = next(c for c in chunks if "```python" in c)
        assert "return 1" in fence and fence.count("```") == 2
        item = next(c for c in chunks if "- one" in c)
        assert "continued item text" in item


async def test_deltas_are_merged_before_they_are_drawn() -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        flushes = 0
        original = widget._flush

        def counting(final: bool = False, *, paced: bool = False) -> None:
            nonlocal flushes
            flushes += 1
            original(final, paced=paced)

        widget._flush = counting  # type: ignore[method-assign]
        for _ in range(200):
            widget.append("word ")
        await wait_until(pilot, lambda: flushes and widget._timer is None and widget._held is None)
        assert 1 <= flushes <= 3
        assert "word word" in _lines(widget)[0]


async def test_a_huge_append_is_drawn_over_several_frames(monkeypatch) -> None:
    monkeypatch.setattr(streaming_markdown, "FRAME_BUDGET", 200)
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        widget.append("\n\n".join(f"Paragraph {i} of the answer." for i in range(100)))
        widget.flush()
        assert widget._pending
        await wait_until(pilot, lambda: not widget._pending)
        assert "Paragraph 99 of the answer." in "\n".join(_lines(widget))


async def test_reset_discards_a_broken_stream() -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        widget.append("half an ans")
        widget.flush()
        await pilot.pause()
        assert widget.size.height == 1
        widget.reset()
        await pilot.pause()
        assert widget.line_count == 0 and widget.source == "" and widget.size.height == 0
        widget.append("The whole answer.")
        widget.finish()
        await pilot.pause()
        assert widget.source == "The whole answer."
        assert _lines(widget) == ["The whole answer."]


async def test_only_a_few_rendered_chunks_are_kept() -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        body = "lorem ipsum dolor sit amet " * 20
        widget.append("\n\n".join(f"## Part {i}\n\n{body}" for i in range(60)) + "\n")
        widget.finish()
        await wait_until(pilot, lambda: not widget._pending and widget._timer is None)
        assert len(widget._chunks) > streaming_markdown.CACHED_CHUNKS
        assert len(widget._cache) <= streaming_markdown.CACHED_CHUNKS
        # Scrolling back renders an evicted chunk again, identically.
        first = _lines(widget)[:3]
        assert "Part 0" in first[0]


LONG_DOC = "\n\n".join(
    [f"## Part {i}\n\nParagraph {i} says something about part {i}, at some length." for i in range(12)]
    + ["```python\ndef g():\n\n    return 2\n```", "- a\n- b\n\n  more of b", "The end."]
)


async def test_finished_blocks_are_committed_and_rendered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: list[str] = []
    original = markdown_render.MarkdownRenderer.render

    def recording(self: Any, text: str, width: int) -> Any:
        rendered.append(text)
        return original(self, text, width)

    monkeypatch.setattr(markdown_render.MarkdownRenderer, "render", recording)
    monkeypatch.setattr(streaming_markdown, "CHUNK_TARGET", 1)  # one chunk per block
    monkeypatch.setattr(streaming_markdown, "CACHED_CHUNKS", 100)  # (evicted chunks render again)
    app = _Host()
    async with app.run_test(size=(60, 100)) as pilot:  # no scrollbar: the width never changes
        widget = app.query_one(StreamingMarkdown)
        await pilot.pause()
        for start in range(0, len(LONG_DOC), 37):
            widget.append(LONG_DOC[start : start + 37])
            widget.flush()  # a frame, without waiting for one
            committed = "".join(widget._chunks)
            # Only whole blocks are committed; the tail holds the rest, nothing is lost.
            assert committed + widget._tail == LONG_DOC[: start + 37]
            assert committed == "" or committed.endswith("\n\n")
        assert not widget.finished and widget._tail
        widget.finish()
        await pilot.pause()
        assert widget.finished and widget._tail == "" and not widget._pending
        assert widget.source == LONG_DOC
        # Each committed block was rendered exactly once; later frames only re-rendered the tail.
        for chunk in widget._chunks:
            assert rendered.count(chunk) == 1, chunk
        assert len(widget._chunks) > 12
        text = "\n".join(_lines(widget))
        assert "Part 0" in text and "return 2" in text and "The end." in text


def _timer_delays(widget: StreamingMarkdown) -> list[float]:
    """The delays of the timers `widget` sets from now on, as it sets them."""
    delays: list[float] = []
    original = widget.set_timer

    def recording(delay: float, *args: Any, **kwargs: Any) -> Any:
        delays.append(delay)
        return original(delay, *args, **kwargs)

    widget.set_timer = recording  # type: ignore[method-assign]
    return delays


async def test_while_streaming_deltas_are_merged_over_the_stream_interval(clock: _Clock) -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        delays = _timer_delays(widget)
        # The first delta after a pause is drawn on the next frame...
        widget.append("first ")
        assert delays == [streaming_markdown.FRAME_INTERVAL]
        widget.flush()
        # ...later ones wait until STREAM_INTERVAL has passed since the last drawn text.
        clock.now += streaming_markdown.STREAM_INTERVAL / 4
        widget.append("second ")
        # (starting LAYOUT_LEAD early: a repaint waits for its due time, a layout does not)
        due = streaming_markdown.STREAM_INTERVAL * 3 / 4
        assert delays[-1] == pytest.approx(
            max(streaming_markdown.FRAME_INTERVAL, due - streaming_markdown.LAYOUT_LEAD)
        )
        widget.append("third ")
        assert len(delays) == 2  # one timer for the whole window
        widget.flush()
        clock.now += 10
        widget.append("after a pause")
        assert delays[-1] == streaming_markdown.FRAME_INTERVAL
        widget.finish()
        await pilot.pause()
        assert _lines(widget) == ["first second third after a pause"]


async def test_a_flush_its_timer_ran_early_keeps_the_stream_interval(clock: _Clock) -> None:
    """A paced flush starts `LAYOUT_LEAD` before it is due, and a timer can fire a little earlier
    still: the next flush is due `STREAM_INTERVAL` after this one was due, not after it ran (from
    then, the pace drifted to a flush every `STREAM_INTERVAL - LAYOUT_LEAD`)."""
    app = _Host()
    async with app.run_test(size=(60, 20)):
        widget = app.query_one(StreamingMarkdown)
        delays = _timer_delays(widget)
        widget.append("first ")
        widget.flush()
        due = clock.now + streaming_markdown.STREAM_INTERVAL
        clock.now += 0.005
        widget.append("second ")
        clock.now = due - streaming_markdown.LAYOUT_LEAD - 0.0005  # its timer fired (a bit early)
        widget._on_frame()
        clock.now += 0.005
        widget.append("third ")
        next_due = due + streaming_markdown.STREAM_INTERVAL
        assert delays[-1] == pytest.approx(next_due - streaming_markdown.LAYOUT_LEAD - clock.now)


async def test_a_fast_stream_is_drawn_at_the_stream_interval_and_ends_with_all_its_text() -> None:
    """Deltas every few milliseconds are merged into one flush per `STREAM_INTERVAL` (each is a
    frame and a parse of the tail), and finishing draws every word of the last, unflushed ones."""
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        flushes: list[float] = []
        render_tail = widget._render_tail

        def counted() -> None:
            flushes.append(asyncio.get_running_loop().time())
            render_tail()

        widget._render_tail = counted  # type: ignore[method-assign]
        words = [f"w{n} " for n in range(120)]
        loop = asyncio.get_running_loop()
        started = loop.time()
        for word in words:  # a model's pace: a delta every 5 ms, for about 0.6 s
            widget.append(word)
            await asyncio.sleep(0.005)
        streamed_for = loop.time() - started
        drawn_while_streaming = len(flushes)
        widget.finish()
        await pilot.pause()
        assert 1 <= drawn_while_streaming <= streamed_for / streaming_markdown.STREAM_INTERVAL + 2
        assert widget.source == "".join(words)
        assert " ".join(_lines(widget)).split() == [word.strip() for word in words]


async def test_a_flush_repaints_only_what_changed() -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        widget.append("# Title\n\nA first paragraph.\n\nThe streaming")
        widget.flush()
        await pilot.pause()
        calls: list[tuple[tuple[Region, ...], bool]] = []
        original = widget.refresh

        def recording(*regions: Region, layout: bool = False, **kwargs: Any) -> Any:
            calls.append((regions, layout))
            return original(*regions, layout=layout, **kwargs)

        widget.refresh = recording  # type: ignore[method-assign]
        widget.flush()
        assert calls == []  # nothing queued: nothing to repaint
        last = widget.line_count - 1
        widget.append(" line grows")
        widget.flush()
        assert calls == [((Region(0, last, widget._width, 1),), False)]  # just the tail's last line
        widget.append(" and grows " + "long " * 20)
        widget.flush()
        assert calls[-1] == ((), True)  # taller: a layout
        assert _lines(widget)[last].startswith("The streaming line grows and grows")


async def test_finishing_or_cancelling_a_turn_draws_the_queued_text_at_once() -> None:
    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield Conversation()

    for how in ("finished", "cancelled"):
        app = Host()
        async with app.run_test(size=(60, 20)) as pilot:
            conversation = app.query_one(Conversation)
            view = conversation.begin_turn("question", "agent")
            conversation.apply(NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"))
            conversation.apply(NodeStarted(node_id="a", parent_id="t", node_kind="agent", label="agent"))
            await pilot.pause()
            for word in ("Some ", "streamed ", "text, ", "then the last words."):
                conversation.apply(TextDelta(node_id="a", text=word))
            answer = app.query_one(AnswerText)
            assert answer._pending  # queued for the next flush...
            if how == "finished":
                conversation.apply(NodeFinished(node_id="a", output="x"))
            else:
                view.mark_cancelled()
            # ...but the end of the turn draws it straight away and makes it static.
            assert answer.finished and not answer._pending and answer._timer is None
            assert answer._tail == "" and answer.source == "Some streamed text, then the last words."
            await pilot.pause()
            assert _lines(answer) == ["Some streamed text, then the last words."]


class _Chat(App[None]):
    def compose(self) -> ComposeResult:
        yield Conversation()


async def _start_answer(app: _Chat, pilot: Pilot[None]) -> Conversation:
    """The chat's conversation, with a turn whose agent is about to answer (its view mounted)."""
    conversation = app.query_one(Conversation)
    conversation.begin_turn("question", "agent")
    conversation.apply(NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"))
    conversation.apply(NodeStarted(node_id="a", parent_id="t", node_kind="agent", label="agent"))
    await pilot.pause()
    return conversation


async def test_the_visible_answer_grows_while_deltas_arrive_and_stays_in_view() -> None:
    app = _Chat()
    async with app.run_test(size=(60, 12)) as pilot:
        conversation = await _start_answer(app, pilot)
        deltas = [f"Line {i} of a long streamed answer.\n\n" for i in range(60)]
        shown: list[int] = []
        for i, delta in enumerate(deltas):
            conversation.apply(TextDelta(node_id="a", text=delta))
            await asyncio.sleep(0.01)  # deltas arrive over time, as from the network
            answer = app.query_one(AnswerText)
            painted = "\n".join(_lines(answer))
            shown.append(painted.count("of a long streamed answer"))
            if i % 10 == 9:
                # Taller than the pane: once drawn, it is scrolled to the newest line.
                await pilot.pause()
                assert conversation.scroll_y == conversation.max_scroll_y
        # The answer was drawn many times on the way, not all at once at the end...
        growths = sum(1 for a, b in zip(shown, shown[1:], strict=False) if b > a)
        assert growths >= 5, shown
        assert shown[len(shown) // 2] > 0
        # ...and before the turn ended, everything but the newest deltas was on screen.
        assert shown[-1] > len(deltas) // 2
        assert conversation.max_scroll_y > 0  # it overflowed the pane: the anchor was exercised


async def test_a_taller_answer_costs_one_layout_of_the_screen_not_two() -> None:
    app = _Chat()
    async with app.run_test(size=(60, 12)) as pilot:
        conversation = await _start_answer(app, pilot)
        for i in range(20):
            conversation.apply(TextDelta(node_id="a", text=f"Paragraph {i}.\n\n"))
        answer = app.query_one(AnswerText)
        answer.flush()
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        layouts: list[object] = []
        app.screen.screen_layout_refresh_signal.subscribe(app.screen, layouts.append)
        frames: list[object] = []
        display = app._display

        def counted(screen: Any, renderable: Any) -> None:
            if renderable is not None:
                frames.append(renderable)
            display(screen, renderable)

        app._display = counted  # type: ignore[method-assign]
        scrollbar = conversation.vertical_scrollbar
        thumbs_drawn: list[tuple[int, float]] = []
        render_lines = scrollbar.render_lines

        def drawn(crop: Region) -> Any:
            thumbs_drawn.append((scrollbar.window_virtual_size, scrollbar.position))
            return render_lines(crop)

        scrollbar.render_lines = drawn  # type: ignore[method-assign]
        height = answer.line_count
        more = "".join(f"More {i}.\n\n" for i in range(30))  # the scrollbar's thumb shrinks
        conversation.apply(TextDelta(node_id="a", text=more + "One more paragraph, the last.\n\n"))
        answer.flush()
        await settled(pilot)  # Textual's own second layout would come a frame later
        assert answer.line_count > height
        assert len(layouts) == 1
        # And one frame: the scrollbar's new thumb is drawn in it, not in a frame of its own.
        assert len(frames) == 1
        assert thumbs_drawn[-1] == (scrollbar.window_virtual_size, scrollbar.position)
        # The one layout showed it: the pane is scrolled to the answer's new last line.
        assert conversation.scroll_y == conversation.max_scroll_y > 0
        assert "One more paragraph" in _lines(answer)[-1]


async def test_a_fast_stream_keeps_room_below_its_text_and_is_laid_out_less_often(clock: _Clock) -> None:
    app = _Chat()
    async with app.run_test(size=(60, 30)) as pilot:
        conversation = await _start_answer(app, pilot)
        layouts: list[object] = []
        app.screen.screen_layout_refresh_signal.subscribe(app.screen, layouts.append)

        async def stream(lines_per_flush: int, flushes: int, start: int) -> None:
            for n in range(flushes):
                text = "".join(f"Line {start + n * lines_per_flush + i}.\n\n" for i in range(lines_per_flush))
                conversation.apply(TextDelta(node_id="a", text=text))
                clock.now += streaming_markdown.STREAM_INTERVAL
                answer.flush()
                await pilot.pause()
                # The text is never cut off: the answer is at least as tall as its lines, and
                # the pane shows its newest one.
                assert answer.size.height >= answer.line_count
                assert conversation.scroll_y == conversation.max_scroll_y
                assert _lines(answer)[-1] == f"Line {start + (n + 1) * lines_per_flush - 1}."

        conversation.apply(TextDelta(node_id="a", text="Start.\n\n"))
        answer = app.query_one(AnswerText)
        answer.flush()
        await pilot.pause()
        # Two lines (a paragraph and its blank line) a second, as a model writes: each growth is
        # laid out as it comes, and no room is kept.
        for n in range(4):
            clock.now += 1
            await stream(1, 1, n)
            assert answer.size.height == answer.line_count
        # 6 lines a flush (180 a second): room is kept, and most flushes fill it without a layout.
        # Those repaint the new lines only (each flush commits the paragraphs before them, and
        # the same lines drawn from a commit are not repainted).
        layouts.clear()
        repainted: list[int] = []
        refresh = answer.refresh

        def recording(*regions: Region, **kwargs: Any) -> Any:
            repainted.extend(region.height for region in regions)
            return refresh(*regions, **kwargs)

        answer.refresh = recording  # type: ignore[method-assign]
        await stream(3, 12, 100)
        assert answer.size.height > answer.line_count
        assert len(layouts) <= 12 // 2
        assert repainted and max(repainted) <= 2 * 3 + 1  # its lines, and the blank line before them
        # The end of the answer gives the room back.
        answer.finish()
        await pilot.pause()
        assert answer.size.height == answer.line_count
        assert conversation.scroll_y == conversation.max_scroll_y


async def test_code_drawn_plain_while_highlighting_is_deferred_is_highlighted_after() -> None:
    code = "Some code:\n\n```python\ndef answer(x: int) -> int:\n    return x + 42\n```\n"

    def styles_of_code_line(widget: StreamingMarkdown) -> set[object]:
        line = next(y for y, text in enumerate(_lines(widget)) if "def answer" in text)
        return {segment.style for segment in widget.render_line(line) if segment.text.strip()}

    app = _Host()
    streaming_markdown.defer_highlighting()
    try:
        async with app.run_test(size=(60, 20)) as pilot:
            widget = app.query_one(StreamingMarkdown)
            widget.append(code)
            widget.finish()
            await pilot.pause()
            assert streaming_markdown.highlighting_deferred()
            plain = _lines(widget)
            assert len(styles_of_code_line(widget)) == 1  # one style: no lexer ran
            streaming_markdown.highlight_deferred()
            await pilot.pause()
            assert not streaming_markdown.highlighting_deferred()
            # The same lines, now in the lexer's colours (keyword, name, types...).
            assert [line.strip() for line in _lines(widget)] == [line.strip() for line in plain]
            assert len(styles_of_code_line(widget)) > 2
    finally:
        streaming_markdown.highlight_deferred()


async def test_full_collections_wait_while_an_answer_streams_and_only_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stream_gc, "RELEASE_DELAY", 0.2)
    thresholds = gc.get_threshold()
    StreamingMarkdown().append("never mounted")  # holds nothing it could not release
    for how in ("finished", "removed"):
        app = _Chat()
        async with app.run_test(size=(60, 12)) as pilot:
            conversation = await _start_answer(app, pilot)
            assert gc.get_threshold() == thresholds
            conversation.apply(TextDelta(node_id="a", text="Streaming "))
            await pilot.pause()  # the answer holds them once mounted (an unmounted one never releases)
            # Young collections go on, less often; the full ones wait for the end of the stream.
            young, middle, full = gc.get_threshold()
            assert young == max(thresholds[0], stream_gc.YOUNG_THRESHOLD)
            assert middle == thresholds[1] and full > 1_000 * thresholds[2]
            if how == "finished":
                conversation.apply(NodeFinished(node_id="a", output="x"))
                await pilot.pause()
                assert gc.get_threshold() == (young, middle, full)  # not with the frames that show the end
                await wait_until(pilot, lambda: gc.get_threshold() == thresholds)  # but after them
            else:
                await app.query_one(AnswerText).remove()
                await pilot.pause()
            assert gc.get_threshold() == thresholds


async def test_a_repaint_can_wait_for_the_next_flush_of_a_streaming_answer() -> None:
    """So it is drawn in that flush's frame (see `with_next_flush`), not just before it."""
    calls: list[str] = []
    assert not streaming_markdown.with_next_flush(lambda: calls.append("now"))  # none streams
    app = _Chat()
    async with app.run_test(size=(60, 12)) as pilot:
        conversation = await _start_answer(app, pilot)
        conversation.apply(TextDelta(node_id="a", text="The answer so far.\n\n"))
        await pilot.pause()
        answer = app.query_one(AnswerText)
        assert not streaming_markdown.with_next_flush(lambda: calls.append("paused"))  # nothing queued
        conversation.apply(TextDelta(node_id="a", text="More "))
        assert streaming_markdown.with_next_flush(lambda: calls.append("with the flush"))
        assert calls == []
        answer.flush()
        assert calls == ["with the flush"]
        conversation.apply(TextDelta(node_id="a", text="and more."))
        assert streaming_markdown.with_next_flush(lambda: calls.append("at the end"))
        answer.finish()  # the end of the stream takes them along, too
        assert calls == ["with the flush", "at the end"]


async def test_a_streaming_answer_collects_the_young_after_each_frame() -> None:
    """Not in the middle of a frame, when the allocation count says (see `_collect_after_frame`)."""
    middle_collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 1:
            middle_collections.append(1)

    app = _Chat()
    async with app.run_test(size=(60, 12)) as pilot:
        conversation = await _start_answer(app, pilot)
        conversation.apply(TextDelta(node_id="a", text="The answer so far.\n\n"))
        await pilot.pause()  # laid out
        gc.callbacks.append(count)
        try:
            for i in range(3):
                conversation.apply(TextDelta(node_id="a", text=f"Line {i} of the answer.\n\n"))
                await wait_until(pilot, lambda: len(middle_collections) > i)  # noqa: B023  (after its frame)
        finally:
            gc.callbacks.remove(count)
    assert len(middle_collections) >= 3


def _painted(widget: StreamingMarkdown) -> list[list[tuple[str, str]]]:
    crop = Region(0, 0, widget.region.width, widget.region.height)  # as the compositor crops it
    return [[(segment.text, str(segment.style)) for segment in strip] for strip in widget.render_lines(crop)]


def _flushed(app: App[None], text: str) -> bool:
    """The streaming answer has drawn `text` and has no flush waiting."""
    answers = list(app.query(AnswerText))
    return (
        bool(answers)
        and all(a._timer is None and a._held is None for a in answers)
        and any(text in "\n".join(_lines(a)) for a in answers)
    )


async def test_lines_kept_while_the_answer_grows_are_the_lines_painted_afresh() -> None:
    app = _Chat()
    async with app.run_test(size=(60, 40)) as pilot:
        conversation = await _start_answer(app, pilot)
        for i in range(12):  # paragraphs, a list and a code block: commits and a growing tail
            conversation.apply(TextDelta(node_id="a", text=f"Paragraph {i} with **bold** words.\n\n"))
            conversation.apply(TextDelta(node_id="a", text=f"- item {i}\n- another\n\n```python\nx = {i}\n"))
            conversation.apply(TextDelta(node_id="a", text="```\n\nThe tail grows"))
            await wait_until(pilot, lambda: _flushed(app, f"x = {i}"))  # noqa: B023
            answer = app.query_one(AnswerText)
            kept = _painted(answer)
            answer.selection_updated(None)  # forgets what was painted: everything is painted again
            assert _painted(answer) == kept
        assert "Paragraph 11" in "\n".join(_lines(app.query_one(AnswerText)))


def test_markdown_parsed_by_the_shared_parser_renders_as_richs_own() -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    text = DOC + "\n| a | b |\n|---|---|\n| 1 | ~~2~~ |\n\n> quoted `code` and *emphasis*\n"
    text += "\n```nosuchlanguage\nplain\tcode\n```\n"  # a language Pygments lacks: plain text

    def rendered(markdown: Markdown) -> str:
        console = Console(width=60, force_terminal=True, color_system="truecolor", record=True)
        console.print(markdown)
        return console.export_text(styles=True)

    ours = rendered(streaming_markdown.parsed_markdown(text, "monokai"))
    assert ours == rendered(Markdown(text, code_theme="monokai", hyperlinks=False))
    assert "Title" in ours and "quoted" in ours


def test_a_frame_asked_for_a_period_after_the_last_is_drawn_at_once() -> None:
    """Not on Textual's grid, which made it wait up to two periods (see `textual_private.FrameTimer`)."""
    from tui_assist.ui.textual_private import frame_wait

    period = 1 / 60
    assert frame_wait(10.0, 10.0 + period, period) == 0
    assert frame_wait(10.0, 10.0 + 2 * period, period) == 0
    assert frame_wait(10.0, 10.0 + period / 4, period) == pytest.approx(period * 3 / 4)
    assert frame_wait(float("-inf"), 0.0, period) == 0


def _top_line(conversation: Conversation, answer: AnswerText) -> int:
    """The answer's line at the pane's top row (negative: a row of the gap above its text)."""
    return conversation.content_region.y - answer.region.y - answer.text_top


async def test_a_long_fast_stream_grows_into_an_unseen_gap_and_the_gap_goes_when_the_pane_scrolls_up(
    clock: _Clock,
) -> None:
    app = _Chat()
    async with app.run_test(size=(60, 20)) as pilot:
        conversation = await _start_answer(app, pilot)
        conversation.apply(TextDelta(node_id="a", text="Start.\n\n"))
        answer = app.query_one(AnswerText)
        answer.flush()
        await pilot.pause()
        layouts: list[object] = []
        app.screen.screen_layout_refresh_signal.subscribe(app.screen, layouts.append)
        gaps: list[int] = []
        for n in range(40):  # 6 lines a flush, 180 a second
            text = "".join(f"Line {n * 3 + i}.\n\n" for i in range(3))
            conversation.apply(TextDelta(node_id="a", text=text))
            clock.now += streaming_markdown.STREAM_INTERVAL
            answer.flush()
            await pilot.pause()
            gaps.append(answer.text_top)
            # The gap is never in view, and the pane shows the newest line.
            assert answer.text_top == 0 or _top_line(conversation, answer) >= 0
            assert conversation.scroll_y == conversation.max_scroll_y
            assert _lines(answer)[-1] == f"Line {n * 3 + 2}."
        # Some 240 lines: the room below the text was renewed some 20 times, laid out only a few.
        assert max(gaps) > 0
        assert len(layouts) <= 6
        # Scrolled up by the user, the gap is dropped, and the view does not move but by the scroll.
        top = _top_line(conversation, answer)
        frames: list[object] = []
        display = app._display

        def counted(screen: Any, renderable: Any) -> None:
            if renderable is not None:
                frames.append(renderable)
            display(screen, renderable)

        app._display = counted  # type: ignore[method-assign]
        conversation.scroll_relative(y=-3, animate=False)
        await settled(pilot)
        assert answer.text_top == 0
        assert _top_line(conversation, answer) == top - 3
        assert len(frames) == 1  # the scroll and the layout without the gap: one frame, no jump
        # The end of the answer gives all the room back.
        answer.finish()
        await settled(pilot)
        assert answer.size.height == answer.line_count


async def test_a_screen_made_taller_than_the_text_drops_the_gap_above_it(clock: _Clock) -> None:
    app = _Chat()
    async with app.run_test(size=(60, 20)) as pilot:
        conversation = await _start_answer(app, pilot)
        for n in range(20):
            text = "".join(f"Line {n * 3 + i}.\n\n" for i in range(3))
            conversation.apply(TextDelta(node_id="a", text=text))
            clock.now += streaming_markdown.STREAM_INTERVAL
            answer = app.query_one(AnswerText)
            answer.flush()
            await pilot.pause()
        assert answer.text_top > 0
        await pilot.resize_terminal(60, 200)  # the pane is taller than the whole answer now
        await settled(pilot)
        assert answer.text_top == 0
        assert answer.size.height >= answer.line_count
        assert _lines(answer)[-1] == "Line 59."


async def test_text_mounted_with_its_first_words_is_laid_out_once() -> None:
    """Its parent lays it out as it mounts (`AwaitMount`): a layout of its own was one more."""
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        await settled(pilot)
        layouts: list[object] = []
        app.screen.screen_layout_refresh_signal.subscribe(app.screen, layouts.append)
        widget = StreamingMarkdown("First words of an answer.\n\n")
        await app.query_one(VerticalScroll).mount(widget)
        await settled(pilot)
        assert _lines(widget)[0] == "First words of an answer."
        assert len(layouts) == 1
