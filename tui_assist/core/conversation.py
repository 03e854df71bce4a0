"""Domain messages, independent of any provider SDK.

The shapes follow the Messages API's content blocks (text, tool_use, tool_result, thinking,
image) because that is the richest common ground between providers; adapters translate to and
from their wire types (and drop what their API has no form for, such as thinking).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Plain text in a message."""

    text: str
    citations: tuple[dict[str, Any], ...] = ()
    """The sources this text cites, as the API sent them (a web search's carry an
    `encrypted_index` the API wants back unchanged); `core/server_tools.py` reads them."""
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    """A tool call the model proposed."""

    id: str
    name: str
    input: dict[str, Any]
    type: Literal["tool_use"] = "tool_use"


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """The runtime's answer to one tool call."""

    tool_use_id: str
    content: str
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"


SERVER_TOOL_BLOCK_TYPES = ("server_tool_use", "web_search_tool_result")
"""The API's block types of tools it runs itself (the web search): call and result."""


@dataclass(frozen=True, slots=True)
class ServerToolBlock:
    """A call or result of a tool the provider ran itself (the API's web search).

    Kept verbatim, in the API's own shape, because continuing the conversation needs the blocks
    back as they came (the results' `encrypted_content` included); the runtime runs nothing for it.
    """

    data: dict[str, Any]
    """The API's block: `type` is one of `SERVER_TOOL_BLOCK_TYPES`."""
    type: Literal["server_tool"] = "server_tool"


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """The model's extended thinking, kept verbatim: the API checks `signature` when it comes back."""

    thinking: str
    signature: str
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class RedactedThinkingBlock:
    """Thinking the API encrypted (`data` is opaque); it must come back unchanged like a thinking block."""

    data: str
    type: Literal["redacted_thinking"] = "redacted_thinking"


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image the user attached: base64 `data` of type `media_type` (`image/png`, ...)."""

    media_type: str
    data: str
    name: str = ""
    """The file name it came from, for the prompt's chip (never sent to a model)."""
    type: Literal["image"] = "image"


Block = (
    TextBlock
    | ToolUseBlock
    | ToolResultBlock
    | ServerToolBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ImageBlock
)

THINKING_TYPES = (ThinkingBlock, RedactedThinkingBlock)
"""The blocks that hold thinking, for `isinstance` checks."""


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation."""

    role: Role
    content: tuple[Block, ...]

    @classmethod
    def user(cls, text: str, images: Sequence[ImageBlock] = ()) -> Message:
        """A user message holding the images (if any), then one text block."""
        return cls("user", (*images, TextBlock(text)))

    @classmethod
    def assistant(cls, text: str) -> Message:
        """An assistant message holding one text block."""
        return cls("assistant", (TextBlock(text),))

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def thinking(self) -> str:
        """The concatenated thinking blocks (redacted ones have no readable text)."""
        return "".join(b.thinking for b in self.content if isinstance(b, ThinkingBlock))

    @property
    def images(self) -> list[ImageBlock]:
        """The images attached to this message, in order."""
        return [b for b in self.content if isinstance(b, ImageBlock)]

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls in this message, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict in the Messages API shape."""
        blocks: list[dict[str, Any]] = []
        for b in self.content:
            match b:
                case TextBlock(text=text, citations=citations):
                    text_block: dict[str, Any] = {"type": "text", "text": text}
                    if citations:
                        text_block["citations"] = list(citations)
                    blocks.append(text_block)
                case ToolUseBlock(id=id_, name=name, input=input_):
                    blocks.append({"type": "tool_use", "id": id_, "name": name, "input": input_})
                case ServerToolBlock(data=data):
                    blocks.append(dict(data))
                case ToolResultBlock(tool_use_id=tid, content=content, is_error=is_error):
                    blocks.append(
                        {"type": "tool_result", "tool_use_id": tid, "content": content, "is_error": is_error}
                    )
                case ThinkingBlock(thinking=thinking, signature=signature):
                    blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
                case RedactedThinkingBlock(data=data):
                    blocks.append({"type": "redacted_thinking", "data": data})
                case ImageBlock(media_type=media_type, data=data, name=name):
                    source = {"type": "base64", "media_type": media_type, "data": data}
                    blocks.append({"type": "image", "source": source, "name": name})
        return {"role": self.role, "content": blocks}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        """Parse the shape `to_dict` writes (a string content becomes one text block).

        Raises:
            ValueError: on an unknown block type or role.
        """
        role = data.get("role")
        if role not in ("user", "assistant"):
            raise ValueError(f"unknown role: {role!r}")
        raw = data.get("content", [])
        if isinstance(raw, str):
            return cls(role, (TextBlock(raw),))
        return cls(role, tuple(block_from_dict(b) for b in raw))


def block_from_dict(b: dict[str, Any]) -> Block:
    """Parse one content block in the Messages API shape.

    Raises:
        ValueError: on an unknown block type.
    """
    match b.get("type"):
        case "text":
            raw_citations: object = b.get("citations") or []
            citations = (
                tuple(
                    cast(dict[str, Any], c) for c in cast(list[object], raw_citations) if isinstance(c, dict)
                )
                if isinstance(raw_citations, list)
                else ()
            )
            return TextBlock(str(b.get("text", "")), citations)
        case str(kind) if kind in SERVER_TOOL_BLOCK_TYPES:
            return ServerToolBlock(dict(b))
        case "tool_use":
            return ToolUseBlock(str(b["id"]), str(b["name"]), dict(b.get("input") or {}))
        case "tool_result":
            content: Any = b.get("content", "")
            if isinstance(content, list):
                parts = [cast(dict[str, Any], c) for c in cast(list[Any], content) if isinstance(c, dict)]
                content = "".join(str(part.get("text", "")) for part in parts)
            return ToolResultBlock(str(b["tool_use_id"]), str(content), bool(b.get("is_error", False)))
        case "thinking":
            return ThinkingBlock(str(b.get("thinking", "")), str(b.get("signature", "")))
        case "redacted_thinking":
            return RedactedThinkingBlock(str(b.get("data", "")))
        case "image":
            source = cast(dict[str, Any], b.get("source") or {})
            return ImageBlock(
                str(source.get("media_type", "")), str(source.get("data", "")), str(b.get("name", ""))
            )
        case other:
            raise ValueError(f"unknown content block type: {other!r}")


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one or more model calls. `input_tokens` excludes cached tokens."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        """The four counts under the API's names, as `--json`, the store and the audit print them."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }

    @property
    def total_input_tokens(self) -> int:
        """Every input token, cached or not."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def total_tokens(self) -> int:
        """Input (all kinds) plus output: what a token budget counts."""
        return self.total_input_tokens + self.output_tokens


@dataclass(slots=True)
class Conversation:
    """The history a strategy sends to the model: only what later turns may see."""

    id: str = ""
    messages: list[Message] = field(default_factory=lambda: list[Message]())
