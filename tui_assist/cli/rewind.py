"""`tui-assist rewind TURN_ID`: restore the files and/or the conversation to before a turn."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from tui_assist.cli.commands import PrefixedErrors
from tui_assist.cli.errors import EXIT_OK
from tui_assist.session.config_source import ConfigError
from tui_assist.session.factory import NoHistory, open_store

if TYPE_CHECKING:
    from tui_assist.session.config import Settings
    from tui_assist.session.rewind import RewindPlan, RewindResult

_KEPT = {
    "created_by_user": "you created it after the turn",
    "changed_by_user": "you changed it after the turn",
    "too_large": "too large for a snapshot",
    "predates_snapshot": "older than the snapshot",
}


async def rewind(args: argparse.Namespace, settings: Settings) -> int:
    """Plan the rewind and print it; with `--yes`, carry it out."""
    from tui_assist.paths import data_dir
    from tui_assist.session.rewind import RewindError, apply_rewind, plan_rewind

    try:
        store = await open_store(settings, create=False)
    except NoHistory as exc:
        raise ConfigError(f"no turn {args.turn_id!r}: {exc}") from exc
    folder = data_dir(settings.data_dir)
    try:
        # --workdir is a global flag: a rewind restores the turn's own folder, the flag confirms it.
        workdir = settings.workdir if "workdir" in vars(args) else None
        plan = await plan_rewind(store, folder, args.turn_id, args.scope or "both", workdir=workdir)
        result = await apply_rewind(store, folder, plan) if args.yes else None
    except RewindError as exc:
        raise ConfigError(str(exc)) from exc
    finally:
        await store.close()
    if args.json:
        data = plan.to_json() | {"applied": result is not None}
        if result is not None:
            data |= {"restored": list(result.restored), "deleted": list(result.deleted)}
        print(json.dumps(data, ensure_ascii=False))
    else:
        _print(plan, result)
    if plan.problem and plan.scope != "conversation":
        print(f"the files can't be rewound: {plan.problem}", file=PrefixedErrors("rewind"))
    return EXIT_OK


def _print(plan: RewindPlan, result: RewindResult | None) -> None:
    lines = [f"Rewind to before turn {plan.turn_id} ({plan.scope}):"]
    files = plan.files
    if files is not None:
        lines += [f"  restore  {path}" for path in files.restore]
        lines += [f"  delete   {path}" for path in files.delete]
        lines += [f"  keep     {k.path} ({_KEPT.get(k.reason, k.reason)})" for k in files.kept]
        lines += [
            f"  keep     {c.path} (you changed it after the turn: not overwritten)"
            for c in files.user_changed
        ]
        if files.is_empty:
            lines.append("  the files are as they were before that turn")
    if plan.turns:
        lines.append(f"  conversation: {len(plan.turns)} turn(s) taken out, this one and later ones")
    if result is None:
        lines.append("Nothing was changed. Run again with --yes to rewind.")
    else:
        lines.append(
            f"Rewound: {len(result.restored)} restored, {len(result.deleted)} deleted, "
            f"{len(result.kept)} kept; {len(result.turns)} turn(s) taken out of the conversation."
        )
    print("\n".join(lines))
