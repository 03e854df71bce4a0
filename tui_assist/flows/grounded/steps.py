# pyright: strict
"""The grounded flow's leaves and its composition (see `tui_assist.flows.grounded`).

Every leaf is a `Step` over the one `FlowState`, composed with the engine's `Chain` and `Route`
(plus the bounded `RetrievalLoop`), so each step is a node the flow panel draws. Model calls go
through `complete`, which checks the token budget before the spend and does the accounting.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from tui_assist.core.budget import BudgetExhausted
from tui_assist.core.conversation import Message, ToolResultBlock, ToolUseBlock
from tui_assist.core.events import ToolCallFinished, ToolCallStarted, UsageRecorded
from tui_assist.core.model import ModelRequest, ModelResponse, ProviderError, ToolSpec
from tui_assist.core.observer import NodeSink
from tui_assist.flows.grounded.index import CorpusIndex, SearchResult, query_terms
from tui_assist.flows.grounded.sql import (
    SQL_TOOL_NAME,
    SqlSource,
    Table,
    quote_identifier,
    quote_literal,
    schema_text,
)
from tui_assist.flows.grounded.state import (
    DEFAULT_APPROVAL_RULES,
    FLOW_NAME,
    ApprovalRule,
    FlowState,
    GroundedConfig,
    Leaves,
    Passage,
    RouteLabel,
    SqlCall,
)
from tui_assist.workflow import Chain, Route, Step, WorkflowContext
from tui_assist.workflow.prompt import StructuredOutputError, parse_reply

ESTIMATE_CHARS_PER_TOKEN = 3.0
"""The request-size estimate behind the budget check: deliberately pessimistic (real text runs
nearer 4 characters per token) and the whole `max_tokens` reply is counted, so a call that
passes the check does not cross the budget in practice."""

_CITATION = re.compile(r"(?<![\w#-])([a-z0-9][a-z0-9-]*#c\d{4}|sql#\d+)\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORDS = re.compile(r"[a-z0-9]+")


class GroundedError(Exception):
    """The flow could not finish a step (e.g. the data route found no answer within its calls)."""


UNSUPPORTED_PATTERNS: tuple[str, ...] = (
    r"\b(poems?|poetry|songs?|lyrics|jokes?|haikus?|limericks?|stories|story)\b",
    r"\b(weather|forecast|stock prices?|horoscopes?|lottery|recipes?)\b",
    r"\b(write|fix|debug|refactor)\b[^.?!]{0,40}\b(code|python|javascript|function|script|program)\b",
)
"""Requests the rules classifier declines outright, whatever words they share with the corpus."""
DATA_CUES = re.compile(
    r"\b(how many|number of|count|total|sum|average|mean|highest|lowest|largest|smallest|maximum|"
    r"minimum|list|show)\b",
    re.IGNORECASE,
)
"""Words that make a question about a named table a data question."""


@dataclass(slots=True)
class GroundedDeps:
    """What the flow's leaves work with."""

    index: CorpusIndex
    sql: SqlSource | None = None
    glossary: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    """Alias → corpus term (`cab` → `taxi`), used by the rules rephraser and classifier."""
    config: GroundedConfig = field(default_factory=GroundedConfig)
    leaves: Leaves = "rules"
    _tables: list[Table] | None = None

    async def tables(self) -> list[Table]:
        """The data source's tables (cached); none without a data source."""
        if self.sql is None:
            return []
        if self._tables is None:
            self._tables = await self.sql.tables()
        return self._tables


# --- Model calls ---------------------------------------------------------------------------------


def estimate_tokens(request: ModelRequest) -> int:
    """A pessimistic token estimate of a request's prompt (system, messages, tools).

    Args:
        request: The request about to be sent.

    Returns:
        The estimate, at least 1.
    """
    chars = len(request.system) + sum(len(json.dumps(m.to_dict())) for m in request.messages)
    chars += sum(len(t.name) + len(t.description) + len(json.dumps(t.input_schema)) for t in request.tools)
    return max(1, math.ceil(chars / ESTIMATE_CHARS_PER_TOKEN))


