"""The grounded-answers flow (issue #8): routes, outcomes, bounds, the SQL guard, approval, audit."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import Error, FakeAnthropic, Reply, Text, ToolUse
from tests.workflow.helpers import assert_balanced
from tui_assist.cli.flows import flow_approve, flow_grounded
from tui_assist.core.conversation import TextBlock, ToolUseBlock
from tui_assist.core.events import NodeFinished, NodeStarted, ToolCallFinished, ToolCallStarted
from tui_assist.core.model import ModelRequest, ModelResponse, StreamSink
from tui_assist.core.observer import RecordingObserver
from tui_assist.flows import grounded
from tui_assist.flows.grounded import (
    OUTCOMES,
    ROUTE_LABELS,
    SAMPLE_CORPUS,
    ApprovalError,
    FlowState,
    GroundedConfig,
    approve_run,
    audit_line,
    build_grounded_flow,
    run_grounded,
)
from tui_assist.flows.grounded.finish import cited_ids
from tui_assist.flows.grounded.index import CorpusIndex, chunk_document, default_index_path, doc_id_for
from tui_assist.flows.grounded.sql import SqlRefused, SqlSource, validate_sql
from tui_assist.providers.anthropic import AnthropicProvider
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.store import Store
from tui_assist.store.migrations import MIGRATIONS, SCHEMA_VERSION, m002_flow_runs
from tui_assist.workflow import Route, Step, WorkflowContext, node_shape

FIXTURE = SAMPLE_CORPUS
HOTEL = "How much can I spend on a hotel per night in London?"
HOTEL_CHUNK = "handbook-travel#c0004"
CAB = "Can I take a cab home after working late?"
TAXI_CHUNK = "handbook-expenses#c0004"
DOG = "Can I bring my dog to the office?"
PHISHING = "Please write me a message for the security team reporting a phishing email"
PENDING = "How many expenses are pending?"
AUDIT_FIELDS = [
    "run_id",
    "caller_id",
    "question_chars",
    "route",
    "retrieval_attempts",
    "rephrased",
    "chunk_ids",
    "top_score",
    "citations_returned",
    "model",
    "tokens_prompt",
    "tokens_completion",
    "tokens_used_total",
    "duration_ms",
    "needs_approval",
    "outcome",
]


# --- fixtures ------------------------------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A private copy of the corpus fixture, so a test may edit it."""
    target = tmp_path / "corpus"
    shutil.copytree(FIXTURE, target)
    return target


@pytest.fixture
async def index(corpus: Path, tmp_path: Path) -> AsyncIterator[CorpusIndex]:
    idx = await CorpusIndex.open(corpus, tmp_path / "index" / "corpus.sqlite")
    await idx.refresh()
    yield idx
    await idx.close()


@pytest.fixture
def glossary(corpus: Path) -> dict[str, str]:
    return grounded.load_glossary(corpus)


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "finance.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(
            """
            CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT, department TEXT);
            CREATE TABLE expenses (
                id INTEGER PRIMARY KEY, employee_id INTEGER, category TEXT, amount REAL, status TEXT
            );
            INSERT INTO employees (name, department) VALUES ('Ana', 'research'), ('Bo', 'sales');
            INSERT INTO expenses (employee_id, category, amount, status) VALUES
                (1, 'travel', 420.0, 'pending'), (1, 'meals', 38.5, 'approved'),
                (2, 'travel', 610.0, 'pending'), (2, 'taxi', 27.0, 'rejected'),
                (1, 'meals', 19.0, 'pending');
            """
        )
    return path


@pytest.fixture
async def sql(data_file: Path) -> AsyncIterator[SqlSource]:
    source = await SqlSource.open(data_file)
    yield source
    await source.close()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = await Store.open(tmp_path / "data")
    yield s
    await s.close()


@pytest.fixture
async def sdk(fake: FakeAnthropic) -> AsyncIterator[AnthropicProvider]:
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url, stream_backoff=0.01)
    yield provider
    await provider.aclose()


def scripted(*replies: Any) -> ScriptedProvider:
    return ScriptedProvider(list(replies), model="scripted-model")


def label(name: str) -> str:
    return json.dumps({"label": name})


def rephrase(query: str) -> str:
    return json.dumps({"query": query})


def labels_of(events: list[Any], kind: type) -> list[str]:
    return [e.label for e in events if isinstance(e, kind)]


def outcome_of(events: list[Any], node_label: str) -> str | None:
    ids = {e.node_id for e in events if isinstance(e, NodeStarted) and e.label == node_label}
    return next(e.outcome for e in events if isinstance(e, NodeFinished) and e.node_id in ids)


# --- the closed sets -----------------------------------------------------------------------------


async def test_the_route_is_a_closed_set_with_an_explicit_decline(index: CorpusIndex) -> None:
    flow = build_grounded_flow(grounded.GroundedDeps(index=index))
    route = flow.body
    assert isinstance(route, Route)
    assert route.labels == ROUTE_LABELS == ("docs", "data", "unsupported")
    assert set(OUTCOMES) >= {
        "answered",
        "out_of_scope",
        "no_relevant_documents",
        "budget_exhausted",
        "awaiting_approval",
        "error",
        "cancelled",
        "unverified",
    }
    assert set(FlowState.model_fields) >= {
        "question",
        "caller",
        "route",
        "passages",
        "retrieval_attempts",
        "rephrased",
        "draft",
        "citations",
        "tokens_used",
        "needs_approval",
        "outcome",
    }


# --- rules leaves: every route and outcome -------------------------------------------------------


