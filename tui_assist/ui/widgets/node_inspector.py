"""A small inspector: the inputs and outputs of the node selected in the flow panel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from tui_assist.core.text import clip

if TYPE_CHECKING:
    from tui_assist.core.tree import NodeRecord

_CLIP = 600


def _clip(text: str) -> str:
    return clip(text.strip(), _CLIP, fold=False)


class NodeInspector(Static):
    """What one node was given and what it produced; hidden until a node is shown."""

    DEFAULT_CSS = """
    NodeInspector {
        height: auto;
        max-height: 12;
        padding: 0 1;
        background: $surface;
        border-top: hkey $panel;
        overflow-y: auto;
    }
    NodeInspector.-empty { display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, classes="-empty")
        self.node_id: str | None = None

    def show(self, record: NodeRecord | None, name: str | None = None) -> None:
        """Show `record` (None hides the inspector), called `name` (default: its label)."""
        self.node_id = record.node_id if record is not None else None
        self.set_class(record is None, "-empty")
        if record is None:
            self.update("")
            return
        self.update(inspector_content(record, name))


def inspector_content(record: NodeRecord, name: str | None = None) -> Content:
    """The inspector's text for one node, called `name` (default: its label)."""
    import json  # (here: the hidden inspector of the first frame needs none of these)

    from tui_assist.core.tooling import keep_diagnostic_lines

    muted = "$foreground 55%"
    head: list[Content | tuple[str, str] | str] = [
        (f"{record.kind} ", muted),
        (name or record.label, "bold"),
        (f"  {record.status}", muted),
    ]
    if record.outcome:
        head.append((f" · {record.outcome}", muted))
    parts: list[Content | tuple[str, str] | str] = [*head]
    given = record.detail
    if record.tool_input is not None:
        given = json.dumps(record.tool_input, ensure_ascii=False)
    if given:
        parts += [("\ninput  ", muted), _clip(given)]
    produced = record.output or record.text
    if produced:
        parts += [("\noutput ", muted), keep_diagnostic_lines(_clip(produced), produced)]
    if record.feedback:
        parts += [("\nfeedback ", muted), _clip(record.feedback)]
    if record.error:
        parts += [("\nerror  ", "$error"), _clip(record.error)]
    return Content.assemble(*parts)