def check_budget(state: FlowState, request: ModelRequest) -> None:
    """Refuse a model call that could take the run past its token budget.

    The call is charged at its estimated prompt plus its whole `max_tokens`, before it is made.

    Args:
        state: The run's state (tokens used so far, the budget).
        request: The call about to be made.

    Raises:
        BudgetExhausted: when used + estimate would cross the budget.
    """
    need = estimate_tokens(request) + request.max_tokens
    if state.tokens_used + need > state.token_budget:
        raise BudgetExhausted(
            f"token budget of {state.token_budget} would be crossed: {state.tokens_used} used, "
            f"the next call may take up to {need}"
        )


async def complete(ctx: WorkflowContext, state: FlowState, request: ModelRequest) -> ModelResponse:
    """Make one model call for a leaf: budget first, then the call, then the accounting.

    Args:
        ctx: The leaf's context (its provider, budget and node).
        state: The run's state; its token counters are updated.
        request: The call.

    Returns:
        The provider's response.

    Raises:
        BudgetExhausted: before the call, when it could cross the token budget.
        ProviderError: when no provider is configured or the call fails for good.
    """
    provider = ctx.provider
    if provider is None:
        raise ProviderError("the grounded flow's model leaves need a provider, but none is configured")
    check_budget(state, request)
    ctx.budget.before_model_request()
    response = await provider.complete(request, NodeSink(ctx.observer, ctx.parent_id))
    ctx.budget.record(response.usage)
    usage = response.usage
    state.tokens_prompt += usage.total_input_tokens
    state.tokens_completion += usage.output_tokens
    state.tokens_used = state.tokens_prompt + state.tokens_completion
    state.model = response.model or provider.model
    observer = ctx.observer
    if observer is not None and ctx.parent_id is not None:
        observer.on_event(UsageRecorded(node_id=ctx.parent_id, usage=usage, model=response.model))
    return response


M = TypeVar("M", bound=BaseModel)

_JSON_ONLY = "Reply with only a JSON object, no prose and no code fence: {shape}"
_REPAIR = "Your reply could not be used: {error}\nReply again with only the corrected JSON object."


async def ask_json(
    ctx: WorkflowContext,
    state: FlowState,
    output_type: type[M],
    *,
    system: str,
    prompt: str,
    shape: str,
    max_tokens: int,
    retries: int = 1,
) -> M:
    """A structured model call: a JSON reply validated with `output_type`, repaired once.

    Every attempt is budget-checked before it is made.

    Args:
        ctx: The leaf's context.
        state: The run's state.
        output_type: The pydantic model of the reply.
        system: The system prompt.
        prompt: The user message.
        shape: The JSON shape shown to the model (e.g. `{"label": "docs"}`).
        max_tokens: The reply's token limit.
        retries: Extra attempts after a reply that does not validate.

    Returns:
        The validated reply.

    Raises:
        StructuredOutputError: when no reply validates.
    """
    messages = [Message.user(prompt)]
    system = f"{system}\n\n{_JSON_ONLY.format(shape=shape)}"
    error: ValueError | None = None
    for _ in range(retries + 1):
        response = await complete(
            ctx, state, ModelRequest(system=system, messages=tuple(messages), max_tokens=max_tokens)
        )
        try:
            return parse_reply(output_type, response.message.text)
        except ValueError as exc:
            error = exc
            messages += [response.message, Message.user(_REPAIR.format(error=exc))]
    raise StructuredOutputError(
        f"no reply matched {output_type.__name__} in {retries + 1} attempt(s): {error}"
    )


class ClassifyReply(BaseModel):
    """The model classifier's reply.

    The label is free text here on purpose: the route, not the parser, is the one place that
    checks it against the closed set.
    """

    label: str


