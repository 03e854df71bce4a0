from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from tests.workflow.helpers import assert_balanced, finished, started
from tui_assist.core.budget import BudgetExhausted
from tui_assist.core.events import TextDelta, UsageRecorded
from tui_assist.core.model import ModelRequest, ProviderError
from tui_assist.core.observer import RecordingObserver
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.workflow import Route, WorkflowBudget, WorkflowBudgetTracker, node_shape, run_reporting, step
from tui_assist.workflow.prompt import PromptStep, StructuredOutputError, parse_reply


class Category(BaseModel):
    category: Literal["network", "accounts", "hardware"]
    confidence: float = 1.0


CLASSIFY = PromptStep(
    "classify",
    Category,
    lambda text: f"Which team handles this ticket?\n{text}",
    system="You triage IT tickets.",
)


async def test_a_prompt_step_parses_the_reply_into_its_model() -> None:
    provider = ScriptedProvider(['Sure:\n```json\n{"category": "network", "confidence": 0.9}\n```'])
    observer = RecordingObserver()
    result = await run_reporting(CLASSIFY, "The VPN keeps dropping", observer, provider=provider)
    assert result == Category(category="network", confidence=0.9)
    (request,) = provider.requests
    assert request.messages[0].text == "Which team handles this ticket?\nThe VPN keeps dropping"
    assert request.system.startswith("You triage IT tickets.\n\nReply with only a JSON object")
    assert '"enum":["network","accounts","hardware"]' in request.system
    (node,) = started(observer.events)
    deltas = [e for e in observer.events if isinstance(e, TextDelta)]
    assert deltas and {d.node_id for d in deltas} == {node.node_id}
    (usage,) = [e for e in observer.events if isinstance(e, UsageRecorded)]
    assert usage.node_id == node.node_id and usage.model == "scripted"
    assert finished(observer.events)[node.node_id].status == "done"


async def test_an_invalid_reply_is_sent_back_once_with_the_error() -> None:
    provider = ScriptedProvider(['{"category": "printer"}', '{"category": "hardware"}'])
    assert await run_reporting(CLASSIFY, "jammed", None, provider=provider) == Category(category="hardware")
    repair = provider.requests[1].messages
    assert [m.role for m in repair] == ["user", "assistant", "user"]
    assert repair[1].text == '{"category": "printer"}'
    assert "Your reply could not be used" in repair[2].text and "category" in repair[2].text


async def test_replies_that_never_validate_fail_the_step_clearly() -> None:
    provider = ScriptedProvider(["no idea", "still no idea"])
    observer = RecordingObserver()
    with pytest.raises(StructuredOutputError, match=r"no reply matched Category in 2 attempt\(s\)"):
        await run_reporting(CLASSIFY, "?", observer, provider=provider)
    assert [finished(observer.events)[s.node_id].status for s in started(observer.events)] == ["failed"]
    assert provider.remaining == 0


async def test_the_model_budget_is_checked_before_each_request() -> None:
    provider = ScriptedProvider(['{"category": "printer"}', '{"category": "hardware"}'])
    tracker = WorkflowBudgetTracker(WorkflowBudget(max_model_requests=1))
    with pytest.raises(BudgetExhausted, match="model-request budget of 1"):
        await run_reporting(CLASSIFY, "jammed", None, provider=provider, budget=tracker)
    assert len(provider.requests) == 1  # the repair request was refused before it was sent
    assert tracker.models.usage.total_tokens > 0


async def test_the_token_budget_is_checked_before_each_request() -> None:
    provider = ScriptedProvider(['{"category": "printer"}', '{"category": "hardware"}'])
    tracker = WorkflowBudgetTracker(WorkflowBudget(max_tokens=10))
    with pytest.raises(BudgetExhausted, match="token budget of 10"):
        await run_reporting(CLASSIFY, "jammed", None, provider=provider, budget=tracker)
    assert len(provider.requests) == 1


async def test_a_prompt_step_needs_a_provider() -> None:
    with pytest.raises(ProviderError, match="no provider is configured"):
        await run_reporting(CLASSIFY, "x", None)


async def test_a_model_classifier_drives_a_route() -> None:
    def reply(request: ModelRequest) -> str:
        return (
            '{"category": "accounts"}'
            if "password" in request.messages[-1].text
            else '{"category": "network"}'
        )

    @step
    async def label(category: Category) -> str:
        return category.category

    @step
    async def team(text: str) -> str:
        return "handled"

    route = Route(CLASSIFY.then(label), {"network": team, "accounts": team})
    observer = RecordingObserver()
    provider = ScriptedProvider([reply])
    assert await run_reporting(route, "forgot my password", observer, provider=provider) == "handled"
    assert node_shape(observer.events) == "Route(Chain(classify, label), team)"
    assert finished(observer.events)[started(observer.events)[0].node_id].outcome == "accounts"
    assert_balanced(observer.events)


def test_parse_reply_needs_a_json_object() -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        parse_reply(Category, "network")
    assert parse_reply(Category, 'x {"category": "network"} y').category == "network"


def test_importing_the_engine_loads_no_pydantic_or_textual() -> None:
    import subprocess
    import sys

    code = "import sys, tui_assist.workflow; print(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    loaded = set(out.split())
    assert not loaded & {"pydantic", "textual", "anthropic"}
