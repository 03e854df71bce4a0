"""What the tools a provider runs itself (the API's web search) did, read from a reply's blocks.

The runtime executes nothing for these: the API searched before it answered, and the reply
holds the call (`server_tool_use`), its result (`web_search_tool_result`) and text whose
citations point into the results. The agent loop reports each call as a tool call (a node in the
tree and the transcript, a line of evidence for the critic) and lists the cited sources under the
answer; the blocks themselves stay in the message for the API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from tui_assist.core.conversation import Message, ServerToolBlock, TextBlock

__all__ = ["ServerToolCall", "Source", "cited_sources", "server_tool_calls", "sources_note"]


@dataclass(frozen=True, slots=True)
class Source:
    """A page an answer cites."""

    title: str
    url: str


@dataclass(frozen=True, slots=True)
class ServerToolCall:
    """One call of a server tool, paired with its result."""

    call_id: str
    name: str
    input: dict[str, Any]
    output: str
    """The result as people read it: one `title — url` line per search result, or the error."""
    is_error: bool


def server_tool_calls(message: Message) -> list[ServerToolCall]:
    """The server tool calls of an assistant message, in order, each with its result.

    A call whose result is missing (a paused turn) reports that it has no result.
    """
    calls: list[tuple[str, str, dict[str, Any]]] = []
    results: dict[str, tuple[str, bool]] = {}
    for block in message.content:
        if not isinstance(block, ServerToolBlock):
            continue
        data = block.data
        if data.get("type") == "server_tool_use":
            raw_input: object = data.get("input")
            given = dict(cast(Mapping[str, Any], raw_input)) if isinstance(raw_input, Mapping) else {}
            calls.append((str(data.get("id", "")), str(data.get("name", "server_tool")), given))
        elif "tool_use_id" in data:
            results[str(data["tool_use_id"])] = _result_text(data.get("content"))
    return [
        ServerToolCall(call_id, name, given, *results.get(call_id, ("(no result)", True)))
        for call_id, name, given in calls
    ]


def cited_sources(message: Message) -> list[Source]:
    """The distinct web pages the message's text cites, in first-cited order."""
    seen: dict[str, Source] = {}
    for block in message.content:
        if isinstance(block, TextBlock):
            for citation in block.citations:
                url = citation.get("url")
                if isinstance(url, str) and url and url not in seen:
                    title = citation.get("title")
                    seen[url] = Source(title if isinstance(title, str) and title else url, url)
    return list(seen.values())


def sources_note(sources: list[Source]) -> str:
    """The Markdown listed under an answer: `Sources:` and one link per source (empty for none)."""
    if not sources:
        return ""
    lines = "\n".join(f"- [{_escaped(s.title)}]({s.url})" for s in sources)
    return f"\n\nSources:\n{lines}"


def _result_text(content: object) -> tuple[str, bool]:
    if isinstance(content, list):
        lines: list[str] = []
        for item in cast(list[object], content):
            if isinstance(item, Mapping):
                entry = cast(Mapping[str, Any], item)
                lines.append(f"{entry.get('title') or '(untitled)'} — {entry.get('url', '')}")
        return ("\n".join(lines) or "no results"), False
    if isinstance(content, Mapping):
        code = cast(Mapping[str, Any], content).get("error_code", "error")
        return f"web search failed: {code}", True
    return "(no result)", True


def _escaped(title: str) -> str:
    return title.replace("[", "\\[").replace("]", "\\]")
