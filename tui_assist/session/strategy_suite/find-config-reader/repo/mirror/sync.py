"""Copy what changed."""

import shutil
from pathlib import Path


def sync(options, dry_run=False):
    source, target = Path(options.source), Path(options.target)
    for path in source.rglob("*"):
        dest = target / path.relative_to(source)
        if path.is_file() and (not dest.exists() or dest.stat().st_mtime < path.stat().st_mtime):
            print(f"copy {path} -> {dest}")
            if not dry_run:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, dest)
