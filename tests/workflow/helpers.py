from __future__ import annotations

from collections import Counter

from tui_assist.core.events import NodeFinished, NodeStarted, TurnEvent


def started(events: list[TurnEvent]) -> list[NodeStarted]:
    return [e for e in events if isinstance(e, NodeStarted)]


def finished(events: list[TurnEvent]) -> dict[str, NodeFinished]:
    return {e.node_id: e for e in events if isinstance(e, NodeFinished)}


def status_by_label(events: list[TurnEvent]) -> dict[str, str]:
    """Each node's label → its final status (labels are unique in these tests)."""
    ends = finished(events)
    return {s.label: ends[s.node_id].status for s in started(events)}


def assert_balanced(events: list[TurnEvent]) -> None:
    """Every started node finished exactly once, after it started, and nothing else finished."""
    starts = [e.node_id for e in events if isinstance(e, NodeStarted)]
    ends = Counter(e.node_id for e in events if isinstance(e, NodeFinished))
    assert len(starts) == len(set(starts))
    assert set(ends) == set(starts)
    assert all(n == 1 for n in ends.values())
    order = {id(e): i for i, e in enumerate(events)}
    first = {e.node_id: order[id(e)] for e in events if isinstance(e, NodeStarted)}
    for e in events:
        if isinstance(e, NodeFinished):
            assert order[id(e)] > first[e.node_id]