class RephraseReply(BaseModel):
    """The model rephraser's reply."""

    query: str


# --- Steps ---------------------------------------------------------------------------------------


class _StateStep(Step[FlowState, FlowState]):
    """A step over the flow state; its node shows the question, not the whole state."""

    __slots__ = ()

    def summarize_input(self, value: FlowState) -> str:
        """The question (and the route once known)."""
        return str(value)

    def summarize_output(self, value: object) -> str:
        """The state's short form."""
        return str(value)


class _Branch(_StateStep):
    """One route branch: records its label as the state's route, then runs its body."""

    __slots__ = ("body", "route")

    def __init__(self, route: RouteLabel, body: Step[FlowState, FlowState]) -> None:
        super().__init__(route)
        self.route: RouteLabel = route
        self.body = body

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The branch's body."""
        return (self.body,)

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Record the route and run the body."""
        input.route = self.route
        return await ctx.run(self.body, input)


class ClassifyStep(Step[FlowState, str]):
    """Pick the route: one cheap model call, or the deterministic rules.

    Rules: decline the request types in `UNSUPPORTED_PATTERNS`; with a data source, a question
    naming one of its tables with a data cue (`how many`, `total`...) is `data`; a question with
    any term the corpus (or its glossary) knows is `docs`; anything else is `unsupported`.
    """

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("classify")
        self.deps = deps

    def summarize_input(self, value: FlowState) -> str:
        """The question."""
        return value.question

    async def run(self, input: FlowState, ctx: WorkflowContext) -> str:
        """The label (validated by the route, not here)."""
        if self.deps.leaves == "model":
            return await self._model(input, ctx)
        return await self._rules(input)

    async def _rules(self, state: FlowState) -> str:
        question = state.question
        if any(re.search(p, question, re.IGNORECASE) for p in UNSUPPORTED_PATTERNS):
            return "unsupported"
        if _named_table(question, await self.deps.tables()) is not None and DATA_CUES.search(question):
            return "data"
        if await self.deps.index.known_terms(query_terms(question)) or _glossary_hits(
            question, self.deps.glossary
        ):
            return "docs"
        return "unsupported"

    async def _model(self, state: FlowState, ctx: WorkflowContext) -> str:
        documents = await self.deps.index.documents()
        titles = "\n".join(f"- {title}" for _, title in documents[:40]) or "- (none)"
        tables = await self.deps.tables()
        data = f"A SQLite database with these tables:\n{schema_text(tables)}" if tables else "No database."
        system = (
            "You route questions for an assistant that answers only from a user's own documents and "
            "data. Labels: `docs` (the documents below can answer it), `data` (it needs numbers or "
            "rows from the database below), `unsupported` (anything else: general knowledge, "
            "creative writing, code, chit-chat).\n\n"
            f"Documents:\n{titles}\n\n{data}"
        )
        reply = await ask_json(
            ctx,
            state,
            ClassifyReply,
            system=system,
            prompt=state.question,
            shape='{"label": "docs" | "data" | "unsupported"}',
            max_tokens=self.deps.config.classify_max_tokens,
        )
        return reply.label.strip().lower()


def _named_table(question: str, tables: Sequence[Table]) -> Table | None:
    words = set(_WORDS.findall(question.casefold()))
    for table in tables:
        name = table.name.casefold()
        if name in words or name.rstrip("s") in words or f"{name}s" in words:
            return table
    return None


def _glossary_hits(text: str, glossary: Mapping[str, str]) -> list[str]:
    return [alias for alias in glossary if re.search(rf"\b{re.escape(alias)}\b", text, re.IGNORECASE)]


def rephrase_with_glossary(text: str, glossary: Mapping[str, str]) -> str | None:
    """The text with every glossary alias replaced by its corpus term (longest alias first).

    Args:
        text: The question.
        glossary: Alias → term.

    Returns:
        The rephrased text, or None when no alias occurs (a retry would search the same words).
    """
    result = text
    for alias in sorted(glossary, key=len, reverse=True):
        result = re.sub(rf"\b{re.escape(alias)}\b", glossary[alias], result, flags=re.IGNORECASE)
    return result if result != text else None


class RetrieveStep(_StateStep):
    """Search the corpus with the question (or its rephrasing); keep the passages above the floor."""

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("retrieve")
        self.deps = deps

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Search once; set `passages` and `top_score`."""
        config = self.deps.config
        query = input.rephrased or input.question
        result: SearchResult = await self.deps.index.search(
            query, top_k=config.top_k, floor=config.relevance_floor
        )
        input.passages = [
            Passage(
                chunk_id=h.chunk.chunk_id,
                doc_id=h.chunk.doc_id,
                title=h.chunk.title,
                heading=h.chunk.heading,
                text=h.chunk.text,
                score=h.score,
            )
            for h in result.hits
        ]
        input.top_score = result.top_score
        ctx.output = f"{len(input.passages)} passage(s), top score {result.top_score:.2f}"
        ctx.outcome = "found" if input.passages else "below_floor"
        return input


