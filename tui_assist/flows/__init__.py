"""Concrete workflows built on the core, one subpackage per flow.

`helpdesk` (five workflow patterns on help-desk tickets, drawn in the Explorer), `docs` (control
policies for documentation tasks, `bench docs`) and `grounded` (grounded answers over your own
documents and data, `flow grounded`). Each package's `__init__` is its public face; each has a
`commands` module with its CLI commands, minus argument parsing.
"""
