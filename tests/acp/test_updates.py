"""The fold of core events into ACP updates, and ACP prompt blocks into a prompt (no process)."""

from __future__ import annotations

import base64
from pathlib import Path

from acp import helpers
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    FileEditToolCallContent,
    ToolCallStart,
)

from tests.session.test_images import png_bytes
from tui_assist.acp.agent import prompt_text
from tui_assist.acp.updates import TurnUpdates
from tui_assist.core.events import (
    NodeStarted,
    StreamRetried,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from tui_assist.session.mentions.image_fit import MAX_IMAGE_BYTES


def test_a_subagents_text_stays_out_of_the_answer_and_a_new_file_is_a_diff_from_nothing(
    tmp_path: Path,
) -> None:
    fold = TurnUpdates(tmp_path)
    events = [
        NodeStarted(node_id="t", parent_id=None, node_kind="turn", label="turn"),
        NodeStarted(node_id="a", parent_id="t", node_kind="agent", label="agent"),
        TextDelta(node_id="a", text="half an "),
        StreamRetried(node_id="a", attempt=1, error="overloaded"),
        TextDelta(node_id="a", text="answer"),
        ToolCallStarted(
            node_id="c", parent_id="a", call_id="u1", name="agent", input={"description": "look"}
        ),
        NodeStarted(node_id="s", parent_id="c", node_kind="agent", label="sub-agent"),
        TextDelta(node_id="s", text="the sub-agent's own words"),
        ToolCallFinished(node_id="c", call_id="u1", name="agent", output="found it"),
    ]
    updates = [u for event in events for u in fold.updates(event)]
    said = [u.content.text for u in updates if isinstance(u, AgentMessageChunk)]
    assert said[0] == "half an " and "starting over" in said[1] and said[2:] == ["answer"]
    start = next(u for u in updates if isinstance(u, ToolCallStart))
    assert start.kind == "think"

    create = {"command": "create", "path": "new.txt", "file_text": "hi\n"}
    started = fold.updates(
        ToolCallStarted(
            node_id="e", parent_id="a", call_id="u2", name="str_replace_based_edit_tool", input=create
        )
    )
    (tmp_path / "new.txt").write_text("hi\n")
    finished = fold.updates(
        ToolCallFinished(node_id="e", call_id="u2", name="str_replace_based_edit_tool", output="File created")
    )
    for update in (started[0], finished[0]):
        diff = update.content[0]
        assert isinstance(diff, FileEditToolCallContent)
        assert (diff.path, diff.old_text, diff.new_text) == (str(tmp_path / "new.txt"), None, "hi\n")


def test_thinking_is_a_thought(tmp_path: Path) -> None:
    fold = TurnUpdates(tmp_path)
    fold.updates(NodeStarted(node_id="a", parent_id=None, node_kind="agent", label="agent"))
    [thought] = fold.updates(ThinkingDelta(node_id="a", text="pondering"))
    assert isinstance(thought, AgentThoughtChunk) and thought.content.text == "pondering"


PIXEL = base64.b64encode(png_bytes()).decode("ascii")


def test_prompt_blocks_attach_resources_as_mentions_and_documents(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    blocks = [
        helpers.text_block("explain"),
        helpers.resource_link_block("app.py", (tmp_path / "src" / "app.py").as_uri()),
        helpers.text_block("and this buffer"),
        helpers.resource_block(helpers.embedded_text_resource((tmp_path / "draft.md").as_uri(), "# Draft\n")),
        helpers.image_block(PIXEL, "image/png"),
        helpers.image_block("aGk=", "image/png"),  # "hi": not an image
    ]
    text, images = prompt_text(blocks, tmp_path)
    assert text.startswith('<attached-documents>\n<document source="draft.md">\n# Draft\n</document>')
    assert "explain @src/app.py and this buffer" in text
    assert text.endswith("[an image that could not be read was left out]")
    assert [(i.media_type, i.data) for i in images] == [("image/png", PIXEL)]
    _, refused = prompt_text([helpers.image_block("aGk=", "image/tiff")], tmp_path)
    assert refused == []


def test_an_editor_image_over_the_api_limits_is_resized(tmp_path: Path) -> None:
    from tests.session.test_images import noise_png

    big = base64.b64encode(noise_png(1500, 1400)).decode("ascii")  # 6.3 MB
    _, [image] = prompt_text([helpers.image_block(big, "image/png")], tmp_path)
    assert len(base64.b64decode(image.data)) <= MAX_IMAGE_BYTES
    assert image.media_type in ("image/png", "image/jpeg")


def test_a_todo_write_call_is_sent_as_the_plan(tmp_path: Path) -> None:
    fold = TurnUpdates(tmp_path)
    todos = [
        {"content": "Run the tests", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    ]
    updates = fold.updates(
        ToolCallStarted(node_id="p", parent_id="a", call_id="u3", name="todo_write", input={"todos": todos})
    )
    start, plan = updates
    assert isinstance(start, ToolCallStart) and isinstance(plan, AgentPlanUpdate)
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Run the tests", "completed"),
        ("Fixing the bug", "in_progress"),
    ]