class RephraseStep(_StateStep):
    """Rephrase the question for the retry: the model, or the corpus glossary offline."""

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("rephrase")
        self.deps = deps

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `rephrased` (None when there is nothing new to search for)."""
        if self.deps.leaves == "model":
            documents = await self.deps.index.documents()
            titles = ", ".join(title for _, title in documents[:40])
            reply = await ask_json(
                ctx,
                input,
                RephraseReply,
                system=(
                    "A search over the user's documents found nothing relevant for their question. "
                    "Rewrite it as a short keyword query in the documents' own vocabulary "
                    f"(document titles: {titles})."
                ),
                prompt=input.question,
                shape='{"query": "..."}',
                max_tokens=self.deps.config.rephrase_max_tokens,
            )
            query = reply.query.strip()
            input.rephrased = query if query and query.casefold() != input.question.casefold() else None
        else:
            input.rephrased = rephrase_with_glossary(input.question, self.deps.glossary)
        ctx.output = input.rephrased or "(nothing to rephrase)"
        return input


class RetrievalLoop(_StateStep):
    """Search, and while nothing clears the floor and attempts remain, rephrase and search again.

    The cap is the loop condition's counter (`retrieval_attempts < max_attempts`), never the
    model's choice; a rephrasing that adds nothing new ends the loop early.
    """

    __slots__ = ("retrieve", "rephrase", "max_attempts")

    def __init__(
        self, retrieve: Step[FlowState, FlowState], rephrase: Step[FlowState, FlowState], max_attempts: int
    ) -> None:
        super().__init__("retrieval loop")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.retrieve = retrieve
        self.rephrase = rephrase
        self.max_attempts = max_attempts

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The search and the rephraser."""
        return (self.retrieve, self.rephrase)

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Run the bounded loop."""
        while input.retrieval_attempts < self.max_attempts and not input.passages:
            if input.retrieval_attempts > 0:
                await ctx.run(self.rephrase, input)
                if input.rephrased is None:
                    break
            input.retrieval_attempts += 1
            await ctx.run(self.retrieve, input, label=f"retrieve #{input.retrieval_attempts}")
        ctx.outcome = "found" if input.passages else "none"
        ctx.output = f"{input.retrieval_attempts} attempt(s), {len(input.passages)} passage(s)"
        return input


class _Relevant(Step[FlowState, str]):
    """`found` when retrieval returned passages, else `none`."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("relevant?")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> str:
        """The label."""
        return "found" if input.passages else "none"


class _Drafted(Step[FlowState, str]):
    """`drafted` when the data route produced a draft, `ended` when it already ended the run."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("drafted?")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> str:
        """The label."""
        return "ended" if input.outcome is not None else "drafted"


class _Stop(_StateStep):
    """Pass an ended run through unchanged."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("stop")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Nothing to do: the outcome is set."""
        ctx.outcome = input.outcome
        return input


