"""`@` in the TUI: fuzzy completion over the workdir's files, and the files attached on send."""

from __future__ import annotations

from pathlib import Path

from tests.ui.helpers import FakeToolbox, settings, wait_until
from tui_assist.providers.scripted import ScriptedProvider
from tui_assist.ui.app import TuiAssistApp
from tui_assist.ui.widgets.completion import CompletionList
from tui_assist.ui.widgets.prompt import Prompt
from tui_assist.ui.widgets.turn_parts import Notice


def _project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    for name in ("src/app.py", "src/util/helpers.py", "docs/guide.md", "node_modules/x/app.js"):
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"contents of {name}\n")
    return work


def _app(work: Path, tmp_path: Path, provider: ScriptedProvider) -> TuiAssistApp:
    return TuiAssistApp(
        settings(work, data_dir=tmp_path / "data"),
        provider_factory=lambda: provider,
        toolbox_factory=lambda: FakeToolbox(work),
    )


async def _settle(app: TuiAssistApp, pilot) -> None:
    await app.session.wait_ready()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_at_completes_a_path_and_sending_attaches_the_file(tmp_path: Path) -> None:
    work = _project(tmp_path)
    provider = ScriptedProvider(["It prints."])
    app = _app(work, tmp_path, provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        completions = app.query_one(CompletionList)
        prompt = app.query_one(Prompt)
        await pilot.press(*"explain @ap")
        await wait_until(pilot, lambda: completions.is_open)  # the listing is made in a thread
        labels = [item.label for item in completions.items]
        assert labels[0] == "src/app.py"
        assert "node_modules/x/app.js" not in labels  # the walk skips dependency installs
        await pilot.press("enter")  # enter picks a file; it does not send
        assert prompt.text == "explain @src/app.py " and not completions.is_open
        assert provider.requests == []
        await pilot.press(*"please", "enter")
        await _settle(app, pilot)

        [request] = provider.requests
        sent = request.messages[-1].text
        assert '<file path="src/app.py">\ncontents of src/app.py' in sent
        assert sent.endswith("explain @src/app.py please")
        notices = [n.source for n in app.query(Notice) if n.has_class("-attachments")]
        assert notices == ["- `attached src/app.py (23 characters)`"]
        store = app.session.store
        assert store is not None and app.session.conversation_id is not None
        [turn] = await store.turns_page(app.session.conversation_id)
        assert turn.prompt == "explain @src/app.py please"


async def test_a_directory_completes_without_a_space_and_attaches_its_listing(tmp_path: Path) -> None:
    work = _project(tmp_path)
    provider = ScriptedProvider(["Two files."])
    app = _app(work, tmp_path, provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        completions = app.query_one(CompletionList)
        await pilot.press(*"list @sr")
        await wait_until(pilot, lambda: completions.is_open)
        assert completions.items[0].label == "src/"
        await pilot.press("tab")
        assert app.query_one(Prompt).text == "list @src/"
        await wait_until(pilot, lambda: completions.is_open)  # it goes on into the folder
        assert {item.label for item in completions.items} >= {"src/app.py", "src/util/helpers.py"}
        await pilot.press("escape", "enter")
        await _settle(app, pilot)
        sent = provider.requests[0].messages[-1].text
        assert '<directory path="src/"' in sent and "app.py" in sent


async def test_a_path_outside_the_workdir_is_never_attached(tmp_path: Path) -> None:
    work = _project(tmp_path)
    (tmp_path / "secret.txt").write_text("top secret")
    provider = ScriptedProvider(["Can't see it."])
    app = _app(work, tmp_path, provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        app.query_one(Prompt).load_text("read @../secret.txt")
        await pilot.press("enter")
        await _settle(app, pilot)
        assert "top secret" not in provider.requests[0].messages[-1].text
        [notice] = [n.source for n in app.query(Notice) if n.has_class("-attachments")]
        assert "not attached: @../secret.txt: outside the working directory" in notice
        warnings = [n.source for n in app.query(Notice) if n.has_class("-warning")]
        assert warnings == []  # said once, under the prompt


async def test_enter_after_a_path_typed_out_sends_at_once(tmp_path: Path) -> None:
    work = _project(tmp_path)
    provider = ScriptedProvider(["Seen."])
    app = _app(work, tmp_path, provider)
    async with app.run_test(size=(110, 30)) as pilot:
        await _settle(app, pilot)
        completions = app.query_one(CompletionList)
        await pilot.press(*"see @docs/guide.m")
        await wait_until(pilot, lambda: completions.is_open)
        await pilot.press("d", "enter")
        await _settle(app, pilot)
        assert len(provider.requests) == 1
        assert provider.requests[0].messages[-1].text.endswith("see @docs/guide.md")