async def test_docs_route_answers_with_a_cited_passage(index: CorpusIndex, glossary: dict[str, str]) -> None:
    observer = RecordingObserver()
    run = await run_grounded(HOTEL, index=index, glossary=glossary, observer=observer)
    state = run.state
    assert (state.outcome, state.route, state.retrieval_attempts, state.rephrased) == (
        "answered",
        "docs",
        1,
        None,
    )
    assert state.passages[0].chunk_id == HOTEL_CHUNK and state.passages[0].score >= 0.5
    assert state.top_score == state.passages[0].score
    assert "London 180 GBP" in state.answer and state.answer == state.draft
    assert state.citations == [HOTEL_CHUNK] and state.invalid_citations == []
    assert not state.citations_flagged and not state.needs_approval
    assert (state.tokens_used, state.model) == (0, "rules")
    events = observer.events
    assert_balanced(events)
    first = events[0]
    assert isinstance(first, NodeStarted) and (first.node_kind, first.label) == ("flow", "grounded")
    assert node_shape(events) == (
        "grounded(Route(classify, docs(Chain(retrieval loop(retrieve #1), Route(relevant?, "
        "Chain(answer, Chain(check citations, Chain(approval rules, Route(needs approval?, release)))))))))"
    )
    assert outcome_of(events, "route") == "docs"
    assert outcome_of(events, "grounded") == "answered"


async def test_a_rephrased_retry_finds_what_the_first_search_missed(
    index: CorpusIndex, glossary: dict[str, str]
) -> None:
    observer = RecordingObserver()
    state = (await run_grounded(CAB, index=index, glossary=glossary, observer=observer)).state
    assert state.retrieval_attempts == 2
    assert state.rephrased == "Can I take a taxi home after working late?"
    assert (state.outcome, state.citations) == ("answered", [TAXI_CHUNK])
    assert "21:00" in state.answer
    assert labels_of(observer.events, NodeStarted)[6:9] == ["retrieve #1", "rephrase", "retrieve #2"]
    assert outcome_of(observer.events, "retrieve #1") == "below_floor"
    assert outcome_of(observer.events, "retrieve #2") == "found"


@pytest.mark.parametrize(
    "question", ["What is the capital of France?", "Write a poem about our travel policy"]
)
async def test_unsupported_questions_are_declined(
    index: CorpusIndex, glossary: dict[str, str], question: str
) -> None:
    observer = RecordingObserver()
    state = (await run_grounded(question, index=index, glossary=glossary, observer=observer)).state
    assert (state.outcome, state.route, state.retrieval_attempts, state.draft) == (
        "out_of_scope",
        "unsupported",
        0,
        "",
    )
    assert node_shape(observer.events) == "grounded(Route(classify, unsupported(decline)))"


async def test_nothing_above_the_floor_is_no_relevant_documents(
    index: CorpusIndex, glossary: dict[str, str]
) -> None:
    state = (await run_grounded(DOG, index=index, glossary=glossary)).state
    assert (state.outcome, state.route, state.passages, state.draft) == (
        "no_relevant_documents",
        "docs",
        [],
        "",
    )
    # the glossary has nothing to offer, so there is no point in a second identical search
    assert (state.retrieval_attempts, state.rephrased) == (1, None)
    assert state.top_score is not None and state.top_score < GroundedConfig().relevance_floor
    assert "relevance floor" in state.note


async def test_data_route_with_rules_runs_one_guarded_query(
    index: CorpusIndex, glossary: dict[str, str], sql: SqlSource
) -> None:
    observer = RecordingObserver()
    state = (await run_grounded(PENDING, index=index, glossary=glossary, sql=sql, observer=observer)).state
    assert (state.outcome, state.route) == ("answered", "data")
    [call] = state.sql_calls
    assert call.query == 'SELECT COUNT(*) FROM "expenses" WHERE "status" = \'pending\''
    assert (call.id, call.rows, call.error) == ("sql#1", 1, None)
    assert state.answer.endswith(": 3 [sql#1]") and state.citations == ["sql#1"]
    assert [e.name for e in observer.events if isinstance(e, ToolCallStarted)] == ["sql_query"]
    total = (await run_grounded("What is the total amount of travel expenses?", index=index, sql=sql)).state
    assert total.sql_calls[0].query == 'SELECT SUM("amount") FROM "expenses" WHERE "category" = \'travel\''
    assert "1030.0 [sql#1]" in total.answer
    # without a database the same question is a docs question (or nothing)
    docs = (await run_grounded(PENDING, index=index, glossary=glossary)).state
    assert docs.route != "data"


async def test_the_data_route_without_a_database_declines(index: CorpusIndex) -> None:
    provider = scripted(label("data"))
    state = (await run_grounded(PENDING, index=index, leaves="model", provider=provider)).state
    assert (state.route, state.outcome, state.sql_calls) == ("data", "out_of_scope", [])
    assert "database" in state.note and provider.remaining == 0


# --- the classifier's label is validated, never a new route --------------------------------------


class _Says(Step[FlowState, str]):
    def __init__(self, answer: str) -> None:
        super().__init__("classify")
        self.answer = answer

    async def run(self, input: FlowState, ctx: WorkflowContext) -> str:
        return self.answer


async def test_an_unknown_label_is_a_validation_failure(index: CorpusIndex, store: Store) -> None:
    observer = RecordingObserver()
    run = await run_grounded(HOTEL, index=index, classifier=_Says("billing"), observer=observer, store=store)
    state = run.state
    assert (state.outcome, state.route, state.passages, state.draft) == ("error", None, [], "")
    assert state.error is not None and state.error.startswith("validation failure:")
    assert "'billing'" in state.error and "'docs', 'data', 'unsupported'" in state.error
    assert labels_of(observer.events, NodeStarted) == ["grounded", "route", "classify"]  # no branch ran
    assert_balanced(observer.events)
    assert run.audit["outcome"] == "error" and run.audit["route"] is None
    row = await store.get_flow_run(state.run_id)
    assert row is not None and row.outcome == "error"


