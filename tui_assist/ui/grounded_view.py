"""A grounded run as the conversation pane shows it."""

from __future__ import annotations

from typing import Any


def grounded_markdown(state: Any, *, approvable: bool) -> str:
    """A grounded run for the conversation pane: the answer with its citations, or why it stopped."""
    from tui_assist.flows.grounded import Passage, format_run

    head = f"**grounded** · `{state.outcome}` · run `{state.run_id[:8]}`\n\n"
    sources = [
        f"- `[{s.chunk_id}]` {s.title}{' › ' + s.heading if s.heading else ''}"
        if isinstance(s, Passage)
        else f"- `[{s.id}]` `{s.query}`"
        for s in state.cited_sources()
    ]
    cited = "\n\n**Sources**\n\n" + "\n".join(sources) if sources else ""
    match state.outcome:
        case "answered" | "unverified":
            note = f"\n\n*unverified:* {state.note}" if state.outcome == "unverified" else ""
            return head + state.answer + cited + note
        case "awaiting_approval":
            how = (
                "Press **f8** (or *flow: approve held run* in the palette) to approve it."
                if approvable
                else f"Approve it with `tui-assist flow approve {state.run_id}`."
            )
            reasons = ", ".join(state.approval_reasons)
            return f"{head}**Held for approval** ({reasons}); nothing was sent. {how}\n\n{state.draft}{cited}"
        case _:
            return head + format_run(state)
