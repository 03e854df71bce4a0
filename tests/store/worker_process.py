"""A separate process for the store tests: `python -m tests.store.worker_process MODE ...`.

- `write DATA_DIR CONVERSATION_ID TAG COUNT GO_FILE`: open the store, touch `TAG.ready` beside
  GO_FILE, wait for GO_FILE, then begin and commit COUNT turns into the conversation; print `ok`.
- `crash DATA_DIR [TAG]`: commit turn `TAGdone`, begin turn `TAGcut`, print the conversation id
  and the turns this open recovered, then SIGKILL itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

from tests.store.helpers import plain_events, plain_result
from tui_assist.store import Store


async def write(data_dir: Path, conversation_id: str, tag: str, count: int, go: Path) -> None:
    store = await Store.open(data_dir)
    try:
        go.with_name(f"{tag}.ready").touch()
        deadline = time.monotonic() + 30
        while not go.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        for i in range(count):
            turn_id = f"{tag}-{i}"
            prompt, answer = f"{tag} prompt {i}", f"{tag} answer {i}"
            await store.begin_turn(
                conversation_id=conversation_id, turn_id=turn_id, strategy="agent", prompt=prompt
            )
            await store.commit_turn(
                conversation_id, plain_result(turn_id, prompt, answer), plain_events(turn_id, answer)
            )
    finally:
        await store.close()
    print("ok", flush=True)


async def crash(data_dir: Path, tag: str) -> None:
    store = await Store.open(data_dir)
    conversation_id = await store.create_conversation(title="crash", model="m", workdir="/w")
    done, cut = f"{tag}done", f"{tag}cut"
    await store.begin_turn(conversation_id=conversation_id, turn_id=done, strategy="agent", prompt="first")
    await store.commit_turn(conversation_id, plain_result(done, "first", "kept"), plain_events(done, "kept"))
    await store.begin_turn(conversation_id=conversation_id, turn_id=cut, strategy="agent", prompt="second")
    print(json.dumps({"conversation_id": conversation_id, "recovered": store.recovered}), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    mode, *args = sys.argv[1:]
    if mode == "write":
        data_dir, conversation_id, tag, count, go = args
        asyncio.run(write(Path(data_dir), conversation_id, tag, int(count), Path(go)))
    elif mode == "crash":
        asyncio.run(crash(Path(args[0]), args[1] if len(args) > 1 else ""))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
