"""Checkpoints around every turn, and rewinding a turn's files and/or its conversation.

Before each turn the workdir is snapshotted into a shadow git repository in the data dir
(`session.checkpoints`), and again after it; the store records the pair per workdir, in order
(`store.checkpoints`). Rewinding turn T restores the files to T's `before` snapshot: what turns
changed is put back, what they created is deleted, and whatever changed outside the recorded
pairs is the user's own work, kept and listed. The conversation side marks T and every later
turn as rewound, so they leave the history the model is sent. The headless `rewind` command and
the TUI's `/rewind` both go through `plan_rewind` and `apply_rewind`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tui_assist.session.checkpoints import (
    CheckpointError,
    Checkpoints,
    FileChange,
    KeptFile,
    RestorePlan,
    TurnSnapshots,
)

if TYPE_CHECKING:
    from tui_assist.store.db import Store

log = logging.getLogger(__name__)

RewindScope = Literal["files", "conversation", "both"]

PRUNE_AGE = timedelta(days=30)
PRUNE_COUNT = 500


class RewindError(Exception):
    """The rewind can't be done as asked; the message is one line for the user."""


class TurnCheckpoints:
    """The snapshots around each turn of one workdir, recorded in the store."""

    def __init__(self, store: Store, data_dir: Path, workdir: Path) -> None:
        """Prepare (nothing is run until the first snapshot).

        Args:
            store: Where the snapshot pairs are recorded.
            data_dir: The data dir, which holds the shadow repositories.
            workdir: The workdir the turns run in.
        """
        self.store = store
        self.checkpoints = Checkpoints(data_dir, workdir)
        self._warm_up: asyncio.Task[None] | None = None
        self._unchanged: asyncio.Task[None] | None = None
        """Recording the pair of the last turn that changed no file, once its snapshot is taken."""
        self._pending: set[asyncio.Task[None]] = set()
        """Every such recording not yet done (`aclose` stops them)."""
        self._commits: dict[int, str] = {}
        """The `before` snapshot of each checkpoint recorded and not yet finished."""
        self.disabled: str | None = None
        """Why snapshots are off for this session (a failure is reported once, then they stop)."""

    def warm_up(self) -> None:
        """Take a first snapshot in the background, so the first turn doesn't wait for it."""
        if self._warm_up is None:
            self._warm_up = asyncio.create_task(self._first())

    async def _first(self) -> None:
        try:
            await self.checkpoints.snapshot("session")
            await self.checkpoints.prune(PRUNE_AGE, PRUNE_COUNT)
        except CheckpointError as exc:
            self.disabled = str(exc)
        except Exception as exc:  # snapshots must never stop the chat
            log.exception("checkpoints: warm-up failed")
            self.disabled = str(exc)

    async def aclose(self) -> None:
        """Stop a warm-up, or the snapshot of a turn that changed no file, still under way.

        Left running, it would be cancelled by `asyncio.run`'s shutdown, where (Python 3.11) a git
        process cancelled mid-start can leave the shutdown waiting for it forever. Cancelling kills
        its git, and the next snapshot clears what a killed git leaves (`ShadowRepo._locked`); the
        turn it was for has no pair then, and a rewind to it uses the next one (`plan_rewind`).
        """
        for task in (self._warm_up, *self._pending):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait([task], timeout=10)

    def unchanged(self, before: asyncio.Task[int | None]) -> None:
        """Finish, without waiting, the checkpoint of a turn that made no call that could change a file.

        Its pair is its `before` snapshot twice, recorded when that snapshot is done (the next
        turn's snapshot waits for it).

        Args:
            before: The task taking the turn's `before` snapshot (it returns the checkpoint's id).
        """
        self._unchanged = task = asyncio.create_task(self._finish_unchanged(before))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _finish_unchanged(self, before: asyncio.Task[int | None]) -> None:
        try:
            checkpoint_id = await before
        except asyncio.CancelledError:
            before.cancel()  # stopped (`aclose`): so is the snapshot, and its git is killed
            raise
        commit = self._commits.pop(checkpoint_id, None) if checkpoint_id is not None else None
        if checkpoint_id is None or commit is None or self.disabled is not None:
            return
        try:
            await self.store.finish_checkpoint(checkpoint_id, commit)
        except Exception:
            log.exception("checkpoints: recording a turn that changed nothing failed")

    async def before(self, turn_id: str, warnings: list[str]) -> int | None:
        """Snapshot before a turn and record it; None (and a warning) when that failed."""
        earlier = self._unchanged  # taken now: a later one may be waiting for this very snapshot
        if self._warm_up is not None:
            await asyncio.shield(self._warm_up)
        if earlier is not None:
            await asyncio.shield(earlier)
        if self.disabled is not None:
            return None
        try:
            snapshot = await self.checkpoints.snapshot(f"before:{turn_id}")
            if snapshot.skipped:
                names = ", ".join(s.path for s in snapshot.skipped[:3])
                more = f" and {len(snapshot.skipped) - 3} more" if len(snapshot.skipped) > 3 else ""
                warnings.append(f"rewind won't restore {names}{more}: too large or unreadable")
            checkpoint_id = await self.store.record_checkpoint(
                workdir=str(self.checkpoints.workdir), before=snapshot.commit, turn_id=turn_id
            )
            self._commits[checkpoint_id] = snapshot.commit
            return checkpoint_id
        except Exception as exc:
            self.disabled = str(exc)
            log.exception("checkpoints: snapshot before a turn failed")
            warnings.append(f"file checkpoints are off for this session: {exc}")
            return None

    async def after(self, checkpoint_id: int | None) -> None:
        """Snapshot after a turn (whatever its outcome) and record it."""
        if checkpoint_id is None or self.disabled is not None:
            return
        self._commits.pop(checkpoint_id, None)
        try:
            snapshot = await self.checkpoints.snapshot("after")
            await self.store.finish_checkpoint(checkpoint_id, snapshot.commit)
        except Exception as exc:
            self.disabled = str(exc)
            log.exception("checkpoints: snapshot after a turn failed")