class NoDocumentsStep(_StateStep):
    """End the run: nothing in the corpus is relevant enough to answer from."""

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("no documents")
        self.deps = deps

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set the outcome `no_relevant_documents`."""
        input.outcome = "no_relevant_documents"
        top = input.top_score or 0.0
        input.note = (
            f"no passage cleared the relevance floor of {self.deps.config.relevance_floor:g} "
            f"(best {top:.2f}) in {input.retrieval_attempts} attempt(s)"
        )
        ctx.outcome = input.outcome
        return input


class DeclineStep(_StateStep):
    """The explicit decline branch: the flow was not built for this question."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("decline")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set the outcome `out_of_scope`."""
        input.outcome = "out_of_scope"
        input.note = "the question is not about the documents or data this assistant answers from"
        ctx.outcome = input.outcome
        return input


ANSWER_SYSTEM = (
    "You answer questions using only the passages given, from the user's own documents. Cite each "
    "fact with the passage id in square brackets right after it, e.g. [handbook-expenses#c0002]. "
    "Do not use outside knowledge. If the passages do not answer the question, say so briefly and "
    "cite nothing. Be concise."
)
"""The docs answerer's system prompt."""


class AnswerStep(_StateStep):
    """Draft a grounded answer from the passages, citing chunk ids."""

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("answer")
        self.deps = deps

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `draft`."""
        if self.deps.leaves == "model":
            passages = "\n\n".join(
                f"[{p.chunk_id}] {p.title}{' > ' + p.heading if p.heading else ''}\n{p.text}"
                for p in input.passages
            )
            request = ModelRequest(
                system=ANSWER_SYSTEM,
                messages=(Message.user(f"Passages:\n\n{passages}\n\nQuestion: {input.question}"),),
                max_tokens=self.deps.config.answer_max_tokens,
            )
            response = await complete(ctx, input, request)
            input.draft = response.message.text.strip()
        else:
            input.draft = extractive_answer(input)
        ctx.output = input.draft
        return input


def _term_hits(sentence: str, terms: Sequence[str]) -> int:
    words = _WORDS.findall(sentence.casefold())
    return sum(1 for t in terms if any(w.startswith(t[: max(4, len(t) - 2)]) for w in words))


def extractive_answer(state: FlowState) -> str:
    """The rules answer: the best-matching sentence of the top passages, each cited.

    When the question asks for a message to be drafted, the sentences are framed as an email
    (which the default approval rules then hold for a person).

    Args:
        state: The run's state, with passages.

    Returns:
        The draft.
    """
    terms = query_terms(f"{state.question} {state.rephrased or ''}")
    parts: list[str] = []
    for passage in state.passages[:2]:
        sentences = [s for s in _SENTENCE.split(passage.text.replace("\n\n", " ")) if s.strip()]
        best = max(sentences, key=lambda s: _term_hits(s, terms))
        if parts and _term_hits(best, terms) == 0:
            continue
        parts.append(f"{best.strip()} [{passage.chunk_id}]")
    body = " ".join(parts)
    if DEFAULT_APPROVAL_RULES[0].matches(state):
        top = state.passages[0]
        subject = f"{top.title}: {top.heading}" if top.heading else top.title
        return f"Subject: {subject}\n\nHello,\n\n{body}\n\nBest regards"
    return body


DATA_SYSTEM = (
    "You answer questions from the user's SQLite database with the `sql_query` tool. Each call runs "
    "one read-only SELECT (row and time limits apply; aggregate rather than list). Every result "
    "starts with its id, e.g. [sql#1]. Answer briefly from the results only, citing the id of each "
    "result you use in square brackets. Tables:\n{schema}"
)
"""The data route's system prompt; `{schema}` is the database's tables and columns."""

SQL_TOOL = ToolSpec(
    name=SQL_TOOL_NAME,
    description=(
        "Run one read-only SQL SELECT (or WITH ... SELECT) statement on the user's SQLite database "
        "and return the rows. Writes, several statements, ATTACH and PRAGMA are refused."
    ),
    input_schema={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "One SELECT statement."}},
        "required": ["query"],
    },
)
"""The `sql_query` tool as offered to the model."""


class QueryDataStep(_StateStep):
    """Answer from the user's database through the guarded `sql_query` tool.

    Model leaves run a bounded tool loop (`max_data_calls` model calls, each budget-checked);
    rules leaves plan one query from the question's words (a table, a category value, an
    aggregate) and run it through the same tool.
    """

    __slots__ = ("deps",)

    def __init__(self, deps: GroundedDeps) -> None:
        super().__init__("query data")
        self.deps = deps

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `draft` and `sql_calls` (or end `out_of_scope` when there is no database)."""
        sql = self.deps.sql
        if sql is None:
            input.outcome = "out_of_scope"
            input.note = "the question needs a database, but none was given"
            ctx.outcome = input.outcome
            return input
        if self.deps.leaves == "model":
            await self._model(input, ctx, sql)
        else:
            await self._rules(input, ctx, sql)
        ctx.output = input.draft
        return input

    async def _run_tool(
        self, state: FlowState, ctx: WorkflowContext, sql: SqlSource, use: ToolUseBlock
    ) -> ToolResultBlock:
        query = use.input.get("query")
        observer = ctx.observer
        node_id = ctx.new_node_id()
        if observer is not None and ctx.parent_id is not None:
            observer.on_event(
                ToolCallStarted(
                    node_id=node_id,
                    parent_id=ctx.parent_id,
                    call_id=use.id,
                    name=use.name,
                    input=dict(use.input),
                )
            )
        started = time.monotonic()
        call_id = f"sql#{len(state.sql_calls) + 1}"
        if use.name != SQL_TOOL_NAME:
            text, is_error = f"Unknown tool {use.name!r}. Available tools: {SQL_TOOL_NAME}.", True
        elif not isinstance(query, str):
            text, is_error = "Invalid input for sql_query: query: is required (a string)", True
        else:
            result = await sql.query(query)
            state.sql_calls.append(
                SqlCall(
                    id=call_id,
                    query=result.sql,
                    rows=len(result.rows),
                    truncated=result.truncated,
                    error=result.error,
                    duration_ms=result.duration_ms,
                )
            )
            text, is_error = f"[{call_id}]\n{result.to_text()}", not result.ok
        if observer is not None and ctx.parent_id is not None:
            observer.on_event(
                ToolCallFinished(
                    node_id=node_id,
                    call_id=use.id,
                    name=use.name,
                    output=text,
                    is_error=is_error,
                    duration=time.monotonic() - started,
                )
            )
        return ToolResultBlock(use.id, text, is_error)

    async def _model(self, state: FlowState, ctx: WorkflowContext, sql: SqlSource) -> None:
        system = DATA_SYSTEM.format(schema=schema_text(await self.deps.tables()))
        messages: list[Message] = [Message.user(state.question)]
        limit = self.deps.config.max_data_calls
        calls = 0
        while calls < limit:
            calls += 1
            request = ModelRequest(
                system=system,
                messages=tuple(messages),
                tools=(SQL_TOOL,),
                max_tokens=self.deps.config.answer_max_tokens,
            )
            response = await complete(ctx, state, request)
            messages.append(response.message)
            uses = response.message.tool_uses
            if not uses:
                state.draft = response.message.text.strip()
                return
            results = [await self._run_tool(state, ctx, sql, use) for use in uses]
            if calls == limit - 1:
                last = results[-1]
                results[-1] = ToolResultBlock(
                    last.tool_use_id, last.content + "\n(No more queries: answer now.)", last.is_error
                )
            messages.append(Message("user", tuple(results)))
        raise GroundedError(f"the data route found no answer within {limit} model calls")

    async def _rules(self, state: FlowState, ctx: WorkflowContext, sql: SqlSource) -> None:
        tables = await self.deps.tables()
        table = _named_table(state.question, tables)
        if table is None:
            state.outcome = "out_of_scope"
            state.note = "the rules planner found no table named in the question"
            return
        question = state.question.casefold()
        words = set(_WORDS.findall(question))
        where: list[str] = []
        for column in table.columns:
            if "char" in column.type.lower() or "text" in column.type.lower() or not column.type:
                for value in await sql.distinct_text(table.name, column.name):
                    if value and re.search(rf"\b{re.escape(value.casefold())}\b", question):
                        where.append(f"{quote_identifier(column.name)} = {quote_literal(value)}")
                        break
        numeric = [
            c
            for c in table.columns
            if any(k in c.type.lower() for k in ("real", "int", "num", "dec", "float", "double"))
            and c.name != "id"
        ]
        target = next((c for c in numeric if c.name.casefold() in words), numeric[0] if numeric else None)
        aggregate = "COUNT(*)"
        if re.search(r"\b(total|sum)\b", question) and target is not None:
            aggregate = f"SUM({quote_identifier(target.name)})"
        elif re.search(r"\b(average|mean)\b", question) and target is not None:
            aggregate = f"AVG({quote_identifier(target.name)})"
        elif re.search(r"\b(highest|largest|maximum|most expensive)\b", question) and target is not None:
            aggregate = f"MAX({quote_identifier(target.name)})"
        elif re.search(r"\b(lowest|smallest|minimum|cheapest)\b", question) and target is not None:
            aggregate = f"MIN({quote_identifier(target.name)})"
        elif not re.search(r"\b(how many|number of|count)\b", question):
            aggregate = "*"
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        query = f"SELECT {aggregate} FROM {quote_identifier(table.name)}{clause}"
        if aggregate == "*":
            query += " LIMIT 10"
        use = ToolUseBlock(f"rules-{len(state.sql_calls) + 1}", SQL_TOOL_NAME, {"query": query})
        result = await self._run_tool(state, ctx, sql, use)
        call = state.sql_calls[-1]
        if result.is_error:
            raise GroundedError(f"the planned query failed: {call.error}")
        rows = result.content.splitlines()[2:-1]
        if aggregate == "*":
            listing = "\n".join(f"- {row}" for row in rows) or "(no rows)"
            state.draft = (
                f"Rows of {table.name}{clause.replace(' WHERE ', ' where ')} [{call.id}]:\n{listing}"
            )
        else:
            value = rows[0] if rows else "NULL"
            state.draft = (
                f"{aggregate} of {table.name}{clause.replace(' WHERE ', ' where ')}: {value} [{call.id}]"
            )


