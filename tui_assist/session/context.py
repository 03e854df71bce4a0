"""The context keeper: the session's `ContextGuard`, which keeps a conversation inside the model's window.

**Where the check lives.** The agent loop consults the guard before every model request (the
port in `core/context.py`). So the check between turns (the first request of a turn, a resumed
conversation's first send included) and the check inside a long turn (every later request,
refine generators and sub-agents included) are the same code, and core never sees the store. A
request the provider refuses as too long comes back through the guard with `overflow`: it
compacts once more before the loop's single retry. `/compact` calls `compact_history` directly.

**What it does** when a request's estimated input passes `compact_at` of the window, cheapest
first (see `core/compaction.py` for the pieces):

1. cut the tool results of turns older than the last `KEEP_TURNS` to a bounded size;
2. if that is not enough, summarise the older turns in one tool-less model call; the summary
   then stands in for them in every later request, and the latest turns stay verbatim;
3. if the running turn alone is still too big, cut its own older tool results (never the last
   `RECENT_RESULTS`).

Each compaction reports itself as a `compact` node whose output is the notice the pane shows.

**State** (one conversation at a time, `reset` on a switch): the summary (also saved with the
conversation, so a resume does not pay for it again), how far old tool results are cut (sticky,
so the bytes sent stay the same from one request to the next and the prompt cache keeps
hitting), and the last measured request, which the next estimate starts from.

**Estimates.** The input tokens the provider measured for the previous request plus a
4-characters-per-token estimate of what was added, scaled by how far such estimates were off
before. Where the provider counts tokens (`TokenCounter`, Anthropic's `count_tokens`) and a
mostly-estimated figure lands near the limit, the provider's count decides.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from tui_assist.core.budget import SpendCheck, check_spend
from tui_assist.core.compaction import (
    SUMMARY_SYSTEM,
    HistorySummary,
    cut_tool_results,
    is_tool_results,
    message_tokens,
    render_transcript,
    request_tokens,
    summarise,
    summary_messages,
    summary_request,
    turn_starts,
)
from tui_assist.core.context import FittedRequest
from tui_assist.core.conversation import Message, Usage
from tui_assist.core.events import UsageRecorded
from tui_assist.core.model import ContextOverflow, ModelRequest, Provider, ProviderError, TokenCounter
from tui_assist.core.nodes import NodeScope
from tui_assist.core.observer import NodeSink, TurnObserver
from tui_assist.core.text import estimate_tokens, plural, token_count, truncate_middle

log = logging.getLogger(__name__)

KEEP_TURNS: Final = 2
"""Earlier turns an automatic compaction keeps verbatim, besides the running one."""
MANUAL_KEEP_TURNS: Final = 1
"""Turns `/compact` keeps verbatim (the latest)."""
KEEP_SHARE: Final = 0.5
"""The verbatim turns may fill at most this share of the window; else fewer are kept."""
RECENT_RESULTS: Final = 2
"""Tool-result messages of the running turn (the latest) that are never cut."""
COUNT_BAND: Final = (0.85, 1.25)
"""Estimates within this band around the limit are checked with the provider's token counter."""
SUMMARY_INPUT_SHARE: Final = 0.75
"""Share of the window one summariser request's transcript may fill; longer histories go in parts."""