@dataclass(frozen=True, slots=True)
class RewindPlan:
    """What rewinding a turn would do; nothing is changed until `apply_rewind`."""

    turn_id: str
    scope: RewindScope
    files: RestorePlan | None
    """The file side (None when only the conversation is rewound, or no snapshot exists)."""
    turns: tuple[str, ...]
    """Turns the conversation side takes out (this one and every later one)."""
    problem: str | None = None
    """Why the files can't be rewound (no snapshot, pruned), when the scope asks for them."""
    workdir: str | None = None
    """The workdir the turn ran in (the files side restores there)."""

    def to_json(self) -> dict[str, object]:
        """The plan as `rewind --json` prints it."""
        files = self.files
        return {
            "turn_id": self.turn_id,
            "workdir": self.workdir,
            "scope": self.scope,
            "restore": list(files.restore) if files else [],
            "delete": list(files.delete) if files else [],
            "changed_by_you": [c.path for c in files.user_changed] if files else [],
            "kept": [{"path": k.path, "reason": k.reason} for k in files.kept] if files else [],
            "turns": list(self.turns),
            "problem": self.problem,
        }


@dataclass(slots=True)
class RewindResult:
    """What `apply_rewind` did."""

    restored: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    kept: tuple[KeptFile, ...] = ()
    turns: tuple[str, ...] = ()


async def turn_changes(store: Store, data_dir: Path, turn_id: str) -> list[FileChange] | None:
    """The files a turn changed, or None when it has no complete snapshot pair."""
    row = await store.turn_checkpoint(turn_id)
    if row is None or row.after is None:
        return None
    try:
        return await Checkpoints(data_dir, Path(row.workdir)).changed_files(row.before, row.after)
    except CheckpointError:
        return None


