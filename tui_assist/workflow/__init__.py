"""Typed workflows: steps, the five combinators, and reporting runs.

Model-backed leaves live in `tui_assist.workflow.prompt`, imported on demand, so importing the
engine loads neither pydantic nor a provider SDK.
"""

from __future__ import annotations

from tui_assist.core.budget import BudgetExhausted
from tui_assist.workflow.combinators import (
    Attempt,
    Candidate,
    Chain,
    Judged,
    Judgement,
    OrchestratorWorkers,
    Parallel,
    Refine,
    Refined,
    RefineOutcome,
    RoundResult,
    Route,
    RouteError,
    Synthesis,
)
from tui_assist.workflow.reporting import node_shape, run_reporting
from tui_assist.workflow.step import (
    FunctionStep,
    Step,
    WorkflowBudget,
    WorkflowBudgetTracker,
    WorkflowContext,
    step,
    summarize,
)

__all__ = [
    "Attempt",
    "BudgetExhausted",
    "Candidate",
    "Chain",
    "FunctionStep",
    "Judged",
    "Judgement",
    "OrchestratorWorkers",
    "Parallel",
    "Refine",
    "RefineOutcome",
    "Refined",
    "RoundResult",
    "Route",
    "RouteError",
    "Step",
    "Synthesis",
    "WorkflowBudget",
    "WorkflowBudgetTracker",
    "WorkflowContext",
    "node_shape",
    "run_reporting",
    "step",
    "summarize",
]