SaveSummary = Callable[[HistorySummary], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """What one compaction did, for the host to show."""

    stage: Literal["trim", "summary"]
    """`trim`: only tool results were cut; `summary`: older turns were summarised."""
    turns: int
    """Earlier turns summarised (`summary`) or whose tool results were cut (`trim`)."""
    tokens_before: int
    """Estimated input tokens of the request before."""
    tokens_after: int
    """Estimated input tokens of the request after."""
    usage: Usage = field(default_factory=Usage)
    """What the summariser calls spent."""

    @property
    def notice(self) -> str:
        """One line for the pane: `compacted 14 earlier turns: 151k → 9k tokens`."""
        if self.stage == "summary":
            what = f"compacted {plural(self.turns, 'earlier turn')}"
        elif self.turns:
            what = f"cut old tool results in {plural(self.turns, 'earlier turn')}"
        else:
            what = "cut older tool results of this turn"
        return f"{what}: {token_count(self.tokens_before)} → {token_count(self.tokens_after)} tokens"


@dataclass(slots=True)
class _Plan:
    """What a compaction will do to the history part of one request."""

    trim_to: int
    """New end of the history whose tool results are cut."""
    trimmed_turns: int
    summary_end: int | None = None
    """Where the turns to summarise end (the kept turns begin); None: no summary."""


BeforeCompact = Callable[[TurnObserver, str, str], Awaitable[None]]
"""`(observer, compact node id, trigger)`: what runs before a compaction (`manual` or `auto`)."""


class ContextKeeper:
    """A `ContextGuard` over one conversation at a time (see the module docstring).

    Args:
        window: The current model's context window in tokens (read at every use: the model may change).
        compact_at: Share of the window past which requests are compacted.
        provider: Makes the summariser calls and, if it can, counts tokens; set before use.
        save: Keeps a new summary with the conversation (errors are the caller's to log).
    """

    def __init__(
        self,
        *,
        window: Callable[[], int],
        compact_at: float = 0.8,
        provider: Provider | None = None,
        save: SaveSummary | None = None,
    ) -> None:
        self.provider = provider
        self.compact_at = compact_at
        self._configured_window = window
        self._save = save
        self._learned: tuple[int, int] | None = None
        """(configured window, what the provider said it really is) after an overflow."""
        self._scale = 1.0
        """Measured tokens per estimated token, from the last measurement."""
        self.compactions = 0
        """How many compactions this keeper has made (hosts compare it before and after a turn)."""
        self.summary: HistorySummary | None = None
        self.tokens: int | None = None
        """Input tokens of the conversation's last request (measured, or estimated after a compaction)."""
        self._summary_messages: tuple[Message, ...] = ()
        self._trimmed_until = 0
        self._run_cuts: dict[int, tuple[Message, int]] = {}
        self._cut_cache: dict[int, tuple[Message, Message]] = {}
        self._last: tuple[ModelRequest, int] | None = None
        self.before_compact: BeforeCompact | None = None
        """Runs the user's `PreCompact` hooks before each compaction (set by the session)."""
        self.spend_cap: SpendCheck | None = None
        """Asked before each summariser request: the spend cap stops compaction too (set by the session)."""

    # -- state -----------------------------------------------------------------------------------

    def reset(self, summary: HistorySummary | None = None, history: Sequence[Message] = ()) -> None:
        """Start on another conversation: `history` is its full history, `summary` its stored summary.

        A summary that does not end at a turn boundary of `history` (the history changed since)
        is dropped. Until the next request is measured, `tokens` estimates what the history takes.
        """
        if summary is not None and not (
            0 < summary.covered <= len(history)
            and (summary.covered == len(history) or summary.covered in turn_starts(history))
        ):
            summary = None
        self._set_summary(summary)
        self._trimmed_until = summary.covered if summary is not None else 0
        self._run_cuts.clear()
        self._cut_cache.clear()
        self._last = None
        self.tokens = None
        if history:
            view = self._view(ModelRequest(system="", messages=tuple(history), stable_prefix=len(history)))
            self.tokens = math.ceil(self._scale * message_tokens(view.messages))

    def _set_summary(self, summary: HistorySummary | None) -> None:
        self.summary = summary
        self._summary_messages = summary_messages(summary) if summary is not None else ()

    @property
    def window(self) -> int:
        """The context window in use: the configured one, or less if the provider said so."""
        configured = self._configured_window()
        if self._learned is not None and self._learned[0] == configured:
            return min(configured, self._learned[1])
        return configured

    @property
    def limit(self) -> int:
        """Estimated input tokens past which a request is compacted."""
        return int(self.compact_at * self.window)

    def _limit_for(self, request: ModelRequest) -> int:
        """The limit for `request`, whose reply must fit in the window too."""
        room = self.window - request.max_tokens
        return min(self.limit, room) if room > 0 else self.limit

    @property
    def fill(self) -> float | None:
        """How full the context was at the last request (0..1+), or None before any."""
        return None if self.tokens is None else self.tokens / self.window

    @property
    def _result_chars(self) -> int:
        """How much of an old tool result survives a cut: 1/25 of the window, 200 to 2,000 characters."""
        return max(200, min(2_000, self.window // 25))

    # -- the port --------------------------------------------------------------------------------

    async def fit(
        self,
        request: ModelRequest,
        observer: TurnObserver,
        parent_id: str,
        *,
        overflow: ContextOverflow | None = None,
    ) -> FittedRequest:
        """The request to send: `request` as compacted so far, compacted further if it would not fit.

        Raises:
            ContextOverflow: `overflow` itself, when nothing more can be compacted.
            ProviderError: when `overflow` is set and the summariser call fails.
        """
        sent = self._view(request)
        if overflow is None:
            estimate = await self._estimate(sent)
            if estimate <= self._limit_for(request):
                return FittedRequest(sent)
        else:
            estimate = self._learn(overflow, sent)
        try:
            report = await self._compact(request, estimate, observer, parent_id, keep=KEEP_TURNS)
        except ProviderError as exc:
            if overflow is None:  # send it uncompacted: the provider judges, and a refusal comes back here
                log.warning("compaction failed: %s", exc)
                return FittedRequest(sent)
            raise ProviderError(f"{overflow} (compacting the history failed: {exc})") from exc
        if report is None:
            if overflow is not None:
                raise overflow
            return FittedRequest(sent)
        return FittedRequest(self._view(request), report.usage)

    def measured(self, request: ModelRequest, usage: Usage) -> None:
        """Remember what the provider measured for `request` (the base of the next estimate)."""
        tokens = usage.total_input_tokens
        if tokens <= 0:
            return
        self._last = (request, tokens)
        self.tokens = tokens
        self._calibrate(tokens, request)

    async def compact_history(
        self, history: Sequence[Message], observer: TurnObserver, *, instructions: str | None = None
    ) -> CompactionReport | None:
        """Summarise `history` now, keeping its latest turn verbatim (`/compact`).

        Args:
            history: The conversation's full history.
            observer: Where the `compact` node is reported (a root node: there is no turn).
            instructions: What the summary should focus on; passed to the summariser.

        Returns:
            What was done, or None when there is nothing older than the latest turn to summarise.

        Raises:
            ProviderError: when the summariser call fails.
        """
        system, tools = (self._last[0].system, self._last[0].tools) if self._last is not None else ("", ())
        request = ModelRequest(
            system=system, messages=tuple(history), tools=tools, stable_prefix=len(history)
        )
        estimate = self._estimate_local(self._view(request))[0]
        return await self._compact(
            request, estimate, observer, None, keep=MANUAL_KEEP_TURNS, instructions=instructions, manual=True
        )

    # -- views -----------------------------------------------------------------------------------

    def _view(self, request: ModelRequest) -> ModelRequest:
        """`request` as compaction so far has it sent: summary first, old tool results cut."""
        prefix = min(request.stable_prefix, len(request.messages))
        history, current = request.messages[:prefix], request.messages[prefix:]
        summary = self.summary if self.summary is not None and self.summary.covered <= len(history) else None
        start = summary.covered if summary is not None else 0
        trim_to = min(max(start, self._trimmed_until), len(history))
        run_cut = self._run_cut(current)
        if start == 0 and trim_to == 0 and run_cut == 0:
            return request
        head = self._summary_messages if summary is not None else ()
        body = [*(self._cut(m) for m in history[start:trim_to]), *history[trim_to:]]
        tail = [*(self._cut(m) for m in current[:run_cut]), *current[run_cut:]]
        return replace(request, messages=(*head, *body, *tail), stable_prefix=len(head) + len(body))

    def _cut(self, message: Message) -> Message:
        """`message` with long tool results cut; the same object every time, for cheap prefix checks."""
        if not is_tool_results(message):
            return message
        cached = self._cut_cache.get(id(message))
        if cached is None or cached[0] is not message:
            cached = (message, cut_tool_results(message, self._result_chars))
            self._cut_cache[id(message)] = cached
        return cached[1]

    def _run_cut(self, current: Sequence[Message]) -> int:
        """How many leading messages of a running turn have their tool results cut."""
        if not current:
            return 0
        entry = self._run_cuts.get(id(current[0]))
        if entry is None or entry[0] is not current[0]:
            return 0
        return min(entry[1], len(current))

    # -- estimates -------------------------------------------------------------------------------

    def _estimate_local(self, sent: ModelRequest) -> tuple[int, int]:
        """(estimated input tokens, how many of them are a character estimate rather than measured)."""
        if self._last is not None:
            before, tokens = self._last
            n = len(before.messages)
            if (
                before.system == sent.system
                and len(before.tools) == len(sent.tools)
                and len(sent.messages) >= n
                and all(a is b for a, b in zip(before.messages, sent.messages, strict=False))
            ):
                added = math.ceil(self._scale * message_tokens(sent.messages[n:]))
                return tokens + added, added
        guess = math.ceil(self._scale * request_tokens(sent))
        return guess, guess

    async def _estimate(self, sent: ModelRequest) -> int:
        estimate, guessed = self._estimate_local(sent)
        limit = self._limit_for(sent)
        low, high = COUNT_BAND
        counter = self.provider
        if (
            isinstance(counter, TokenCounter)
            and low * limit <= estimate <= high * limit
            and guessed > 0.1 * limit
        ):
            try:
                counted = await counter.count_tokens(sent)
            except ProviderError as exc:
                log.info("token count unavailable, using the estimate: %s", exc)
                return estimate
            self._calibrate(counted, sent)
            return counted
        return estimate

    def _calibrate(self, tokens: int, request: ModelRequest) -> None:
        estimated = request_tokens(request)
        if estimated > 0:
            self._scale = min(3.0, max(0.5, tokens / estimated))

    def _learn(self, overflow: ContextOverflow, sent: ModelRequest) -> int:
        """Take in what a refusal says (the real size, the real window); the request's size in tokens."""
        configured = self._configured_window()
        if overflow.tokens:
            self._calibrate(overflow.tokens, sent)
            size = overflow.tokens
        else:
            size = max(self._estimate_local(sent)[0], self.window + 1)
        # The request did not fit, so the window is at most what the provider says, or what was sent.
        self._learned = (configured, min(self.window, overflow.limit or size - 1))
        return size

    # -- compacting ------------------------------------------------------------------------------

    async def _compact(
        self,
        request: ModelRequest,
        before: int,
        observer: TurnObserver,
        parent_id: str | None,
        *,
        keep: int,
        manual: bool = False,
        instructions: str | None = None,
    ) -> CompactionReport | None:
        """Compact the history part of `request` as far as it takes to get under the limit.

        `before` is the request's size in tokens as best known (measured, counted, or what a
        refusal said); sizes after each stage are `before` scaled by how much the estimate shrank.
        """
        prefix = min(request.stable_prefix, len(request.messages))
        history, current = request.messages[:prefix], request.messages[prefix:]
        plan = self._plan(history, current, keep, min_keep=keep if manual else 0, manual=manual)
        run_cut = 0 if manual else self._next_run_cut(current)
        if plan.trimmed_turns == 0 and plan.summary_end is None and run_cut == 0:
            return None
        start = request_tokens(self._view(request))
        limit = self._limit_for(request)

        def size_now() -> int:
            return math.ceil(before * request_tokens(self._view(request)) / max(1, start))

        with NodeScope(observer, "compact", "compact", parent_id, detail=instructions or "") as node:
            if self.before_compact is not None:
                await self.before_compact(observer, node.node_id, "manual" if manual else "auto")
            usage = Usage()
            stage: Literal["trim", "summary"] = "trim"
            turns = plan.trimmed_turns
            if turns:
                self._trimmed_until = plan.trim_to
            size = size_now()
            if plan.summary_end is not None and (manual or size > limit):
                turns, usage = await self._summarise(history, plan.summary_end, instructions, node, observer)
                stage = "summary"
                size = size_now()
            if run_cut and size > limit:
                self._run_cuts[id(current[0])] = (current[0], run_cut)
                while len(self._run_cuts) > 16:  # the oldest runs are over
                    del self._run_cuts[next(iter(self._run_cuts))]
                size = size_now()
            elif (
                stage == "trim" and turns == 0
            ):  # only a cut of the running turn was possible, and not needed
                node.finish(outcome="nothing")
                return None
            report = CompactionReport(stage, turns, before, size, usage)
            if stage == "summary" and self.summary is not None:
                self._set_summary(replace(self.summary, tokens_before=before, tokens_after=size))
                await self._keep(self.summary)
            self.compactions += 1
            self.tokens = size
            node.finish(outcome=stage, output=report.notice)
            return report

    def _plan(
        self,
        history: Sequence[Message],
        current: Sequence[Message],
        keep: int,
        *,
        min_keep: int,
        manual: bool,
    ) -> _Plan:
        """What compacting `history` (the running turn being `current`) can do, keeping `keep` turns."""
        covered = self.summary.covered if self.summary is not None else 0
        starts = [i for i in turn_starts(history) if i >= covered]
        if keep == 0:
            trim_to = len(history)
        else:
            trim_to = starts[-keep] if len(starts) > keep else covered
        trimmed_turns = 0
        if not manual and trim_to > self._trimmed_until:
            bounds = [*starts, len(history)]
            for a, b in zip(bounds, bounds[1:], strict=False):
                if a >= max(covered, self._trimmed_until) and b <= trim_to:
                    trimmed_turns += any(self._cut(m) is not m for m in history[a:b])
        plan = _Plan(trim_to, trimmed_turns)
        for kept in range(keep, min_keep - 1, -1):
            if len(starts) <= kept:
                continue  # nothing older than the kept turns
            end = starts[-kept] if kept else len(history)
            kept_tokens = self._scale * (message_tokens(history[end:]) + message_tokens(current))
            if kept_tokens <= KEEP_SHARE * self.window or kept == min_keep:
                plan.summary_end = end
                break
        return plan

    def _next_run_cut(self, current: Sequence[Message]) -> int:
        """Where cutting the running turn's tool results would end (0: nothing new to cut)."""
        results = [i for i, m in enumerate(current) if is_tool_results(m)]
        if len(results) <= RECENT_RESULTS:
            return 0
        end = results[-RECENT_RESULTS]
        already = self._run_cut(current)
        if end <= already or all(self._cut(m) is m for m in current[already:end]):
            return 0
        return end

    async def _summarise(
        self,
        history: Sequence[Message],
        end: int,
        instructions: str | None,
        node: NodeScope,
        observer: TurnObserver,
    ) -> tuple[int, Usage]:
        """Summarise `history[covered:end]` (with the summary before it) into the new summary.

        Returns:
            How many turns were summarised now, and what the calls spent.
        """
        if self.provider is None:
            raise ProviderError("no provider to summarise the history with")
        covered = self.summary.covered if self.summary is not None else 0
        starts = [i for i in turn_starts(history) if covered <= i < end]
        bounds = [*starts, end]
        texts = [
            render_transcript(history[a:b], self._result_chars)
            for a, b in zip(bounds, bounds[1:], strict=False)
        ]
        max_tokens = max(256, min(4_096, self.window // 8))
        # Room for the transcript: the window less the system prompt, the previous summary and the reply.
        room = self.window - estimate_tokens(SUMMARY_SYSTEM) - 2 * max_tokens
        budget = max(2_000, int(SUMMARY_INPUT_SHARE * room * 4 / self._scale))
        chunks: list[list[str]] = [[]]
        for text in texts:
            text = truncate_middle(text, budget)
            if chunks[-1] and sum(len(t) for t in chunks[-1]) + len(text) > budget:
                chunks.append([])
            chunks[-1].append(text)
        previous = self.summary.text if self.summary is not None else None
        usage = Usage()
        sink = NodeSink(observer, node.node_id)
        for chunk in chunks:
            check_spend(self.spend_cap)
            request = summary_request(
                "\n\n".join(chunk), previous=previous, instructions=instructions, max_tokens=max_tokens
            )
            result = await summarise(self.provider, request, sink)
            observer.on_event(UsageRecorded(node_id=node.node_id, usage=result.usage, model=result.model))
            usage = usage + result.usage
            previous = result.text
        assert previous is not None
        turns = (self.summary.turns if self.summary is not None else 0) + len(starts)
        self._set_summary(HistorySummary(previous, end, turns))
        self._trimmed_until = max(self._trimmed_until, end)
        return len(starts), usage

    async def _keep(self, summary: HistorySummary) -> None:
        if self._save is None:
            return
        try:
            await self._save(summary)
        except Exception:  # the summary still works for this session; a resume makes it again
            log.exception("cannot save the history summary")
