"""Turn strategies: `AgentTurn`, `RefineTurn` and `ShellTurn`, subclasses of core's `TurnStrategy`.

They sit above the workflow engine because `RefineTurn` runs on its `Refine` combinator; the
base class and the result they return live in `tui_assist.core.turn`.
"""
