"""Fetching a plugin or marketplace: a local folder copied, or a git URL cloned, running nothing of it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Final

_GIT_CONFIG: Final = ("core.hooksPath=/dev/null", "core.fsmonitor=false", "core.symlinks=false")
"""Cloning runs nothing from the repository and creates no symlinks that point out of it."""
_GIT_TIMEOUT: Final = 300.0


class PluginError(Exception):
    """A plugin or marketplace command that cannot be carried out; the message is one line."""


def is_git_url(source: str) -> bool:
    """Whether `source` is a git URL rather than a local folder."""
    return "://" in source or source.startswith("git@")


def normal_source(source: str) -> str:
    """A URL as given; a local folder as an absolute path (so the record still finds it)."""
    if is_git_url(source):
        return source
    path = Path(source).expanduser()
    if not path.is_dir():
        raise PluginError(f"{source} is not a folder or a git URL")
    return str(path.resolve())


def fetch_source(source: str, target: Path, ref: str | None = None) -> list[str]:
    """Copy a local folder or shallow-clone a git URL into `target`; one line per thing left out.

    A copy leaves out `.git` and every symlink that points out of the folder (a plugin's command
    file linked to `~/.ssh/id_rsa` would put that key in a prompt); a clone makes no symlinks
    (`core.symlinks=false`), of the branch or tag `ref` when given.
    """
    if not is_git_url(source):
        root = Path(source).resolve()
        left_out: list[str] = []

        def ignore(folder: str, names: list[str]) -> set[str]:
            skipped = {".git"} & set(names)
            for name in names:
                path = Path(folder) / name
                if path.is_symlink() and not path.resolve().is_relative_to(root):
                    left_out.append(f"{path}: a link to {path.resolve()}, outside the plugin; not copied")
                    skipped.add(name)
            return skipped

        # Links inside the folder are copied as the files they name: the copy stands on its own.
        try:
            shutil.copytree(source, target, ignore=ignore, ignore_dangling_symlinks=True)
        except OSError as exc:  # shutil.Error too: it lists the files that failed
            raise PluginError(f"cannot copy {source}: {exc}") from None
        return left_out
    command = ["git"]
    for setting in _GIT_CONFIG:
        command += ["-c", setting]
    command += ["clone", "--quiet", "--depth", "1", "--no-recurse-submodules"]
    command += [*(["--branch", ref] if ref else []), "--", source, str(target)]
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(target.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
    }
    for name in ("SSH_AUTH_SOCK", "TMPDIR", "http_proxy", "https_proxy", "no_proxy"):
        if name in os.environ:
            env[name] = os.environ[name]
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=_GIT_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PluginError(f"git clone {source} failed: {exc}") from None
    if done.returncode != 0:
        why = " ".join(done.stderr.split()) or f"exit status {done.returncode}"
        raise PluginError(f"git clone {source} failed: {why}")
    shutil.rmtree(target / ".git", ignore_errors=True)  # a snapshot: no repository config stays
    return []