async def test_a_model_label_outside_the_set_fails_validation(index: CorpusIndex) -> None:
    provider = scripted(label("Finance"), "never used")
    state = (await run_grounded(HOTEL, index=index, leaves="model", provider=provider)).state
    assert (state.outcome, state.route) == ("error", None)
    assert state.error is not None and "'finance'" in state.error
    assert len(provider.requests) == 1 and provider.remaining == 1


# --- model leaves (scripted provider) ------------------------------------------------------------


async def test_model_leaves_answer_with_citations_and_count_tokens(index: CorpusIndex) -> None:
    provider = scripted(label("docs"), f"London hotels are capped at 180 GBP a night [{HOTEL_CHUNK}].")
    observer = RecordingObserver()
    state = (
        await run_grounded(HOTEL, index=index, leaves="model", provider=provider, observer=observer)
    ).state
    assert (state.outcome, state.citations, state.model) == ("answered", [HOTEL_CHUNK], "scripted-model")
    answer_request = provider.requests[1]
    assert f"[{HOTEL_CHUNK}]" in answer_request.messages[0].text and HOTEL in answer_request.messages[0].text
    assert state.tokens_prompt > 0 and state.tokens_completion > 0
    assert state.tokens_used == state.tokens_prompt + state.tokens_completion <= state.token_budget
    assert "".join(e.text for e in observer.events if e.kind == "text_delta").endswith(
        "a night [handbook-travel#c0004]."
    )
    assert_balanced(observer.events)


async def test_the_retry_cap_is_the_loop_counter_not_the_model(index: CorpusIndex) -> None:
    # the model would happily rephrase forever: only one rephrasing is ever asked for
    provider = scripted(
        label("docs"), rephrase("dog office pets policy"), rephrase("animals at work"), rephrase("pets")
    )
    observer = RecordingObserver()
    state = (await run_grounded(DOG, index=index, leaves="model", provider=provider, observer=observer)).state
    assert (state.outcome, state.retrieval_attempts, state.rephrased) == (
        "no_relevant_documents",
        2,
        "dog office pets policy",
    )
    assert len(provider.requests) == 2 and provider.remaining == 2
    assert labels_of(observer.events, NodeStarted).count("rephrase") == 1
    # a larger cap is honoured exactly, and still counted by the loop
    provider = scripted(label("docs"), rephrase("dogs"), rephrase("pets"), rephrase("animals"))
    state = (
        await run_grounded(
            DOG, index=index, leaves="model", provider=provider, config=GroundedConfig(max_attempts=3)
        )
    ).state
    assert state.retrieval_attempts == 3 and provider.remaining == 1


async def test_the_model_rephrasing_can_rescue_a_question(index: CorpusIndex) -> None:
    provider = scripted(
        label("docs"), rephrase("annual leave days"), "You get 25 days [handbook-leave#c0001]."
    )
    state = (
        await run_grounded("How much vacation do I get?", index=index, leaves="model", provider=provider)
    ).state
    assert (state.outcome, state.retrieval_attempts, state.rephrased) == ("answered", 2, "annual leave days")
    assert state.passages[0].chunk_id == "handbook-leave#c0001"


async def test_an_answer_citing_nothing_retrieved_is_flagged(index: CorpusIndex) -> None:
    provider = scripted(
        label("docs"), "Hotels are capped at 500 GBP [handbook-travel#c0099] [hr-secrets#c0001]."
    )
    state = (await run_grounded(HOTEL, index=index, leaves="model", provider=provider)).state
    assert state.citations == [] and state.invalid_citations == ["handbook-travel#c0099", "hr-secrets#c0001"]
    assert state.citations_flagged and state.outcome == "unverified"
    assert state.answer == state.draft  # returned, but marked
    provider = scripted(label("docs"), "Hotels are capped [handbook-travel#c0004].")
    assert (
        await run_grounded(HOTEL, index=index, leaves="model", provider=provider)
    ).state.outcome == "answered"
    mixed = scripted(label("docs"), f"Capped [{HOTEL_CHUNK}], breakfast too [handbook-travel#c0042].")
    state = (await run_grounded(HOTEL, index=index, leaves="model", provider=mixed)).state
    assert (state.citations, state.invalid_citations, state.citations_flagged) == (
        [HOTEL_CHUNK],
        ["handbook-travel#c0042"],
        False,
    )
    uncited = scripted(label("docs"), "Hotels in London are capped at 180 GBP.")
    state = (await run_grounded(HOTEL, index=index, leaves="model", provider=uncited)).state
    assert (state.citations, state.citations_flagged, state.outcome) == ([], True, "unverified")


def test_cited_ids_are_parsed_from_brackets_and_text() -> None:
    text = "A [handbook-travel#c0004], B [a-b#c0001, sql#2] and remote-work#c0001; not x#c12 or #c0001."
    assert cited_ids(text) == ["handbook-travel#c0004", "a-b#c0001", "sql#2", "remote-work#c0001"]


async def test_model_data_route_uses_the_guarded_tool(
    index: CorpusIndex, sql: SqlSource, data_file: Path
) -> None:
    provider = scripted(
        label("data"),
        [ToolUseBlock("t1", "sql_query", {"query": "DELETE FROM expenses"})],
        [
            ToolUseBlock(
                "t2", "sql_query", {"query": "SELECT COUNT(*) FROM expenses WHERE status = 'pending'"}
            )
        ],
        [TextBlock("Three expenses are pending [sql#2].")],
    )
    observer = RecordingObserver()
    state = (
        await run_grounded(
            PENDING, index=index, sql=sql, leaves="model", provider=provider, observer=observer
        )
    ).state
    assert (state.outcome, state.route, state.citations) == ("answered", "data", ["sql#2"])
    refused, counted = state.sql_calls
    assert refused.error is not None and refused.error.startswith("refused:")
    assert (counted.rows, counted.error) == (1, None)
    second = provider.requests[2].messages[-1].content[0]
    assert getattr(second, "is_error", False) and "refused" in getattr(second, "content", "")
    assert [t.name for t in provider.requests[1].tools] == ["sql_query"]
    finished = [e for e in observer.events if isinstance(e, ToolCallFinished)]
    assert [e.is_error for e in finished] == [True, False]
    with sqlite3.connect(data_file) as db:
        assert db.execute("SELECT COUNT(*) FROM expenses").fetchone() == (5,)