def cited_ids(text: str) -> list[str]:
    """The chunk ids (`doc#c0001`) and query ids (`sql#1`) a text cites, first citation first.

    Args:
        text: An answer.

    Returns:
        The distinct ids.
    """
    return list(dict.fromkeys(_CITATION.findall(text)))


class CheckCitationsStep(_StateStep):
    """Cross the draft's citations against what was actually retrieved; flag an uncited draft."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("check citations")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `citations`, `invalid_citations` and `citations_flagged`."""
        retrieved = set(input.retrieved_ids)
        cited = cited_ids(input.draft)
        input.citations = [c for c in cited if c in retrieved]
        input.invalid_citations = [c for c in cited if c not in retrieved]
        input.citations_flagged = not input.citations
        ctx.outcome = "flagged" if input.citations_flagged else "grounded"
        ctx.output = f"{len(input.citations)} valid, {len(input.invalid_citations)} not retrieved"
        return input


class CheckApprovalStep(_StateStep):
    """Apply the approval rules to the question and the draft."""

    __slots__ = ("rules",)

    def __init__(self, rules: Sequence[ApprovalRule]) -> None:
        super().__init__("approval rules")
        self.rules = tuple(rules)

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `needs_approval` and `approval_reasons`."""
        input.approval_reasons = [rule.name for rule in self.rules if rule.matches(input)]
        input.needs_approval = bool(input.approval_reasons)
        ctx.output = ", ".join(input.approval_reasons) or "none matched"
        return input


class _NeedsApproval(Step[FlowState, str]):
    """`hold` when an approval rule matched, else `release`."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("needs approval?")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> str:
        """The label."""
        return "hold" if input.needs_approval and not input.approved else "release"


