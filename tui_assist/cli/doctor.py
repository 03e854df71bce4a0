"""`tui-assist doctor`: print `session/doctor.py`'s report, as text or `--json`."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from tui_assist.cli.errors import EXIT_OK

if TYPE_CHECKING:
    from tui_assist.session.config import Settings
    from tui_assist.session.doctor import DoctorReport

_TRUST = {
    "trusted": "trusted",
    "untrusted": "untrusted: its hooks, MCP servers and agents do not run",
    "changed": "changed since you trusted it: its hooks, MCP servers and agents wait for trust again",
}


def doctor(args: argparse.Namespace, settings: Settings) -> int:
    """Print every place read, what loaded from it, what was skipped and why, and the trust."""
    from tui_assist import paths
    from tui_assist.session.doctor import diagnose

    report = diagnose(
        settings,
        config_file=paths.config_file(),
        config_dir=paths.config_dir(),
        data_dir=paths.data_dir(settings.data_dir),
    )
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(report_lines(report)))
    return EXIT_OK


def report_lines(report: DoctorReport) -> list[str]:
    """The text report: the workdir and its trust, then each place with `+` loaded and `-` skipped."""
    from tui_assist.session.extensions import TRUST_HINT

    root = f" (git root {report.git_root})" if report.git_root not in (None, report.workdir) else ""
    lines = [f"workdir {report.workdir}{root}"]
    trusted = report.trust == "trusted"
    lines.append(f"project trust: {_TRUST.get(report.trust, report.trust)}")
    if not trusted:
        lines.append(f"  once trusted ({TRUST_HINT}), it would run:")
        lines += [f"    {line}" for line in report.pending]
    lines.append("")
    for source in report.sources:
        state = "" if source.present else " (not there)"
        waits = " · waits for trust" if source.gated and source.present and not trusted else ""
        lines.append(f"{source.kind}: {source.path}{state}{waits}")
        lines += [f"  + {line}" for line in source.loaded]
        lines += [f"  - {line}" for line in source.skipped]
    if report.warnings:
        lines.append("")
        lines += [f"warning: {line}" for line in report.warnings]
    return lines