async def test_the_data_route_is_bounded_too(index: CorpusIndex, sql: SqlSource) -> None:
    query = [ToolUseBlock("t", "sql_query", {"query": "SELECT 1"})]
    provider = scripted(label("data"), query, query, query, query, query)
    state = (
        await run_grounded(
            PENDING,
            index=index,
            sql=sql,
            leaves="model",
            provider=provider,
            config=GroundedConfig(max_data_calls=3),
        )
    ).state
    assert state.outcome == "error" and "3 model calls" in (state.error or "")
    assert len(provider.requests) == 4 and len(state.sql_calls) == 3
    assert "answer now" in provider.requests[3].messages[-1].content[0].content  # type: ignore[union-attr]


# --- the budget is checked before the spend ------------------------------------------------------


async def test_the_budget_stops_a_run_before_the_spend(index: CorpusIndex, store: Store) -> None:
    provider = scripted(label("docs"), "never sent")
    budget = 900  # the classification fits; the answer (passages + 1024 reply tokens) does not
    run = await run_grounded(
        HOTEL,
        index=index,
        leaves="model",
        provider=provider,
        config=GroundedConfig(token_budget=budget),
        store=store,
    )
    state = run.state
    assert state.outcome == "budget_exhausted"
    assert len(provider.requests) == 1 and provider.remaining == 1  # the answer call was never made
    assert 0 < state.tokens_used <= budget and state.draft == ""
    assert state.passages and state.passages[0].chunk_id == HOTEL_CHUNK  # the work before the stop is kept
    assert "would be crossed" in state.note
    assert run.audit["outcome"] == "budget_exhausted" and run.audit["tokens_used_total"] == state.tokens_used


async def test_a_budget_too_small_for_the_first_call_spends_nothing(index: CorpusIndex) -> None:
    provider = scripted(label("docs"))
    observer = RecordingObserver()
    state = (
        await run_grounded(
            HOTEL,
            index=index,
            leaves="model",
            provider=provider,
            observer=observer,
            config=GroundedConfig(token_budget=50),
        )
    ).state
    assert (state.outcome, state.tokens_used, len(provider.requests), state.route) == (
        "budget_exhausted",
        0,
        0,
        None,
    )
    assert outcome_of(observer.events, "grounded") == "budget_exhausted"
    assert_balanced(observer.events)


async def test_the_budget_is_checked_inside_the_retrieval_loop(index: CorpusIndex) -> None:
    provider = scripted(label("docs"), rephrase("pets"))
    classify_only = 330  # room for the classification, not for a rephrasing as well
    state = (
        await run_grounded(
            DOG,
            index=index,
            leaves="model",
            provider=provider,
            config=GroundedConfig(token_budget=classify_only),
        )
    ).state
    assert (state.outcome, state.retrieval_attempts, len(provider.requests)) == ("budget_exhausted", 1, 1)
    assert state.tokens_used <= classify_only


# --- approval holds delivery ---------------------------------------------------------------------


async def test_approval_then_completion(
    index: CorpusIndex, glossary: dict[str, str], store: Store, tmp_path: Path
) -> None:
    delivered: list[str] = []

    async def deliver(state: FlowState) -> None:
        delivered.append(state.answer)

    audit_path = tmp_path / "audit.jsonl"
    held = await run_grounded(
        PHISHING, index=index, glossary=glossary, store=store, deliver=deliver, audit_path=audit_path
    )
    state = held.state
    assert (state.outcome, state.needs_approval, state.approved) == ("awaiting_approval", True, False)
    assert state.approval_reasons == ["drafts_message", "email_format"]
    assert state.draft.startswith("Subject: ") and "[handbook-security#c0004]" in state.draft
    assert state.answer == "" and delivered == []  # nothing is sent before the approval
    row = await store.get_flow_run(state.run_id[:6])
    assert row is not None and row.outcome == "awaiting_approval" and row.state["draft"] == state.draft
    assert [r.run_id for r in await store.flow_runs(outcome="awaiting_approval")] == [state.run_id]

    observer = RecordingObserver()
    done = await approve_run(
        state.run_id, store=store, observer=observer, deliver=deliver, audit_path=audit_path
    )
    assert (done.state.outcome, done.state.approved, done.state.answer) == ("answered", True, state.draft)
    assert delivered == [state.draft]
    assert node_shape(observer.events) == "grounded (approved)(release)"
    row = await store.get_flow_run(state.run_id)
    assert row is not None and row.outcome == "answered" and row.audit["outcome"] == "answered"
    lines = [line for line in await store.flow_audit_lines() if line["run_id"] == state.run_id]
    assert len(lines) == 1 and lines[0]["needs_approval"] is True and lines[0]["outcome"] == "answered"
    assert [json.loads(x)["outcome"] for x in audit_path.read_text().splitlines()] == [
        "awaiting_approval",
        "answered",
    ]
    with pytest.raises(ApprovalError, match="answered, not awaiting approval"):
        await approve_run(state.run_id, store=store)
    with pytest.raises(ApprovalError, match="no flow run"):
        await approve_run("nope", store=store)
    assert delivered == [state.draft]


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("Book a flight to New York for next week", "requests_action"),
        ("Draft an email to my manager asking for approval of my business travel", "drafts_message"),
    ],
)
async def test_approval_rules_are_configurable(
    index: CorpusIndex, glossary: dict[str, str], question: str, reason: str
) -> None:
    state = (await run_grounded(question, index=index, glossary=glossary)).state
    assert state.outcome == "awaiting_approval" and reason in state.approval_reasons
    free = GroundedConfig(approval_rules=())
    state = (await run_grounded(question, index=index, glossary=glossary, config=free)).state
    assert state.outcome == "answered" and not state.needs_approval
    strict = GroundedConfig(approval_rules=(grounded.ApprovalRule("anything", r"\S", "question"),))
    assert (await run_grounded(HOTEL, index=index, config=strict)).state.outcome == "awaiting_approval"


