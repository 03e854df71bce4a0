"""The flow panel's elapsed-time tick redraws its rows without laying out the screen."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui_assist.core.events import NodeStarted
from tui_assist.core.tree import NodeLog
from tui_assist.ui.widgets.flow_panel import FlowPanel


class _Host(App[None]):
    def __init__(self, log: NodeLog) -> None:
        super().__init__()
        self.node_log = log

    def compose(self) -> ComposeResult:
        yield FlowPanel(self.node_log)


async def test_a_tick_lays_out_only_when_the_rows_changed() -> None:
    log = NodeLog()
    log.apply(NodeStarted(node_id="t1", parent_id=None, node_kind="turn", label="turn"))
    app = _Host(log)
    async with app.run_test(size=(60, 12)) as pilot:
        flow = app.query_one(FlowPanel)
        flow.show_turn("t1")
        await pilot.pause()
        layouts: list[object] = []
        app.screen.screen_layout_refresh_signal.subscribe(app.screen, layouts.append)
        flow.tick()  # the same rows, a later time: a repaint
        await pilot.pause()
        assert layouts == []
        log.apply(NodeStarted(node_id="r1", parent_id="t1", node_kind="round", label="round"))
        flow.tick()  # a row more: laid out (the panel may grow)
        await pilot.pause()
        assert len(layouts) == 1
        assert [flow.name_of(row) for row in flow._rows] == ["Refine turn", "round"]  # drawn
