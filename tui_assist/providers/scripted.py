"""An offline, deterministic provider that replays a script of assistant messages.

The script format is a DESIGN.md contract: a JSON list of assistant messages, each a list of
content blocks in the Messages API shape, one per model request, in order. Tests may also pass
callables that build the reply from the request (like pydantic-ai's `FunctionModel`).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, cast

from tui_assist.core.conversation import (
    Block,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
    block_from_dict,
)
from tui_assist.core.model import ModelRequest, ModelResponse, ProviderError, StreamSink
from tui_assist.core.text import estimate_tokens

ScriptStep = Sequence[Block] | str | Callable[[ModelRequest], "Sequence[Block] | str"]


def load_script(path: Path) -> list[ScriptStep]:
    """Read a script file.

    Raises:
        ProviderError: when the file is missing or not a list of lists of content blocks.
    """
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ProviderError(f"cannot read script {path}: {exc}") from exc
    if not isinstance(data, list):
        raise ProviderError(f"script {path} must be a JSON list of assistant messages")
    steps: list[ScriptStep] = []
    for i, message in enumerate(cast(list[Any], data)):
        if not isinstance(message, list):
            raise ProviderError(f"script {path}: message {i} must be a list of content blocks")
        try:
            steps.append([block_from_dict(b) for b in cast(list[dict[str, Any]], message)])
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise ProviderError(f"script {path}: message {i}: {exc}") from exc
    return steps


class ScriptedProvider:
    """Replays assistant messages in order, streaming their text in small deltas."""

    name = "scripted"

    def __init__(
        self, script: Iterable[ScriptStep], *, model: str = "scripted", delta_chars: int = 16
    ) -> None:
        self.model = model
        self._script: deque[ScriptStep] = deque(script)
        self._delta_chars = delta_chars
        self.requests: list[ModelRequest] = []
        """Every request received, for tests to inspect."""

    @classmethod
    def from_file(cls, path: Path) -> ScriptedProvider:
        """A provider replaying the script file at `path`."""
        return cls(load_script(path))

    @property
    def remaining(self) -> int:
        """Steps not yet replayed."""
        return len(self._script)

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """Reply with the next scripted message.

        Raises:
            ProviderError: when the script is exhausted.
        """
        self.requests.append(request)
        if not self._script:
            raise ProviderError("scripted provider: script exhausted (no reply left for this request)")
        step = self._script.popleft()
        blocks = step(request) if callable(step) else step
        content: tuple[Block, ...] = (TextBlock(blocks),) if isinstance(blocks, str) else tuple(blocks)
        for block in content:
            if isinstance(block, TextBlock):
                for i in range(0, len(block.text), self._delta_chars):
                    sink.text(block.text[i : i + self._delta_chars])
            elif isinstance(block, ThinkingBlock):
                for i in range(0, len(block.thinking), self._delta_chars):
                    sink.thinking(block.thinking[i : i + self._delta_chars])
        prompt_chars = len(request.system) + sum(len(json.dumps(m.to_dict())) for m in request.messages)
        output_chars = sum(len(json.dumps(Message("assistant", (b,)).to_dict())) for b in content)
        stop = "tool_use" if any(isinstance(b, ToolUseBlock) for b in content) else "end_turn"
        return ModelResponse(
            message=Message("assistant", content),
            stop_reason=stop,
            usage=Usage(
                input_tokens=max(1, estimate_tokens(prompt_chars)),
                output_tokens=max(1, estimate_tokens(output_chars)),
            ),
            model=self.model,
        )

    async def aclose(self) -> None:
        """Nothing to release."""
