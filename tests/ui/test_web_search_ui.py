"""A web search the API ran shows as a tool call in the tree and the pane, with the sources under the answer."""

from __future__ import annotations

from tests.ui.helpers import make_app, screen_text
from tui_assist.core.conversation import ServerToolBlock, TextBlock
from tui_assist.ui.widgets.agent_tree import AgentTree
from tui_assist.ui.widgets.turn_parts import ToolCallView

CITE = {
    "type": "web_search_result_location",
    "url": "https://pears.test/facts",
    "title": "Pear facts",
    "cited_text": "2 euros",
    "encrypted_index": "idx",
}
SEARCHED = [
    ServerToolBlock(
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "pear prices"}}
    ),
    ServerToolBlock(
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srv_1",
            "content": [
                {
                    "type": "web_search_result",
                    "title": "Pear facts",
                    "url": "https://pears.test/facts",
                    "encrypted_content": "e",
                }
            ],
        }
    ),
    TextBlock("Pears cost 2 euros a kilo.", (CITE,)),
]


async def test_search_call_and_sources_are_shown() -> None:
    app = make_app([SEARCHED])
    async with app.run_test(size=(120, 34)) as pilot:
        await app.session.wait_ready()
        await pilot.press(*"pears?", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        tree = app.query_one(AgentTree)
        [search] = [r for r in tree.node_log.nodes.values() if r.kind == "tool"]
        assert (search.tool_name, search.tool_input) == ("web_search", {"query": "pear prices"})
        view = app.query_one(ToolCallView)
        assert "Pear facts — https://pears.test/facts" in view.output
        text = screen_text(app)
        assert "web_search pear prices" in text
        assert "Sources:" in text and "Pear facts" in text
