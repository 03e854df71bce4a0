# pyright: strict
"""The data route: answering from the user's database through the guarded `sql_query` tool."""

from __future__ import annotations

import re

from tui_assist.core.conversation import Message, ToolResultBlock, ToolUseBlock
from tui_assist.core.model import ModelRequest, ToolSpec
from tui_assist.core.nodes import ToolCallScope
from tui_assist.core.observer import NullObserver
from tui_assist.flows.grounded.base import WORDS, GroundedDeps, GroundedError, StateStep, named_table
from tui_assist.flows.grounded.model_calls import complete
from tui_assist.flows.grounded.sql import (
    SQL_TOOL_NAME,
    SqlSource,
    quote_identifier,
    quote_literal,
    schema_text,
)
from tui_assist.flows.grounded.state import FlowState, SqlCall
from tui_assist.workflow import WorkflowContext

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


class QueryDataStep(StateStep):
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
        if observer is None or ctx.parent_id is None:  # nowhere to report the call
            observer = NullObserver()
        call_id = f"sql#{len(state.sql_calls) + 1}"
        with ToolCallScope(
            observer, ctx.parent_id or "", use.id, use.name, dict(use.input), node_id=ctx.new_node_id()
        ) as scope:
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
            scope.finish(text, is_error=is_error)
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
        table = named_table(state.question, tables)
        if table is None:
            state.outcome = "out_of_scope"
            state.note = "the rules planner found no table named in the question"
            return
        question = state.question.casefold()
        words = set(WORDS.findall(question))
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