# --- the audit line ------------------------------------------------------------------------------


async def test_the_audit_line_has_its_fields_and_no_text(
    index: CorpusIndex, glossary: dict[str, str], store: Store, tmp_path: Path
) -> None:
    provider = scripted(label("docs"), f"London hotels are capped at 180 GBP a night [{HOTEL_CHUNK}].")
    run = await run_grounded(
        HOTEL,
        index=index,
        leaves="model",
        provider=provider,
        store=store,
        caller="u-17",
        audit_path=tmp_path / "a.jsonl",
    )
    line = run.audit
    assert list(line) == AUDIT_FIELDS
    assert line == audit_line(run.state)
    assert line["run_id"] == run.state.run_id and line["caller_id"] == "u-17"
    assert line["question_chars"] == len(HOTEL)
    assert (line["route"], line["retrieval_attempts"], line["rephrased"]) == ("docs", 1, False)
    assert line["chunk_ids"][0] == HOTEL_CHUNK and line["top_score"] == run.state.top_score
    assert (line["citations_returned"], line["model"], line["needs_approval"], line["outcome"]) == (
        1,
        "scripted-model",
        False,
        "answered",
    )
    assert line["tokens_used_total"] == line["tokens_prompt"] + line["tokens_completion"] > 0
    assert isinstance(line["duration_ms"], int)
    stored = json.dumps(await store.flow_audit_lines())
    with sqlite3.connect(store.path) as raw:
        stored += json.dumps(raw.execute("SELECT * FROM flow_audit").fetchall())
    stored += (tmp_path / "a.jsonl").read_text()
    for needle in (HOTEL, "London", "hotel", "180 GBP", run.state.answer, run.state.passages[0].text[:40]):
        assert needle not in stored
    # the run's own record (like a turn's) does keep the text, to resume or review it
    row = await store.get_flow_run(run.state.run_id)
    assert row is not None and row.state["question"] == HOTEL and row.audit == line


async def test_flow_outcomes_are_counted_per_week(
    index: CorpusIndex, glossary: dict[str, str], store: Store
) -> None:
    for question in (HOTEL, CAB, DOG, "What is the capital of France?", PHISHING):
        await run_grounded(question, index=index, glossary=glossary, store=store)
    [week] = await store.stats()
    assert (week.turns, week.flow_runs) == (0, 5)
    assert week.flow_outcomes == {
        "answered": 2,
        "awaiting_approval": 1,
        "no_relevant_documents": 1,
        "out_of_scope": 1,
    }
    from tui_assist.cli import history as store_commands

    out = io.StringIO()
    await store_commands.stats(store, out, as_json=True)
    [row] = json.loads(out.getvalue())
    assert row["flow_runs"] == 5 and row["flow_outcomes"]["answered"] == 2
    out = io.StringIO()
    await store_commands.stats(store, out)
    assert "FLOW RUNS" in out.getvalue() and "AWAITING_APPROVAL" in out.getvalue()


# --- the read-only SQL guard ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "INSERT INTO expenses (amount) VALUES (1)",
        "UPDATE expenses SET amount = 0",
        "DELETE FROM expenses",
        "DROP TABLE expenses",
        "CREATE TABLE x (a)",
        "REPLACE INTO expenses (id) VALUES (1)",
        "SELECT 1; DELETE FROM expenses",
        "SELECT 1; SELECT 2",
        "SELECT ';'; DROP TABLE expenses",
        "SELECT 1 /* ; */; DROP TABLE expenses -- ",
        "ATTACH DATABASE ':memory:' AS other",
        "ATTACH 'other.db' AS o; SELECT 1",
        "DETACH other",
        "PRAGMA user_version = 7",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA query_only = OFF",
        "VACUUM",
        "BEGIN",
        "",
        "   ;  ",
    ],
)
async def test_the_sql_guard_refuses_anything_but_one_read(
    sql: SqlSource, data_file: Path, query: str
) -> None:
    result = await sql.query(query)
    assert not result.ok and result.error is not None and result.error.startswith("refused")
    with sqlite3.connect(data_file) as db:
        assert db.execute("SELECT COUNT(*) FROM expenses").fetchone() == (5,)
        assert db.execute("PRAGMA user_version").fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone() == (2,)


@pytest.mark.parametrize(
    "query",
    [
        "WITH doomed AS (SELECT id FROM expenses) DELETE FROM expenses WHERE id IN (SELECT id FROM doomed)",
        "WITH t AS (SELECT 1) INSERT INTO expenses (amount) SELECT * FROM t",
        "SELECT load_extension('evil')",
        "SELECT * FROM pragma_table_info('expenses')",
    ],
)
async def test_the_authorizer_refuses_writes_that_look_like_reads(
    sql: SqlSource, data_file: Path, query: str
) -> None:
    result = await sql.query(query)
    assert result.error is not None and result.error.startswith("refused: only reading is allowed")
    with sqlite3.connect(data_file) as db:
        assert db.execute("SELECT COUNT(*) FROM expenses").fetchone() == (5,)


