"""Project trust: what a project folder brings along runs only once the user has trusted it.

A cloned repository can carry hooks (`.tui-assist/settings.toml`), MCP servers (`.mcp.json`) and
sub-agents (`.claude/agents/`, `.tui-assist/agents/`); each runs code or steers the model. So they
wait until the user trusts the project, and the trust is given to *those files as they were*: the
state file in the data dir keeps, per workdir, a digest of the files' paths and bytes. A file that
changes, appears or goes away changes the digest, and the user is asked again. What the user
configured themselves (the user config dir) is never gated.

Any part that reads project files calls `ProjectTrust.status(workdir, files)` with the files it
would act on, and runs them only when that answers `trusted`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

log = logging.getLogger(__name__)

TRUST_FILE = "project-trust.json"
"""The state file's name in the data dir."""

TrustStatus = Literal["trusted", "untrusted", "changed"]
"""`untrusted`: never trusted; `changed`: trusted once, but the files are not what they were."""


def project_digest(workdir: Path, files: Iterable[Path]) -> str:
    """The sha256 over the files' paths (relative to `workdir` where they are inside it) and bytes.

    A missing or unreadable file counts as its path with a marker, so its later appearance changes
    the digest too.
    """
    digest = hashlib.sha256()
    root = workdir.resolve()
    named: list[tuple[str, Path]] = []
    for file in files:
        path = file if file.is_absolute() else root / file
        try:
            name = path.relative_to(root).as_posix()
        except ValueError:
            name = path.as_posix()
        named.append((name, path))
    for name, path in sorted(set(named)):
        digest.update(name.encode() + b"\0")
        try:
            data = path.read_bytes()
        except OSError:
            digest.update(b"\1missing\0")
            continue
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


class ProjectTrust:
    """The projects the user trusted, and the digest of their files when they did, in the data dir."""

    def __init__(self, data_dir: Path) -> None:
        """Read and write the trust state in `data_dir` (created when the first trust is saved)."""
        self.path = data_dir / TRUST_FILE

    def _load(self) -> dict[str, str]:
        try:
            data: Any = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return {}
        return {str(k): v for k, v in projects.items() if isinstance(v, str)}

    def status(self, workdir: Path, files: Iterable[Path]) -> TrustStatus:
        """Whether the project in `workdir` is trusted with `files` as they are now.

        Args:
            workdir: The project folder.
            files: The project files that would run or be read (hooks' settings, `.mcp.json`,
                agent files). None at all: nothing needs trust, so `trusted`.
        """
        files = list(files)
        if not files:
            return "trusted"
        saved = self._load().get(str(workdir.resolve()))
        if saved is None:
            return "untrusted"
        return "trusted" if saved == project_digest(workdir, files) else "changed"

    def trust(self, workdir: Path, files: Iterable[Path]) -> bool:
        """Trust the project in `workdir` with `files` as they are now (written atomically).

        Returns:
            Whether it was saved (False: the state file could not be written; trusted for this run only).
        """
        from tui_assist.tools.safe_io import replace_file

        projects = self._load()
        projects[str(workdir.resolve())] = project_digest(workdir, files)
        data = json.dumps({"projects": projects}, indent=1, sort_keys=True).encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(self.path, data, str(self.path))
        except Exception:
            log.warning("cannot save the project trust to %s", self.path, exc_info=True)
            return False
        return True
