"""No SDK stream is left half-read: every async generator of its chain (events, SSE, httpx,
httpcore) has finished when a call returns, fails or is cancelled. Left suspended, they are closed
all at once by the event loop's shutdown, where they collide ("async generator already
executing", reported by pytest as `PytestUnraisableExceptionWarning`). The real SDKs against the
loopback fakes."""

from __future__ import annotations

import asyncio
import gc
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.fakes import anthropic as fa
from tests.fakes import openai as fo
from tests.providers.test_anthropic import RecordingSink
from tui_assist.core.conversation import Message
from tui_assist.core.model import ModelRequest, Provider
from tui_assist.providers.anthropic import AnthropicProvider
from tui_assist.providers.openai_compat import OpenAICompatProvider

REQUEST = ModelRequest(system="s", messages=[Message.user("hi")], tools=())


async def suspended(loop_turns: int = 0) -> list[str]:
    """The async generators alive and not finished (a finished one has no frame)."""
    for _ in range(loop_turns):
        await asyncio.sleep(0)
    gc.collect()
    return sorted(
        o.ag_code.co_qualname
        for o in gc.get_objects()
        if isinstance(o, types.AsyncGeneratorType) and o.ag_frame
    )


@pytest.fixture(params=["anthropic", "openai"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any, Callable[[Any], Provider]]]:
    """A fake and its module (for `Reply`), and how to make a provider for it."""
    if request.param == "anthropic":
        with fa.FakeAnthropic() as fake:
            yield fake, fa, lambda f: AnthropicProvider(api_key="k", base_url=f.base_url, stream_backoff=0.01)
    else:
        with fo.FakeOpenAI() as fake:
            yield fake, fo, lambda f: OpenAICompatProvider("m", base_url=f.base_url, stream_backoff=0.01)


async def test_a_finished_call_leaves_no_generator_suspended(server: Any) -> None:
    fake, module, make = server
    provider = make(fake)
    before = await suspended()
    fake.add(module.Reply("Hello there"), module.Reply("Hello world", cut_after=3), module.Reply("again"))
    assert (await provider.complete(REQUEST, RecordingSink())).message.text == "Hello there"
    assert (await provider.complete(REQUEST, RecordingSink())).message.text == "again"  # after a retry
    # The Anthropic stream is read to its end, so its generators are done when the call returns.
    # The openai SDK itself stops reading at `[DONE]` and leaves its inner generators to the
    # loop's finalizer hook, which closes them one after another within a few loop turns.
    assert await suspended(loop_turns=0 if module is fa else 50) == before
    await provider.aclose()


async def test_a_cancelled_call_leaves_no_generator_suspended(server: Any) -> None:
    fake, module, make = server
    provider = make(fake)
    before = await suspended()
    held = module.Reply("Hello world, again", hold_after=3)
    fake.add(held)
    sink = RecordingSink()
    task = asyncio.create_task(provider.complete(REQUEST, sink))
    assert await asyncio.to_thread(held.held.wait, 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    held.release()
    assert await suspended() == before
    await provider.aclose()
