"""Turn strategies: `AgentTurn` and `RefineTurn`, the two values of core's `TurnStrategy`.

They sit above the workflow engine because `RefineTurn` runs on its `Refine` combinator; the
protocol and the result they return live in `tui_assist.core.turn`.
"""