class HoldStep(_StateStep):
    """Stop the run until a person approves it: the draft stays a draft."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("hold for approval")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set the outcome `awaiting_approval`."""
        input.outcome = "awaiting_approval"
        input.note = f"held by approval rule(s): {', '.join(input.approval_reasons)}"
        ctx.outcome = input.outcome
        return input


class ReleaseStep(_StateStep):
    """Release the draft as the answer: `answered`, or `unverified` when its citations were flagged."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("release")

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Set `answer` and the outcome."""
        input.answer = input.draft
        input.outcome = "unverified" if input.citations_flagged else "answered"
        if input.citations_flagged:
            input.note = "the answer cites nothing that was retrieved"
        ctx.outcome = input.outcome
        return input


class GroundedFlow(_StateStep):
    """The flow's top node (kind `flow`): runs the body and turns a budget stop into an outcome."""

    __slots__ = ("body",)
    node_kind = "flow"

    def __init__(self, body: Step[FlowState, FlowState], *, label: str = FLOW_NAME) -> None:
        super().__init__(label)
        self.body = body

    @property
    def children(self) -> tuple[Step[Any, Any], ...]:
        """The flow's body."""
        return (self.body,)

    def summarize_input(self, value: FlowState) -> str:
        """The question."""
        return value.question

    async def run(self, input: FlowState, ctx: WorkflowContext) -> FlowState:
        """Run the body; a budget stop ends the run `budget_exhausted` (a stop, not a failure)."""
        try:
            await ctx.run(self.body, input)
        except BudgetExhausted as exc:
            input.outcome = "budget_exhausted"
            input.note = str(exc)
        ctx.outcome = input.outcome
        return input


