"""Issue #7: the docs domain, the bounded decision runtime, the control policies and `bench docs`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import FakeAnthropic, Reply, Text, ToolUse
from tui_assist.cli.flows import bench_docs
from tui_assist.core.conversation import TextBlock, ToolResultBlock, ToolUseBlock
from tui_assist.core.events import NodeFinished, NodeStarted, ToolCallFinished, ToolCallStarted
from tui_assist.core.model import ModelRequest, ProviderError
from tui_assist.core.observer import RecordingObserver
from tui_assist.flows.docs.bench import SCRIPTED_POLICIES, outcome, run_bench, run_policy, select_cases
from tui_assist.flows.docs.corpus import (
    STOP_WORDS,
    Case,
    Corpus,
    DocsToolError,
    FixtureError,
    Hit,
    Page,
    Task,
    load_fixtures,
    packaged_fixture_dir,
    validate_task,
    words,
)
from tui_assist.flows.docs.model_policy import MODEL_TOOLS, model_loop
from tui_assist.flows.docs.policies import (
    ADAPTIVE_LIMITS,
    SCRIPTED_LIMITS,
    Limits,
    adaptive_decide,
    adaptive_loop,
    defers_to,
    keyword_route,
    revise_query,
    scripted_decide,
    scripted_loop,
    workflow,
)
from tui_assist.flows.docs.runtime import (
    DocsRuntime,
    LoopState,
    Observation,
    PolicyResult,
    Proposal,
    Read,
    Search,
    flow_outcome,
)
from tui_assist.providers.anthropic import AnthropicProvider
from tui_assist.providers.scripted import ScriptedProvider

# --------------------------------------------------------------------------- helpers

PAGES = [
    Page("deploy-v1", "v1", "Deploy (v1)", "Ship a tagged build to staging.", "docuctl deploy --tag x"),
    Page("rollback-v1", "v1", "Rollback (v1)", "Go back to the previous build.", "docuctl rollback"),
    Page("deploy-v2", "v2", "Deploy (v2)", "Create a deploy on staging.", "docuctl deploy create"),
    Page("rollback-v2", "v2", "Rollback (v2)", "Return to the previous release.", "docuctl rollback run"),
    Page("logs-v2", "v2", "Logs (v2)", "Stream logs of a release.", "docuctl logs stream"),
]
GLOSSARY = {"restore": "rollback", "log": "logs"}


@pytest.fixture
def corpus() -> Corpus:
    return Corpus(PAGES, GLOSSARY)


@pytest.fixture(scope="module")
def packaged() -> Any:
    return load_fixtures()


def task(question: str, version: str = "v2", **kw: str) -> Task:
    return Task(
        id=kw.pop("id", "t1"), family=kw.pop("family", "test"), question=question, version=version, **kw
    )


def case(question: str, doc: str, command: str, version: str = "v2") -> Case:
    return Case(
        id="c1",
        family="test",
        question=question,
        version=version,
        expected_doc=doc,
        expected_command=command,
    )


def scripted(*proposals: object):
    """A decide function replaying proposals in order."""
    queue = list(proposals)

    async def decide(state: LoopState) -> object:
        return queue.pop(0)

    return decide


def search(query: str) -> Proposal:
    return Proposal("search", {"query": query})


def read(page_id: str) -> Proposal:
    return Proposal("read", {"id": page_id})


def final(answer: str, citation: str | None) -> Proposal:
    return Proposal("final", {"answer": answer, "citation": citation})


def use(name: str, tool_id: str, **input: Any) -> list[ToolUseBlock]:
    return [ToolUseBlock(tool_id, name, dict(input))]


def write_fixtures(root: Path, *, documents: Any = None, glossary: Any = None, cases: Any = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    docs = documents if documents is not None else [p.to_dict() for p in PAGES]
    cases_data = (
        cases
        if cases is not None
        else [
            {
                "id": "x1",
                "family": "alias",
                "question": "How do I restore the previous release?",
                "version": "v2",
                "expected_doc": "rollback-v2",
                "expected_command": "docuctl rollback run",
            },
            {
                "id": "x2",
                "family": "adaptive_conflict",
                "question": "Where are the logs of a release?",
                "version": "v2",
                "expected_doc": "logs-v2",
                "expected_command": "docuctl logs stream",
            },
        ]
    )
    (root / "documents.json").write_text(json.dumps(docs))
    (root / "glossary.json").write_text(json.dumps(glossary if glossary is not None else GLOSSARY))
    (root / "cases.json").write_text(json.dumps(cases_data))
    return root


async def bench(**kw: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args: dict[str, Any] = {
        "fixtures": None,
        "cases": "baseline",
        "as_json": False,
        "trace": None,
        "model": False,
    }
    args.update(kw)
    code = await bench_docs(out=out, err=err, **args)
    return code, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- words()


def test_words_are_casefolded_alphanumeric_runs_without_stop_words() -> None:
    assert words("How do I Roll-Back my v2 DEPLOY_now? (it's 3am)") == frozenset(
        {"roll", "back", "v2", "deploy", "now", "s", "3am"}
    )
    assert words("Straße Ünïcode") == frozenset({"strasse", "n", "code"})  # casefold, then [a-z0-9]+
    assert words("") == frozenset()


def test_stop_words_are_exactly_the_documented_list() -> None:
    documented = "a an and are can do for how i in is it me my of on the to what with"
    assert frozenset(documented.split()) == STOP_WORDS
    assert words(documented.upper()) == frozenset()


# --------------------------------------------------------------------------- task validation


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({}, None),
        ({"id": " "}, "id must be a non-blank string"),
        ({"id": "x" * 100}, None),
        ({"id": "x" * 101}, "id is longer than 100 characters"),
        ({"family": ""}, "family must be a non-blank string"),
        ({"family": "f" * 101}, "family is longer than 100 characters"),
        ({"version": "v3"}, "unknown version 'v3'"),
        ({"version": "V2"}, "unknown version 'V2'"),
        ({"version": ""}, "version must be a non-blank string"),
        ({"environment": "production"}, "environment 'production' is not covered"),
        ({"environment": "Staging"}, "environment 'Staging' is not covered"),
        ({"environment": "\t"}, "environment must be a non-blank string"),
        ({"environment": "e" * 101}, "environment is longer than 100 characters"),
        ({"question": ""}, "the question is blank"),
        ({"question": "   \n"}, "the question is blank"),
        ({"question": "q" * 500}, None),
        ({"question": "q" * 501}, "the question is longer than 500 characters"),
        ({"question": "?"}, None),
    ],
)
def test_task_validation(changes: dict[str, str], reason: str | None) -> None:
    fields = {"id": "t1", "family": "f", "question": "How do I deploy?", "version": "v1"} | changes
    result = validate_task(Task(**fields))
    if reason is None:
        assert result is None
    else:
        assert result is not None and result.startswith(reason)


def test_validation_refuses_non_strings_from_untyped_callers() -> None:
    assert validate_task(Task(id=7, family="f", question="q", version="v1")) is not None  # type: ignore[arg-type]
    assert validate_task(Task(id="t", family="f", question=None, version="v1")) is not None  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", [*SCRIPTED_POLICIES])
@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"environment": "production"}, "environment 'production' is not covered"),
        ({"version": "v3"}, "unknown version 'v3'"),
        ({"question": " "}, "the question is blank"),
    ],
)
async def test_every_policy_refuses_an_invalid_task_before_any_tool(
    corpus: Corpus, policy: Any, changes: dict[str, str], reason: str
) -> None:
    fields = {"id": "t1", "family": "f", "question": "How do I rollback?", "version": "v2"} | changes
    observer = RecordingObserver()
    result = await run_policy(policy, Task(**fields), corpus, observer=observer)
    assert result.stop == "refused"
    assert result.tool_calls == 0
    assert result.detail.startswith(reason)
    assert not any(isinstance(e, ToolCallStarted) for e in observer.events)
    finished = [e for e in observer.events if isinstance(e, NodeFinished)]
    assert finished[-1].outcome == "out_of_scope"


async def test_the_model_is_not_called_for_a_refused_task(corpus: Corpus) -> None:
    provider = ScriptedProvider([])
    result = await model_loop(task("Rollback production?", environment="production"), corpus, provider)
    assert result.stop == "refused"
    assert provider.requests == []


# --------------------------------------------------------------------------- search and read


def test_search_scores_terms_drops_zeros_and_orders_by_score_then_id(corpus: Corpus) -> None:
    # "previous": rollback-v2 only; "release": rollback-v2 and logs-v2; "staging": deploy-v2 only
    assert corpus.search("previous release staging", "v2", expand=False, top_k=3) == [
        Hit("rollback-v2", "Rollback (v2)"),
        Hit("deploy-v2", "Deploy (v2)"),
        Hit("logs-v2", "Logs (v2)"),
    ]
    assert corpus.scores("previous release staging", "v2", expand=False) == {
        "deploy-v2": 1,
        "rollback-v2": 2,
        "logs-v2": 1,
    }
    assert corpus.search("nothing matches here", "v2", expand=False, top_k=3) == []


def test_search_counts_distinct_terms_and_includes_the_title(corpus: Corpus) -> None:
    # "rollback" occurs only in rollback-v2's title; repeating a word counts once.
    assert corpus.scores("rollback rollback ROLLBACK", "v2", expand=False)["rollback-v2"] == 1


def test_search_returns_top_k_of_the_version_only(corpus: Corpus) -> None:
    assert [h.id for h in corpus.search("previous build staging", "v1", expand=False, top_k=1)] == [
        "deploy-v1"
    ]
    ids = [h.id for h in corpus.search("previous build staging", "v1", expand=False, top_k=3)]
    assert ids == ["deploy-v1", "rollback-v1"]


def test_search_expand_adds_glossary_targets(corpus: Corpus) -> None:
    assert corpus.search("restore", "v2", expand=False, top_k=2) == []
    assert corpus.terms("restore log", expand=True) == frozenset({"restore", "log", "rollback", "logs"})
    assert [h.id for h in corpus.search("restore", "v2", expand=True, top_k=2)] == ["rollback-v2"]


@pytest.mark.parametrize("top_k", [0, 4, -1, True, 2.0])
def test_search_rejects_top_k_outside_1_to_3(corpus: Corpus, top_k: Any) -> None:
    with pytest.raises(DocsToolError, match="top_k"):
        corpus.search("deploy", "v2", expand=True, top_k=top_k)


@pytest.mark.parametrize("version", ["v3", "", "V1"])
def test_search_rejects_an_unknown_version(corpus: Corpus, version: str) -> None:
    with pytest.raises(DocsToolError, match="version"):
        corpus.search("deploy", version, expand=True, top_k=2)


def test_read_returns_a_page_only_in_its_version(corpus: Corpus) -> None:
    assert corpus.read("rollback-v2", "v2").command == "docuctl rollback run"
    with pytest.raises(DocsToolError, match="no page 'rollback-v2' in the v1 docs"):
        corpus.read("rollback-v2", "v1")
    with pytest.raises(DocsToolError):
        corpus.read("missing-v2", "v2")


# --------------------------------------------------------------------------- keyword route


async def test_keyword_route_reads_the_one_topic_page(corpus: Corpus) -> None:
    result = await keyword_route(task("How do I rollback on staging?"), corpus)
    assert (result.stop, result.answer, result.citation, result.tool_calls) == (
        "final",
        "docuctl rollback run",
        "rollback-v2",
        1,
    )


@pytest.mark.parametrize(
    "question",
    ["How do I deploy and rollback?", "Restore the previous release", "deploys and rollbacks"],
)
async def test_keyword_route_needs_review_without_exactly_one_topic(corpus: Corpus, question: str) -> None:
    observer = RecordingObserver()
    result = await keyword_route(task(question), corpus, observer=observer)
    assert result.stop == "needs_review"
    assert result.tool_calls == 0
    assert not any(isinstance(e, ToolCallStarted) for e in observer.events)


async def test_the_ambiguous_deploy_and_rollback_question_stops_the_keyword_route(packaged: Any) -> None:
    result = await keyword_route(task("How do I deploy and rollback on staging?"), packaged.corpus)
    assert result.stop == "needs_review"
    assert result.tool_calls == 0
    assert "deploy, rollback" in result.detail


async def test_keyword_route_needs_review_after_a_failed_read(corpus: Corpus) -> None:
    result = await keyword_route(task("Where are the logs?", version="v1"), corpus)
    assert result.stop == "needs_review"
    assert result.tool_calls == 1
    assert "no page 'logs-v1'" in result.detail


# --------------------------------------------------------------------------- workflow


async def test_workflow_searches_then_reads_the_first_hit(corpus: Corpus) -> None:
    result = await workflow(task("restore the previous release"), corpus)
    assert (result.stop, result.answer, result.citation, result.tool_calls) == (
        "final",
        "docuctl rollback run",
        "rollback-v2",
        2,
    )
    assert [t.action for t in result.trace] == ["search", "read", "final"]


async def test_workflow_needs_review_when_search_finds_nothing(corpus: Corpus) -> None:
    result = await workflow(task("zebra crossing"), corpus)
    assert result.stop == "needs_review"
    assert result.tool_calls == 1


# --------------------------------------------------------------------------- the bounded runtime


async def test_runtime_final_after_reading_the_cited_page(corpus: Corpus) -> None:
    runtime = DocsRuntime(corpus)
    decide = scripted(
        search("previous release"), read("rollback-v2"), final("docuctl rollback run", "rollback-v2")
    )
    result = await runtime.run(task("q"), decide, 3, 2)
    assert (result.stop, result.answer, result.citation, result.tool_calls) == (
        "final",
        "docuctl rollback run",
        "rollback-v2",
        2,
    )


async def test_runtime_final_without_citation_is_allowed(corpus: Corpus) -> None:
    result = await DocsRuntime(corpus).run(task("q"), scripted(final("I do not know.", None)), 1, 0)
    assert (result.stop, result.citation, result.tool_calls) == ("final", None, 0)


@pytest.mark.parametrize(
    "proposal",
    [
        Proposal("delete", {"id": "rollback-v2"}),
        Proposal("search", {"query": "x", "top_k": 3}),
        Proposal("search", {}),
        Proposal("search", {"query": "   "}),
        Proposal("search", {"query": "q" * 501}),
        Proposal("search", {"query": 42}),
        Proposal("search", "deploy"),
        Proposal("read", {"id": "x" * 101}),
        Proposal("read", {"id": None}),
        Proposal("final", {"answer": "docuctl rollback run"}),
        Proposal("final", {"answer": "", "citation": None}),
        Proposal("final", {"answer": "a" * 501, "citation": None}),
        Proposal("final", {"answer": "ok", "citation": ""}),
        Proposal("final", {"answer": "ok", "citation": 3}),
        Proposal("", None, problem="expected exactly one tool call"),
        {"name": "search", "input": {"query": "x"}},
        None,
    ],
)
async def test_runtime_stops_on_an_invalid_decision(corpus: Corpus, proposal: object) -> None:
    result = await DocsRuntime(corpus).run(task("q"), scripted(proposal), 3, 2)
    assert result.stop == "invalid_decision"
    assert result.tool_calls == 0
    assert result.detail


async def test_runtime_checks_the_bounds_exactly(corpus: Corpus) -> None:
    decide = scripted(search("q" * 500), final("a" * 500, None))
    result = await DocsRuntime(corpus).run(task("q"), decide, 2, 1)
    assert result.stop == "final"


async def test_runtime_stops_on_a_provider_failure(corpus: Corpus) -> None:
    async def decide(state: LoopState) -> Proposal:
        if state.turn == 2:
            raise ProviderError("overloaded")
        return search("release")

    observer = RecordingObserver()
    result = await DocsRuntime(corpus, observer=observer).run(task("q"), decide, 3, 2)
    assert (result.stop, result.detail, result.tool_calls) == ("provider_error", "overloaded", 1)
    flow_end = [e for e in observer.events if isinstance(e, NodeFinished)][-1]
    assert (flow_end.status, flow_end.outcome) == ("failed", "error")


async def test_runtime_stops_on_an_unread_citation(corpus: Corpus) -> None:
    decide = scripted(search("previous release"), final("docuctl rollback run", "rollback-v2"))
    result = await DocsRuntime(corpus).run(task("q"), decide, 3, 2)
    assert (result.stop, result.citation, result.tool_calls) == ("unread_citation", "rollback-v2", 1)


async def test_a_failed_read_does_not_make_a_page_citable(corpus: Corpus) -> None:
    decide = scripted(read("rollback-v1"), final("docuctl rollback", "rollback-v1"))
    result = await DocsRuntime(corpus).run(task("q", version="v2"), decide, 3, 2)
    assert result.stop == "unread_citation"


async def test_runtime_stops_on_a_tool_call_beyond_max_tools(corpus: Corpus) -> None:
    decide = scripted(search("release"), read("logs-v2"), read("rollback-v2"))
    result = await DocsRuntime(corpus).run(task("q"), decide, 5, 2)
    assert (result.stop, result.tool_calls) == ("tool_limit", 2)
    nothing = await DocsRuntime(corpus).run(task("q"), scripted(search("release")), 5, 0)
    assert (nothing.stop, nothing.tool_calls) == ("tool_limit", 0)


async def test_runtime_stops_when_turns_run_out(corpus: Corpus) -> None:
    decide = scripted(search("release"), search("previous"), search("staging"))
    result = await DocsRuntime(corpus).run(task("q"), decide, 2, 6)
    assert (result.stop, result.tool_calls) == ("turn_limit", 2)


async def test_a_tool_error_is_an_observation_not_a_crash(corpus: Corpus) -> None:
    seen: list[LoopState] = []

    async def decide(state: LoopState) -> Proposal:
        seen.append(state)
        if state.turn == 1:
            return read("no-such-page")
        return final("could not read it", None)

    result = await DocsRuntime(corpus).run(task("q"), decide, 3, 2)
    assert result.stop == "final"
    observation = seen[1].history[0]
    assert observation.is_error and observation.text == "error: no page 'no-such-page' in the v2 docs"
    assert seen[1].tool_calls == 1


async def test_runtime_runs_tools_with_the_workflow_search_settings(corpus: Corpus) -> None:
    seen: list[LoopState] = []

    async def decide(state: LoopState) -> Proposal:
        seen.append(state)
        return search("restore log") if state.turn == 1 else final("x", None)

    await DocsRuntime(corpus).run(task("q"), decide, 2, 1)
    hits = seen[1].history[0].hits
    # expand=True (restore -> rollback, log -> logs) and top_k=2
    assert [h.id for h in hits] == ["logs-v2", "rollback-v2"]


@pytest.mark.parametrize(("max_turns", "max_tools"), [(0, 2), (9, 2), (3, -1), (3, 7), (True, 2)])
async def test_runtime_budgets_have_fixed_ranges(corpus: Corpus, max_turns: Any, max_tools: Any) -> None:
    with pytest.raises(ValueError):
        await DocsRuntime(corpus).run(task("q"), scripted(), max_turns, max_tools)


async def test_runtime_accepts_the_range_bounds(corpus: Corpus) -> None:
    for max_turns, max_tools in ((1, 0), (8, 6)):
        result = await DocsRuntime(corpus).run(task("q"), scripted(final("x", None)), max_turns, max_tools)
        assert result.stop == "final"


async def test_decisions_and_tool_calls_are_observer_events(corpus: Corpus) -> None:
    observer = RecordingObserver()
    decide = scripted(
        search("previous release"), read("rollback-v2"), final("docuctl rollback run", "rollback-v2")
    )
    await DocsRuntime(corpus, observer=observer).run(task("q"), decide, 3, 2, policy="scripted_loop")
    started = [e for e in observer.events if isinstance(e, NodeStarted)]
    flow = started[0]
    assert (flow.node_kind, flow.label, flow.parent_id) == ("flow", "scripted_loop · t1", None)
    turns = [e for e in started if e.node_kind == "step"]
    assert [t.label for t in turns] == ["turn 1", "turn 2", "turn 3"]
    assert all(t.parent_id == flow.node_id for t in turns)
    calls = [e for e in observer.events if isinstance(e, ToolCallStarted)]
    assert [(c.name, c.input, c.parent_id) for c in calls] == [
        ("search", {"query": "previous release"}, turns[0].node_id),
        ("read", {"id": "rollback-v2"}, turns[1].node_id),
    ]
    results = [e for e in observer.events if isinstance(e, ToolCallFinished)]
    assert [r.node_id for r in results] == [c.node_id for c in calls]
    assert json.loads(results[0].output) == [
        {"id": "rollback-v2", "title": "Rollback (v2)"},
        {"id": "logs-v2", "title": "Logs (v2)"},
    ]
    finished = {e.node_id: e for e in observer.events if isinstance(e, NodeFinished)}
    assert finished[turns[2].node_id].output.startswith("final ")
    assert finished[flow.node_id].outcome == "answered"
    assert len(finished) == len(started)  # every node is closed exactly once


@pytest.mark.parametrize(
    ("stop", "citation", "expected"),
    [
        ("final", "x-v1", "answered"),
        ("final", None, "no_relevant_documents"),
        ("refused", None, "out_of_scope"),
        ("needs_review", None, "awaiting_approval"),
        ("tool_limit", None, "budget_exhausted"),
        ("turn_limit", None, "budget_exhausted"),
        ("unread_citation", "x-v1", "unverified"),
        ("invalid_decision", None, "error"),
        ("provider_error", None, "error"),
    ],
)
def test_stops_map_to_closed_flow_outcomes(stop: Any, citation: str | None, expected: str) -> None:
    assert flow_outcome(stop, citation) == expected


# --------------------------------------------------------------------------- scripted loop


async def test_scripted_loop_searches_reads_and_answers(corpus: Corpus) -> None:
    result = await scripted_loop(task("restore the previous release"), corpus)
    assert (result.stop, result.answer, result.citation, result.tool_calls) == (
        "final",
        "docuctl rollback run",
        "rollback-v2",
        2,
    )
    assert [t.action for t in result.trace] == ["search", "read", "final"]
    assert (SCRIPTED_LIMITS.max_turns, SCRIPTED_LIMITS.max_tools) == (3, 2)


async def test_scripted_loop_without_hits_answers_with_no_citation(corpus: Corpus) -> None:
    result = await scripted_loop(task("zebra crossing"), corpus)
    assert (result.stop, result.citation, result.tool_calls) == ("final", None, 1)
    assert result.answer == "No page of the v2 docs matches this question."


async def test_scripted_loop_answers_a_read_error_with_its_text_and_no_citation() -> None:
    failed = Observation(Read("gone-v2"), error="no page 'gone-v2' in the v2 docs")
    state = LoopState(
        "q", "v2", 3, 3, 2, 2, (Observation(Search("q"), hits=(Hit("gone-v2", "Gone"),)), failed)
    )
    assert await scripted_decide(state) == final("no page 'gone-v2' in the v2 docs", None)


# --------------------------------------------------------------------------- outcome checker


async def test_outcome_needs_final_the_expected_page_and_the_exact_command(corpus: Corpus) -> None:
    expected = case("restore the previous release", "rollback-v2", "docuctl rollback run")

    def result(stop: Any, answer: str | None, citation: str | None) -> PolicyResult:
        return PolicyResult("p", "c1", stop, answer, citation)

    assert outcome(expected, result("final", "docuctl rollback run", "rollback-v2"))
    assert not outcome(expected, result("final", "Run `docuctl rollback run`.", "rollback-v2"))
    assert not outcome(expected, result("final", "docuctl rollback run ", "rollback-v2"))
    assert not outcome(expected, result("final", "docuctl rollback", "rollback-v1"))
    assert not outcome(expected, result("final", "docuctl rollback run", None))
    assert not outcome(expected, result("unread_citation", "docuctl rollback run", "rollback-v2"))
    assert not outcome(expected, result("needs_review", None, None))
    assert outcome(expected, await workflow(expected.task, corpus))


# --------------------------------------------------------------------------- packaged fixtures


def test_packaged_fixtures_cover_two_versions_of_eight_topics(packaged: Any) -> None:
    ids = {p.id for p in packaged.corpus.pages}
    topics = ("deploy", "rollback", "tokens", "config", "migrate", "releases", "logs", "health")
    assert ids == {f"{t}-{v}" for t in topics for v in ("v1", "v2")}
    for page in packaged.corpus.pages:
        assert page.id.endswith(f"-{page.version}")
        assert "--env staging" in page.command
    assert packaged_fixture_dir().joinpath("cases.json").is_file()
    assert packaged.corpus.glossary["restore"] == "rollback"


def test_packaged_cases_are_valid_and_their_expectations_are_real_pages(packaged: Any) -> None:
    baseline = select_cases(packaged.cases, "baseline")
    adaptive = select_cases(packaged.cases, "adaptive")
    assert len(baseline) == 18
    assert {c.family for c in adaptive} == {"adaptive_empty_search", "adaptive_conflict"}
    assert len(select_cases(packaged.cases, "all")) == len(baseline) + len(adaptive)
    for c in baseline + adaptive:
        assert validate_task(c.task) is None
        page = packaged.corpus.read(c.expected_doc, c.version)
        assert page.command == c.expected_command


def test_packaged_refusal_cases_are_refused(packaged: Any) -> None:
    refusals = [c for c in packaged.cases if c.family == "refusal"]
    reasons = {c.id: validate_task(c.task) for c in refusals}
    assert all(reasons.values())
    assert any("production" in (r or "") for r in reasons.values())
    assert any("unknown version" in (r or "") for r in reasons.values())


async def test_on_the_baseline_the_keyword_route_misses_what_retrieval_finds(packaged: Any) -> None:
    for c in select_cases(packaged.cases, "baseline"):
        routed = await keyword_route(c.task, packaged.corpus)
        found = await workflow(c.task, packaged.corpus)
        assert not outcome(c, routed), c.id
        assert outcome(c, found), c.id


async def test_workflow_and_scripted_loop_tie_on_the_baseline(packaged: Any) -> None:
    report = await run_bench(packaged, "baseline")
    rows = {r.policy: r for r in report.rows}
    assert (rows["workflow"].passed, rows["workflow"].tool_calls) == (
        rows["scripted_loop"].passed,
        rows["scripted_loop"].tool_calls,
    )
    for flow, loop in zip(report.results["workflow"], report.results["scripted_loop"], strict=True):
        assert (flow.tool_calls, flow.answer, flow.citation) == (loop.tool_calls, loop.answer, loop.citation)


async def test_adaptive_cases_need_an_observation_to_change_the_next_action(packaged: Any) -> None:
    for c in select_cases(packaged.cases, "adaptive"):
        fixed = await scripted_loop(c.task, packaged.corpus)
        adapted = await adaptive_loop(c.task, packaged.corpus)
        assert not outcome(c, fixed), c.id
        assert outcome(c, adapted), c.id
        actions = [t.action for t in adapted.trace]
        if c.family == "adaptive_empty_search":
            assert fixed.tool_calls == 1 and fixed.citation is None
            assert actions == ["search", "search", "read", "final"]
            assert adapted.trace[0].observation == "no hits"
        else:
            assert actions == ["search", "read", "read", "final"]
            first_hits = adapted.trace[0].observation.split(", ")
            assert [adapted.trace[1].input["id"], adapted.trace[2].input["id"]] == first_hits
        assert adapted.tool_calls <= ADAPTIVE_LIMITS.max_tools


async def test_adaptive_trace_of_an_empty_search(packaged: Any) -> None:
    c = packaged.case("a01-restoring-older-build")
    result = await adaptive_loop(c.task, packaged.corpus)
    assert [(t.action, t.input) for t in result.trace[:2]] == [
        ("search", {"query": "Restoring an older build?"}),
        ("search", {"query": "restor restore"}),
    ]


def test_revise_query_strips_inflections_only() -> None:
    assert revise_query("Restoring an older build?") == "restor restore"
    assert revise_query("Expired secrets?") == "expir expire secret"
    assert revise_query("Probing liveness?") == "prob probe"  # -ss words keep their ending
    assert revise_query("zebra") is None


def test_a_link_about_something_else_is_not_a_conflict() -> None:
    page = Page("health-v1", "v1", "Health", "Probes services. Output goes to the logs, see logs-v1.", "c")
    assert defers_to(page, "logs-v1", "Where does the check write its output?")
    assert not defers_to(page, "logs-v1", "Is every service up?")
    assert not defers_to(page, "logs-v1", "Show the logs")  # the id's own words do not count
    assert not defers_to(page, "tokens-v1", "Where does the output go?")


async def test_adaptive_loop_gives_up_when_the_revised_search_is_empty_too(corpus: Corpus) -> None:
    result = await adaptive_loop(task("zebras crossing"), corpus)
    assert [t.action for t in result.trace] == ["search", "search", "final"]
    assert (result.stop, result.citation, result.tool_calls) == ("final", None, 2)


async def test_adaptive_decide_falls_back_to_the_first_page_when_the_second_read_fails() -> None:
    first = Page("a-v2", "v2", "A", "Use b-v2 for this question instead.", "cmd a")
    hits = (Hit("a-v2", "A"), Hit("b-v2", "B"))
    history = (
        Observation(Search("question"), hits=hits),
        Observation(Read("a-v2"), page=first),
    )
    state = LoopState("this question", "v2", 3, 4, 3, 2, history)
    assert await adaptive_decide(state) == read("b-v2")
    failed = Observation(Read("b-v2"), error="gone")
    later = LoopState("this question", "v2", 4, 4, 3, 3, (*history, failed))
    assert await adaptive_decide(later) == final("cmd a", "a-v2")


async def test_the_adaptive_loop_does_not_change_the_other_policies_numbers(packaged: Any) -> None:
    report = await run_bench(packaged, "baseline")
    for name in ("keyword_route", "workflow", "scripted_loop"):
        alone = [await run_policy(name, c.task, packaged.corpus) for c in report.cases]
        assert list(report.results[name]) == alone
    rows = [r.to_dict() for r in report.rows]
    assert rows == BASELINE_ROWS


BASELINE_ROWS = [
    {"policy": "keyword_route", "passed": 0, "total": 18, "tool_calls": 4},
    {"policy": "workflow", "passed": 18, "total": 18, "tool_calls": 36},
    {"policy": "scripted_loop", "passed": 18, "total": 18, "tool_calls": 36},
    {"policy": "adaptive_loop", "passed": 18, "total": 18, "tool_calls": 36},
]
ADAPTIVE_ROWS = [
    {"policy": "keyword_route", "passed": 0, "total": 8, "tool_calls": 3},
    {"policy": "workflow", "passed": 0, "total": 8, "tool_calls": 12},
    {"policy": "scripted_loop", "passed": 0, "total": 8, "tool_calls": 12},
    {"policy": "adaptive_loop", "passed": 8, "total": 8, "tool_calls": 24},
]


# --------------------------------------------------------------------------- model policy


def rollback_script() -> list[Any]:
    return [
        use("search", "toolu_1", query="restore previous release"),
        use("read", "toolu_2", id="rollback-v2"),
        use("final", "toolu_3", answer="docuctl rollback run", citation="rollback-v2"),
    ]


async def test_model_policy_proposes_decisions_as_tool_calls(corpus: Corpus) -> None:
    provider = ScriptedProvider(rollback_script())
    observer = RecordingObserver()
    result = await model_loop(
        task("How do I restore the previous release?"), corpus, provider, observer=observer
    )
    assert (result.policy, result.stop, result.answer, result.citation, result.tool_calls) == (
        "model",
        "final",
        "docuctl rollback run",
        "rollback-v2",
        2,
    )
    assert outcome(case("q", "rollback-v2", "docuctl rollback run"), result)
    first, second, third = provider.requests
    assert [t.name for t in first.tools] == ["search", "read", "final"] == [t.name for t in MODEL_TOOLS]
    assert "Question: How do I restore the previous release?" in first.messages[0].text
    assert "Documentation version: v2" in first.messages[0].text
    assert "at most 3 search or read calls and 4 replies" in first.system
    tool_result = third.messages[-1].content[0]
    assert isinstance(tool_result, ToolResultBlock)
    assert tool_result.tool_use_id == "toolu_2" and "docuctl rollback run" in tool_result.content
    assert isinstance(second.messages[-1].content[0], ToolResultBlock)
    calls = [e for e in observer.events if isinstance(e, ToolCallStarted)]
    assert [c.call_id for c in calls] == ["toolu_1", "toolu_2"]


async def test_model_policy_tool_errors_go_back_to_the_model(corpus: Corpus) -> None:
    provider = ScriptedProvider(
        [
            use("read", "toolu_1", id="rollback-v1"),
            use("read", "toolu_2", id="rollback-v2"),
            use("final", "toolu_3", answer="docuctl rollback run", citation="rollback-v2"),
        ]
    )
    result = await model_loop(task("rollback?"), corpus, provider)
    assert result.stop == "final"
    error = provider.requests[1].messages[-1].content[0]
    assert isinstance(error, ToolResultBlock) and error.is_error
    assert error.content == "error: no page 'rollback-v1' in the v2 docs"


@pytest.mark.parametrize(
    ("reply", "stop"),
    [
        ([TextBlock("It is docuctl rollback run.")], "invalid_decision"),
        (
            [ToolUseBlock("t1", "search", {"query": "a"}), ToolUseBlock("t2", "read", {"id": "logs-v2"})],
            "invalid_decision",
        ),
        ([ToolUseBlock("t1", "search", {"query": "a", "top_k": 3})], "invalid_decision"),
        ([ToolUseBlock("t1", "bash", {"command": "ls"})], "invalid_decision"),
        (
            [ToolUseBlock("t1", "final", {"answer": "docuctl rollback run", "citation": "rollback-v2"})],
            "unread_citation",
        ),
    ],
)
async def test_model_policy_goes_through_the_same_validation(corpus: Corpus, reply: Any, stop: str) -> None:
    result = await model_loop(task("rollback?"), corpus, ScriptedProvider([reply]))
    assert result.stop == stop


async def test_model_policy_provider_failure(corpus: Corpus) -> None:
    result = await model_loop(task("rollback?"), corpus, ScriptedProvider([use("search", "t1", query="x")]))
    assert result.stop == "provider_error"
    assert "script exhausted" in result.detail


async def test_model_policy_tool_limit_and_turn_limit(corpus: Corpus) -> None:
    searches = [use("search", f"t{i}", query="release") for i in range(4)]
    result = await model_loop(task("q"), corpus, ScriptedProvider(searches))
    assert (result.stop, result.tool_calls) == ("tool_limit", 3)
    result = await model_loop(task("q"), corpus, ScriptedProvider(searches), limits=Limits(2, 6))
    assert (result.stop, result.tool_calls) == ("turn_limit", 2)


async def test_model_policy_through_the_real_sdk(fake: FakeAnthropic, corpus: Corpus) -> None:
    fake.add(
        Reply([Text("Let me look."), ToolUse("search", {"query": "restore previous release"})]),
        Reply([ToolUse("read", {"id": "rollback-v2"})]),
        Reply([ToolUse("final", {"answer": "docuctl rollback run", "citation": "rollback-v2"})]),
    )
    provider = AnthropicProvider(api_key="test", base_url=fake.base_url, stream_backoff=0.01)
    try:
        result = await model_loop(task("How do I restore the previous release?"), corpus, provider)
    finally:
        await provider.aclose()
    assert (result.stop, result.answer, result.citation, result.tool_calls) == (
        "final",
        "docuctl rollback run",
        "rollback-v2",
        2,
    )
    requests = fake.wait_for_requests(3)
    assert [t["name"] for t in requests[0].tools] == ["search", "read", "final"]
    last = requests[2].messages[-1]["content"][0]
    assert last["type"] == "tool_result" and "docuctl rollback run" in json.dumps(last)


# --------------------------------------------------------------------------- bench docs


async def test_bench_json_rows_baseline_and_adaptive() -> None:
    code, out, err = await bench(as_json=True)
    assert (code, err) == (0, "")
    assert json.loads(out) == BASELINE_ROWS
    code, out, _ = await bench(as_json=True, cases="adaptive")
    assert code == 0
    assert json.loads(out) == ADAPTIVE_ROWS
    code, out, _ = await bench(as_json=True, cases="all")
    assert json.loads(out) == [
        {k: (a[k] + b[k] if k != "policy" else a[k]) for k in a}
        for a, b in zip(BASELINE_ROWS, ADAPTIVE_ROWS, strict=True)
    ]


async def test_bench_output_is_identical_run_to_run() -> None:
    for kw in ({"as_json": True, "cases": "all"}, {"cases": "all"}, {"trace": "a06-which-deploy-running"}):
        first = await bench(**kw)
        second = await bench(**kw)
        assert first == second


async def test_bench_table_reports_refusals() -> None:
    code, out, _ = await bench()
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "bench docs · baseline: 18 cases · fixtures: packaged"
    assert lines[2].split()[:4] == ["keyword_route", "0", "18", "4"]
    assert "refusals: 4 of 4 refusal cases refused before any policy ran" in out


async def test_bench_trace_prints_each_policy_decisions() -> None:
    code, out, _ = await bench(trace="a05-undo-migration")
    assert code == 0
    assert "expected: rollback-v2 · docuctl rollback run --env staging --release previous" in out
    assert "keyword_route: needs_review, 0 tool calls, FAIL" in out
    assert "workflow: final, 2 tool calls, FAIL" in out
    assert "adaptive_loop: final, 3 tool calls, PASS" in out
    assert '  3. read {"id": "rollback-v2"} -> rollback-v2: docuctl rollback run' in out

    code, out, _ = await bench(trace="r01-production-rollback", as_json=True)
    data = json.loads(out)
    assert data["case"]["environment"] == "production"
    assert [r["stop"] for r in data["results"]] == ["refused"] * 4
    assert [r["tool_calls"] for r in data["results"]] == [0] * 4


async def test_bench_unknown_trace_case_or_case_set_is_a_usage_error() -> None:
    code, out, err = await bench(trace="nope")
    assert (code, out) == (2, "")
    assert "no case 'nope'" in err
    code, _, err = await bench(cases="everything")
    assert code == 2 and "unknown case set" in err


async def test_bench_reads_fixtures_from_a_directory(tmp_path: Path) -> None:
    root = write_fixtures(tmp_path / "fx")
    code, out, _ = await bench(fixtures=root, as_json=True, cases="all")
    assert code == 0
    rows = {r["policy"]: r for r in json.loads(out)}
    assert rows["workflow"] == {"policy": "workflow", "passed": 2, "total": 2, "tool_calls": 4}
    assert rows["keyword_route"]["passed"] == 1  # "logs" routes; "restore" does not


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"documents": "not json"}, "documents.json: not valid JSON"),
        ({"documents": {"id": "x"}}, "documents.json: expected a JSON list"),
        ({"documents": [{"id": "x-v1", "version": "v1", "title": "t", "text": "t"}]}, "missing 'command'"),
        ({"documents": [p.to_dict() for p in PAGES[:1]] * 2}, "duplicate page 'deploy-v1'"),
        ({"glossary": ["restore"]}, "glossary.json: expected a JSON object"),
        ({"glossary": {"restore": 1}}, "the target of 'restore' must be a string"),
        (
            {"cases": [{"id": "c", "family": "f", "question": "q", "version": 2}]},
            "'version' must be a string",
        ),
        ({"cases": [1]}, "cases.json: item 0 is not an object"),
        (
            {
                "cases": [
                    {
                        "id": "c",
                        "family": "f",
                        "question": "q",
                        "version": "v1",
                        "expected_doc": "d",
                        "expected_command": "c",
                    }
                ]
                * 2
            },
            "duplicate case id 'c'",
        ),
    ],
)
async def test_bench_invalid_fixtures_are_a_clear_usage_error(
    tmp_path: Path, files: dict[str, Any], message: str
) -> None:
    root = tmp_path / "fx"
    write_fixtures(root)
    for name, content in files.items():
        text = content if isinstance(content, str) else json.dumps(content)
        (root / f"{name}.json").write_text(text)
    code, out, err = await bench(fixtures=root, as_json=True)
    assert (code, out) == (2, "")
    assert err.startswith("invalid fixtures: ")
    assert message in err
    assert len(err.splitlines()) == 1


async def test_bench_missing_fixture_file_or_directory(tmp_path: Path) -> None:
    root = write_fixtures(tmp_path / "fx")
    (root / "glossary.json").unlink()
    code, _, err = await bench(fixtures=root)
    assert code == 2 and "glossary.json: not found" in err
    code, _, err = await bench(fixtures=tmp_path / "nowhere")
    assert code == 2 and "is not a directory" in err
    with pytest.raises(FixtureError):
        load_fixtures(tmp_path / "nowhere")


def _model_replies(request: ModelRequest) -> list[ToolUseBlock]:
    """A stand-in model: search the question, read the first hit, answer from it."""
    turn = len(request.messages) // 2
    last = request.messages[-1].content[0]
    if turn == 0:
        question = request.messages[0].text.split("Question: ", 1)[1]
        return use("search", "s", query=question)
    assert isinstance(last, ToolResultBlock)
    data = json.loads(last.content)
    if turn == 1:
        return use("read", "r", id=data[0]["id"])
    return use("final", "f", answer=data["command"], citation=data["id"])


async def test_bench_model_row_is_reported_separately() -> None:
    def factory() -> ScriptedProvider:
        return ScriptedProvider([_model_replies] * 100)

    code, out, _ = await bench(as_json=True, model=True, provider_factory=factory)
    assert code == 0
    rows = json.loads(out)
    assert rows[:4] == BASELINE_ROWS
    assert rows[4] == {"policy": "model", "passed": 18, "total": 18, "tool_calls": 36}
    code, out, _ = await bench(model=True, provider_factory=factory)
    assert "model policy (scripted/scripted), reported separately" in out
    code, out, _ = await bench(model=True, provider_factory=factory, trace="b01-restore-previous")
    assert "model: final, 2 tool calls, PASS" in out


async def test_bench_model_without_a_provider_or_with_a_failing_one() -> None:
    code, out, err = await bench(model=True)
    assert (code, out) == (2, "")
    assert "--model needs a configured provider" in err

    def broken() -> ScriptedProvider:
        raise RuntimeError("no API key")

    code, out, err = await bench(model=True, provider_factory=broken)
    assert (code, out) == (1, "")
    assert "model policy: no API key" in err

    code, out, err = await bench(model=True, as_json=True, provider_factory=lambda: ScriptedProvider([]))
    assert code == 1
    assert json.loads(out)[4] == {"policy": "model", "passed": 0, "total": 18, "tool_calls": 0}
    assert "the provider failed on 18 of 18 cases" in err


async def test_the_scripted_loop_does_not_gain_from_the_adaptive_budget(packaged: Any) -> None:
    """The adaptive loop's extra action is not what helps: the scripted loop never uses it."""
    runtime = DocsRuntime(packaged.corpus)
    for c in select_cases(packaged.cases, "all"):
        narrow = await scripted_loop(c.task, packaged.corpus)
        wide = await runtime.run(
            c.task,
            scripted_decide,
            ADAPTIVE_LIMITS.max_turns,
            ADAPTIVE_LIMITS.max_tools,
            policy="scripted_loop",
        )
        assert wide == narrow, c.id
