"""The grounded flow as a host runs it from the chat: a folder of documents, a question, a run.

The flow itself is `tui_assist.flows.grounded`; this opens what one run needs (the glossary, the
corpus index in the data dir, an optional SQLite data source) from the session, runs it with the
host's observer, and closes them again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from tui_assist.core.observer import TurnObserver
    from tui_assist.flows.grounded import GroundedRun
    from tui_assist.session.chat import ChatSession

Leaves = Literal["rules", "model"]


async def ask_grounded(
    session: ChatSession,
    corpus: Path,
    question: str,
    observer: TurnObserver,
    *,
    leaves: Leaves = "rules",
    data: Path | None = None,
) -> GroundedRun:
    """Answer `question` from the documents in `corpus` (as `tui-assist flow grounded` does).

    Raises:
        ValueError: when `corpus` is not a folder, `data` not a file, or model leaves lack a provider.
        Exception: whatever a bad corpus, glossary or database raises.
    """
    from tui_assist.flows import grounded
    from tui_assist.flows.grounded import CorpusIndex, SqlSource, default_index_path
    from tui_assist.paths import data_dir

    if not corpus.is_dir():
        raise ValueError(f"`{corpus}` is not a folder")
    if data is not None and not data.is_file():
        raise ValueError(f"`{data}` is not a file")
    await session.wait_ready()
    if leaves == "model" and session.provider is None:
        raise ValueError("model leaves need a provider")
    sql: SqlSource | None = None
    try:
        glossary = grounded.load_glossary(corpus)
        if data is not None:
            sql = await SqlSource.open(data)
        index_path = default_index_path(data_dir(session.settings.data_dir), corpus)
        async with await CorpusIndex.open(corpus, index_path) as index:
            await index.refresh()
            return await grounded.run_grounded(
                question,
                index=index,
                sql=sql,
                glossary=glossary,
                leaves=leaves,
                provider=session.provider if leaves == "model" else None,
                observer=observer,
                store=session.store,
                caller="tui",
            )
    finally:
        if sql is not None:
            await sql.close()


async def approve_held(session: ChatSession, run_id: str, observer: TurnObserver) -> GroundedRun:
    """Release a grounded run held for approval.

    Raises:
        ApprovalError: when the run can't be approved (unknown, not held).
        ValueError: without a store.
    """
    from tui_assist.flows import grounded

    if session.store is None:
        raise ValueError("no store: held runs are kept in the store")
    return await grounded.approve_run(run_id, store=session.store, observer=observer)