def build_grounded_flow(
    deps: GroundedDeps, *, classifier: Step[FlowState, str] | None = None
) -> GroundedFlow:
    """The grounded flow, composed from the engine's combinators.

    Args:
        deps: The index, the data source, the glossary, the config and the kind of leaves.
        classifier: A classifier to use instead of `ClassifyStep` (tests use it to return labels
            outside the closed set).

    Returns:
        The flow's top step; run it with `run_grounded` (or `run_reporting` on a `FlowState`).
    """
    config = deps.config
    release = Route(_NeedsApproval(), {"hold": HoldStep(), "release": ReleaseStep()}, label="approval")
    finish: Step[FlowState, FlowState] = Chain(
        CheckCitationsStep(), Chain(CheckApprovalStep(config.approval_rules), release), label="finish"
    )
    docs = _Branch(
        "docs",
        Chain(
            RetrievalLoop(RetrieveStep(deps), RephraseStep(deps), config.max_attempts),
            Route(
                _Relevant(),
                {"found": Chain(AnswerStep(deps), finish), "none": NoDocumentsStep(deps)},
                label="relevance",
            ),
        ),
    )
    data = _Branch(
        "data",
        Chain(
            QueryDataStep(deps), Route(_Drafted(), {"drafted": finish, "ended": _Stop()}, label="drafted?")
        ),
    )
    route = Route(
        classifier or ClassifyStep(deps),
        {"docs": docs, "data": data},
        fallback=_Branch("unsupported", DeclineStep()),
        fallback_label="unsupported",
        label="route",
    )
    return GroundedFlow(route)