async def plan_rewind(
    store: Store, data_dir: Path, turn_id: str, scope: RewindScope, *, workdir: Path | None = None
) -> RewindPlan:
    """Work out what rewinding `turn_id` would do (the workdir is snapshotted, nothing changed).

    Args:
        store: The store that holds the turn and its snapshot pairs.
        data_dir: The data dir holding the shadow repositories.
        turn_id: The turn to go back to before (an id or a unique prefix of one).
        scope: The files, the conversation, or both.
        workdir: The folder the user said the turn belongs to (`rewind --workdir`), if they did.

    Raises:
        RewindError: when the turn is unknown, or belongs to another folder than `workdir`.
    """
    try:
        turn_id = await store.resolve_turn_id(turn_id)
    except LookupError as exc:
        raise RewindError(f"{exc} (see `tui-assist history show ID`)") from exc
    turn = await store.get_turn(turn_id)
    assert turn is not None
    if workdir is not None:
        conversation = await store.get_conversation(turn.conversation_id)
        assert conversation is not None
        if Path(conversation.workdir).resolve() != workdir.resolve():
            raise RewindError(
                f"turn {turn_id} belongs to {conversation.workdir}, not {workdir} "
                f"(run it with --workdir {conversation.workdir}, or without --workdir)"
            )
    turns = tuple(await _turns_from(store, turn.conversation_id, turn.seq)) if scope != "files" else ()
    if scope == "conversation":
        return RewindPlan(turn_id, scope, None, turns)
    row = await store.turn_checkpoint(turn_id)
    if row is None:
        # A turn that changed no file may have ended before its snapshot did (`ask` exits without
        # it): the files before it are those before the next change recorded in its workdir.
        conversation = await store.get_conversation(turn.conversation_id)
        assert conversation is not None
        workdir_key = str(Path(conversation.workdir).expanduser().resolve())
        row = await store.first_checkpoint_after(workdir_key, turn.started_at)
    if row is None:
        return RewindPlan(turn_id, scope, None, turns, "this turn has no file snapshot")
    since = await store.checkpoints_since(row.workdir, row.id)
    pairs = [TurnSnapshots(r.before, r.after) for r in since]
    try:
        files = await Checkpoints(data_dir, Path(row.workdir)).plan_restore(row.before, pairs)
    except CheckpointError as exc:
        return RewindPlan(turn_id, scope, None, turns, str(exc))
    return RewindPlan(turn_id, scope, files, turns, workdir=row.workdir)


async def apply_rewind(
    store: Store, data_dir: Path, plan: RewindPlan, *, overwrite_user_changes: bool = False
) -> RewindResult:
    """Carry out a plan: restore the files, then take the turns out of the conversation.

    Raises:
        RewindError: when the files can't be restored (e.g. the workdir changed since the plan).
    """
    result = RewindResult()
    if plan.files is not None and plan.workdir is not None:
        checkpoints = Checkpoints(data_dir, Path(plan.workdir))
        try:
            restored = await checkpoints.restore(plan.files, overwrite_user_changes=overwrite_user_changes)
        except CheckpointError as exc:
            raise RewindError(str(exc)) from exc
        # The restore is a change the app made: recorded like a turn's, a later rewind won't take
        # it for the user's own work.
        row_id = await store.record_checkpoint(workdir=plan.workdir, before=restored.before)
        await store.finish_checkpoint(row_id, restored.after)
        result.restored, result.deleted, result.kept = restored.restored, restored.deleted, restored.kept
    if plan.scope != "files" and plan.turns:
        result.turns = tuple(await store.rewind_conversation(plan.turn_id))
    return result


async def _turns_from(store: Store, conversation_id: str, seq: int) -> list[str]:
    rows = await store.turns_page(conversation_id, after_seq=seq - 1, limit=10_000)
    return [row.id for row in rows]