async def test_reads_run_with_row_and_time_limits(data_file: Path) -> None:
    source = await SqlSource.open(data_file, max_rows=2, timeout=0.2)
    try:
        few = await source.query("SELECT id, category FROM expenses ORDER BY id;")
        assert (few.columns, few.rows, few.truncated) == (
            ("id", "category"),
            ((1, "travel"), (2, "meals")),
            True,
        )
        assert "truncated" in few.to_text()
        literal = await source.query(
            "SELECT 'a;b' AS x, \"category\" FROM expenses WHERE status = 'it''s' -- done;"
        )
        assert literal.ok and literal.rows == ()
        endless = await source.query(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n"
        )
        assert endless.error is not None and "0.2 s limit" in endless.error
        assert endless.duration_ms < 20_000  # a hang guard: the limit stopped a query that never ends
        assert (await source.query("SELECT COUNT(*) FROM expenses")).rows == ((5,),)  # still usable
    finally:
        await source.close()


async def test_the_database_is_opened_read_only(data_file: Path, sql: SqlSource) -> None:
    conn = sql._conn  # the raw handle, bypassing the validator and the authorizer
    conn.set_authorizer(None)
    with pytest.raises(sqlite3.OperationalError, match="readonly|read-only|query_only|attempt to write"):
        conn.execute("DELETE FROM expenses")
    assert [t.name for t in await sql.tables()] == ["employees", "expenses"]


def test_validate_sql_keeps_one_statement() -> None:
    assert validate_sql("  SELECT 1;  ") == "SELECT 1"
    assert validate_sql("with a as (select 1) select * from a") == "with a as (select 1) select * from a"
    with pytest.raises(SqlRefused, match="single statement"):
        validate_sql("SELECT 1; SELECT 2")
    with pytest.raises(SqlRefused, match="not EXPLAIN"):
        validate_sql("EXPLAIN SELECT 1")
    with pytest.raises(SqlRefused, match="longer than"):
        validate_sql("SELECT " + "1," * 3000 + "1")


async def test_a_missing_or_invalid_database_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await SqlSource.open(tmp_path / "nope.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database " * 100)
    with pytest.raises(sqlite3.DatabaseError):
        await SqlSource.open(junk)


# --- the corpus index ----------------------------------------------------------------------------


async def test_incremental_reindex_touches_only_what_changed(corpus: Path, tmp_path: Path) -> None:
    path = tmp_path / "idx.sqlite"
    async with await CorpusIndex.open(corpus, path) as idx:
        first = await idx.refresh()
        assert first.added == (
            "handbook-expenses",
            "handbook-leave",
            "handbook-security",
            "handbook-travel",
            "remote-work",
        )
        assert first.chunks == await idx.chunk_count() == 20
        again = await idx.refresh()
        assert (again.changed, again.unchanged) == (False, 5)

        travel = corpus / "handbook-travel.md"
        travel.write_text(travel.read_text().replace("London 180 GBP", "London 195 GBP"))
        os.utime(travel, ns=(1, 1_000_000_000))  # a new mtime, whatever the clock's resolution
        changed = await idx.refresh()
        assert (changed.added, changed.updated, changed.removed, changed.unchanged) == (
            (),
            ("handbook-travel",),
            (),
            4,
        )
        hits = (await idx.search("London hotel limit", floor=0.5)).hits
        assert hits[0].chunk.chunk_id == HOTEL_CHUNK and "195 GBP" in hits[0].chunk.text
        assert await idx.document_frequency("195") == 1 and await idx.document_frequency("180") == 0

        leave = corpus / "handbook-leave.md"
        os.utime(leave, ns=(2, 2_000_000_000))  # touched, same content: re-hashed, not re-chunked
        (corpus / "remote-work.txt").unlink()
        (corpus / "notes").mkdir()
        (corpus / "notes" / "Car Pool.md").write_text("# Car pool\n\nShare rides to the office on Fridays.\n")
        (corpus / ".hidden.md").write_text("# Secret\n\nzanzibar is never indexed\n")
        (corpus / "data.csv").write_text("a,b\n")
        last = await idx.refresh()
        assert (last.added, last.updated, last.removed, last.unchanged) == (
            ("notes-car-pool",),
            (),
            ("remote-work",),
            4,
        )
        assert await idx.chunk("notes-car-pool#c0001") is not None
        assert await idx.chunk("remote-work#c0001") is None
        assert await idx.document_frequency("zanzibar") == 0
    # reopening keeps the index; pointing the same file at another folder empties it
    async with await CorpusIndex.open(corpus, path) as idx:
        assert (await idx.refresh()).changed is False
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# A\n\nAlpha beta.\n")
    async with await CorpusIndex.open(other, path) as idx:
        assert (await idx.refresh()).added == ("a",) and await idx.chunk_count() == 1


def test_chunking_follows_headings_and_paragraphs() -> None:
    text = "# Guide\n\nIntro line.\n\n## Part one\n\n" + "word " * 150 + "end.\n\n### Deeper\n\nDeep text.\n"
    chunks = chunk_document("guide", text, fallback_title="guide", max_words=60)
    assert [c.chunk_id for c in chunks][:2] == ["guide#c0001", "guide#c0002"]
    assert {c.title for c in chunks} == {"Guide"}
    assert chunks[0].heading == "" and chunks[-1].heading == "Part one > Deeper"
    assert all(len(c.text.split()) <= 151 for c in chunks)
    assert doc_id_for("Policies/Travel Guide.md") == "policies-travel-guide"


async def test_search_accepts_any_text(index: CorpusIndex) -> None:
    for query in ('"hotel" AND -london* NEAR(', "", "???", "SELECT * FROM chunks"):
        result = await index.search(query)
        assert result.top_score >= 0.0
    assert (await index.search("zebra quasar")).hits == ()


