from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from tui_assist.ui.widgets import streaming_markdown
from tui_assist.ui.widgets.streaming_markdown import StreamingMarkdown

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


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield StreamingMarkdown(id="md")


def _lines(widget: StreamingMarkdown) -> list[str]:
    return [widget.render_line(y).text.rstrip() for y in range(widget.line_count)]


async def test_streamed_text_ends_up_the_same_as_text_given_at_once() -> None:
    app = _Host()
    async with app.run_test(size=(60, 40)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        for char in DOC:
            widget.append(char)
        widget.finish()
        await pilot.pause()
        streamed = _lines(widget)
        assert widget.source.replace("\n", "") == DOC.replace("\n", "")
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


async def test_deltas_are_merged_per_frame() -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        flushes = 0
        original = widget._flush

        def counting(final: bool = False) -> None:
            nonlocal flushes
            flushes += 1
            original(final)

        widget._flush = counting  # type: ignore[method-assign]
        for _ in range(200):
            widget.append("word ")
        await pilot.pause(0.2)
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
        await pilot.pause(1.0)
        assert not widget._pending
        assert "Paragraph 99 of the answer." in "\n".join(_lines(widget))


async def test_reset_discards_a_broken_stream() -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        widget.append("half an ans")
        widget.flush()
        widget.reset()
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
        await pilot.pause(1.0)
        assert len(widget._chunks) > streaming_markdown.CACHED_CHUNKS
        assert len(widget._cache) <= streaming_markdown.CACHED_CHUNKS
        # Scrolling back renders an evicted chunk again, identically.
        first = _lines(widget)[:3]
        assert "Part 0" in first[0]
