from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.wait import wait_until
from tui_assist.store import Store

ROOT = Path(__file__).resolve().parents[2]


async def test_two_processes_write_one_database_at_once(data_dir: Path, tmp_path: Path) -> None:
    store = await Store.open(data_dir)
    try:
        conversation_id = await store.create_conversation(title="shared", model="m", workdir="/w")
    finally:
        await store.close()
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.store.worker_process",
                "write",
                str(data_dir),
                conversation_id,
                tag,
                "50",
                str(go),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    ready = [tmp_path / f"{tag}.ready" for tag in "ab"]
    await wait_until(lambda: all(path.exists() for path in ready), timeout=60, what="both stores open")
    go.touch()  # both stores are open and waiting: start them together
    results = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == "ok"

    store = await Store.open(data_dir)
    try:
        assert await store.integrity_check() == "ok"
        turns = await store.turns_page(conversation_id, limit=1000, offset=0)
        assert len(turns) == 100
        assert [t.seq for t in turns] == list(range(1, 101))
        assert {t.outcome for t in turns} == {"answered"}
        assert {t.id for t in turns} == {f"{tag}-{i}" for tag in "ab" for i in range(50)}
        # each process's turns are in its own order; the two interleave
        assert [t.id for t in turns if t.id.startswith("a-")] == [f"a-{i}" for i in range(50)]
        assert len(await store.load_history(conversation_id)) == 200
        assert len(await store.audit_lines(limit=1000)) == 100
    finally:
        await store.close()