def test_the_default_index_lives_under_the_data_dir(tmp_path: Path) -> None:
    path = default_index_path(tmp_path / "data", FIXTURE)
    assert path.parent == tmp_path / "data" / "grounded" and path.suffix == ".sqlite"
    assert path == default_index_path(tmp_path / "data", FIXTURE / ".")


# --- persistence ---------------------------------------------------------------------------------


async def test_the_flow_migration_is_numbered_and_idempotent(tmp_path: Path) -> None:
    import aiosqlite

    from tui_assist.store.migrations import migrate

    assert MIGRATIONS[1] is m002_flow_runs and SCHEMA_VERSION >= 2
    async with aiosqlite.connect(tmp_path / "t.db", isolation_level=None) as db:
        await migrate(db)
        await migrate(db)
        await db.execute("BEGIN")
        await m002_flow_runs(db)
        await db.execute("COMMIT")
        names = {r[0] for r in await db.execute_fetchall("SELECT name FROM sqlite_master")}
    assert {"flow_runs", "flow_audit", "flow_audit_by_at"} <= names


async def test_a_cancelled_run_is_stored_as_cancelled(index: CorpusIndex, store: Store) -> None:
    started = asyncio.Event()

    class Hanging:
        name, model = "hanging", "hanging-model"

        async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
            started.set()
            await asyncio.sleep(60)
            raise AssertionError("not reached")

        async def aclose(self) -> None:
            pass

    observer = RecordingObserver()
    task = asyncio.create_task(
        run_grounded(
            HOTEL,
            index=index,
            leaves="model",
            provider=Hanging(),
            store=store,
            run_id="r-cancel",
            observer=observer,
        )
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    row = await store.get_flow_run("r-cancel")
    assert row is not None and row.outcome == "cancelled" and row.audit["outcome"] == "cancelled"
    assert_balanced(observer.events)


# --- the real SDK against the loopback server ----------------------------------------------------


async def test_sdk_answers_with_citations(
    fake: FakeAnthropic, sdk: AnthropicProvider, index: CorpusIndex, store: Store
) -> None:
    fake.add(
        Reply('{"label": "docs"}'), Reply(f"London hotels are capped at 180 GBP a night [{HOTEL_CHUNK}].")
    )
    observer = RecordingObserver()
    run = await run_grounded(HOTEL, index=index, leaves="model", provider=sdk, store=store, observer=observer)
    state = run.state
    assert (state.outcome, state.citations, state.model) == ("answered", [HOTEL_CHUNK], "claude-sonnet-4-6")
    classify, answer = fake.requests
    assert "docs" in classify.all_text() and HOTEL in classify.all_text()
    assert f"[{HOTEL_CHUNK}]" in answer.all_text() and answer.body["stream"] is True
    assert state.tokens_used == state.tokens_prompt + state.tokens_completion > 0
    assert run.audit["tokens_used_total"] == state.tokens_used and run.audit["model"] == "claude-sonnet-4-6"
    assert_balanced(observer.events)


async def test_sdk_budget_stop_makes_no_further_request(
    fake: FakeAnthropic, sdk: AnthropicProvider, index: CorpusIndex
) -> None:
    fake.add(Reply('{"label": "docs"}'), Reply("never sent"))
    state = (
        await run_grounded(
            HOTEL, index=index, leaves="model", provider=sdk, config=GroundedConfig(token_budget=900)
        )
    ).state
    assert state.outcome == "budget_exhausted" and len(fake.requests) == 1
    assert state.tokens_used <= 900


async def test_sdk_invalid_label_and_provider_errors(
    fake: FakeAnthropic, sdk: AnthropicProvider, index: CorpusIndex
) -> None:
    fake.add(Reply('{"label": "weather"}'))
    state = (await run_grounded(HOTEL, index=index, leaves="model", provider=sdk)).state
    assert (state.outcome, state.route) == ("error", None) and "validation failure" in (state.error or "")
    fake.add(Error(400, message="bad request here"))
    state = (await run_grounded(HOTEL, index=index, leaves="model", provider=sdk)).state
    assert state.outcome == "error" and "bad request here" in (state.error or "")


async def test_sdk_data_route_round_trips_tool_results(
    fake: FakeAnthropic, sdk: AnthropicProvider, index: CorpusIndex, sql: SqlSource
) -> None:
    fake.add(
        Reply('{"label": "data"}'),
        Reply([Text("Let me check."), ToolUse("sql_query", {"query": "ATTACH ':memory:' AS x"})]),
        Reply([ToolUse("sql_query", {"query": "SELECT SUM(amount) FROM expenses WHERE status = 'pending'"})]),
        Reply("Pending expenses add up to 1049.0 [sql#2]."),
    )
    state = (
        await run_grounded(
            "What is the total of pending expenses?", index=index, sql=sql, leaves="model", provider=sdk
        )
    ).state
    assert (state.outcome, state.route, state.citations) == ("answered", "data", ["sql#2"])
    assert [c.error is None for c in state.sql_calls] == [False, True]
    results = [m for m in fake.requests[2].messages if m["role"] == "user"][-1]["content"]
    assert results[0]["type"] == "tool_result" and results[0]["is_error"] is True
    assert "1049.0" in fake.requests[3].all_text()
    assert [t["name"] for t in fake.requests[1].tools] == ["sql_query"]


async def test_sdk_rephrase_retry_is_capped(
    fake: FakeAnthropic, sdk: AnthropicProvider, index: CorpusIndex
) -> None:
    fake.add(Reply('{"label": "docs"}'), Reply('{"query": "pets at the office"}'), Reply('{"query": "x"}'))
    state = (await run_grounded(DOG, index=index, leaves="model", provider=sdk)).state
    assert (state.outcome, state.retrieval_attempts, len(fake.requests)) == ("no_relevant_documents", 2, 2)


# --- the command functions -----------------------------------------------------------------------


async def _grounded(store: Store, **kwargs: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    params: dict[str, Any] = {"data": None, "as_json": False, "leaves": "rules"} | kwargs
    code = await flow_grounded(store=store, out=out, err=err, **params)
    return code, out.getvalue(), err.getvalue()


async def _approve(store: Store, run_id: str, **kwargs: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await flow_approve(run_id=run_id, store=store, out=out, err=err, **kwargs)
    return code, out.getvalue(), err.getvalue()


async def test_flow_grounded_prints_the_answer_and_its_sources(corpus: Path, store: Store) -> None:
    code, out, err = await _grounded(store, corpus=corpus, question=HOTEL)
    assert code == 0 and err == ""
    assert "London 180 GBP" in out
    assert f"Sources:\n  [{HOTEL_CHUNK}] Business travel > Hotels" in out
    assert default_index_path(store.path.parent, corpus).is_file()  # the index is cached in the data dir


async def test_flow_grounded_json_holds_the_state_and_the_audit_line(
    corpus: Path, data_file: Path, store: Store
) -> None:
    code, out, _ = await _grounded(store, corpus=corpus, data=data_file, question=PENDING, as_json=True)
    assert code == 0
    result = json.loads(out)
    assert set(FlowState.model_fields) | {"audit"} == set(result)
    assert (result["outcome"], result["route"], result["citations"]) == ("answered", "data", ["sql#1"])
    assert list(result["audit"]) == AUDIT_FIELDS and result["audit"]["caller_id"] == "cli"
    for question, outcome in (
        ("What is the capital of France?", "out_of_scope"),
        (DOG, "no_relevant_documents"),
    ):
        code, out, _ = await _grounded(store, corpus=corpus, question=question, as_json=True)
        assert code == 0 and json.loads(out)["outcome"] == outcome
    code, out, _ = await _grounded(store, corpus=corpus, question=DOG)
    assert out.startswith("No relevant documents: ")


async def test_flow_grounded_then_flow_approve(corpus: Path, store: Store) -> None:
    code, out, err = await _grounded(store, corpus=corpus, question=PHISHING, as_json=True)
    held = json.loads(out)
    assert code == 0 and held["outcome"] == "awaiting_approval" and held["answer"] == ""
    assert f"flow approve {held['run_id']}" in err
    code, out, _ = await _grounded(store, corpus=corpus, question=PHISHING)
    assert out.startswith("Draft held for approval (drafts_message, email_format); nothing was sent.")
    code, out, err = await _approve(store, held["run_id"])
    assert code == 0 and out.startswith("Subject: Information security: Phishing") and err == ""
    code, _, err = await _approve(store, held["run_id"])
    assert code == 2 and "not awaiting approval" in err
    code, _, err = await _approve(store, "does-not-exist")
    assert code == 2 and "no flow run" in err
    pending = [r for r in await store.flow_runs(outcome="awaiting_approval")]
    assert len(pending) == 1  # the second (text) run still waits
    code, out, _ = await _approve(store, pending[0].run_id, as_json=True)
    assert code == 0 and json.loads(out)["outcome"] == "answered" and json.loads(out)["approved"] is True


async def test_flow_grounded_usage_and_provider_errors(
    corpus: Path, tmp_path: Path, store: Store, fake: FakeAnthropic
) -> None:
    cases = [
        {"corpus": tmp_path / "missing", "question": HOTEL},
        {"corpus": corpus, "question": "   "},
        {"corpus": corpus, "question": HOTEL, "leaves": "magic"},
        {"corpus": corpus, "question": HOTEL, "leaves": "model"},
        {"corpus": corpus, "question": HOTEL, "data": tmp_path / "missing.sqlite"},
    ]
    for case in cases:
        code, out, err = await _grounded(store, **case)
        assert code == 2 and out == "" and not err.startswith("flow grounded") and len(err.splitlines()) == 1
    bad = tmp_path / "bad"
    shutil.copytree(corpus, bad)
    (bad / "glossary.json").write_text("[1, 2]")
    assert (await _grounded(store, corpus=bad, question=HOTEL))[0] == 2

    def broken() -> Any:
        raise RuntimeError("no API key")

    code, _, err = await _grounded(
        store, corpus=corpus, question=HOTEL, leaves="model", provider_factory=broken
    )
    assert code == 1 and "no API key" in err

    fake.add(Error(400, message="nope"))

    def factory() -> AnthropicProvider:
        return AnthropicProvider(api_key="test", base_url=fake.base_url, stream_backoff=0.01)

    code, out, err = await _grounded(
        store, corpus=corpus, question=HOTEL, leaves="model", provider_factory=factory, as_json=True
    )
    assert code == 1 and json.loads(out)["outcome"] == "error" and err.startswith("error: ")


async def test_flow_grounded_model_leaves_through_the_sdk(
    corpus: Path, store: Store, fake: FakeAnthropic
) -> None:
    fake.add(Reply('{"label": "docs"}'), Reply("25 days a year [handbook-leave#c0001]."))

    def factory() -> AnthropicProvider:
        return AnthropicProvider(api_key="test", base_url=fake.base_url, stream_backoff=0.01)

    code, out, _ = await _grounded(
        store,
        corpus=corpus,
        question="How many days of annual leave do I get?",
        leaves="model",
        provider_factory=factory,
        as_json=True,
    )
    result = json.loads(out)
    assert code == 0 and result["outcome"] == "answered" and result["citations"] == ["handbook-leave#c0001"]
    assert result["audit"]["model"] == "claude-sonnet-4-6" and result["audit"]["tokens_used_total"] > 0
