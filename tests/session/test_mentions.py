from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tui_assist.core.text import CompletionSpan
from tui_assist.session.mentions import (
    MAX_DEPTH,
    Completion,
    FuzzyMatcher,
    MentionCompleter,
    expand_mentions,
    find_mentions,
    format_mention,
    list_candidates,
    mention_at,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(autouse=True)
def plain_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No user or system git config (a global excludes file would change what is ignored), and no
    repository above tmp_path is ever found."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


def write(root: Path, relative: str, content: str | bytes = "") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with tracked, untracked and ignored files."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, ".gitignore", "*.log\nbuild/\n")
    write(root, "README.md", "# demo\n")
    write(root, "src/app.py", "print('app')\n")
    write(root, "src/util/strings.py", "")
    git(root, "add", "-A")
    write(root, "src/new_module.py", "")  # untracked, not ignored
    write(root, "debug.log", "noise")  # ignored
    write(root, "build/out.txt", "noise")  # ignored directory
    write(root, "src/trace.log", "noise")  # ignored, below the workdir subfolder too
    return root


# ---------------------------------------------------------------------------------------------
# Candidates


@needs_git
def test_git_lists_tracked_and_untracked_files_but_not_ignored_ones(repo: Path) -> None:
    listing = list_candidates(repo)
    assert listing.source == "git"
    assert not listing.truncated
    assert sorted(listing.paths) == [
        ".gitignore",
        "README.md",
        "src/",
        "src/app.py",
        "src/new_module.py",
        "src/util/",
        "src/util/strings.py",
    ]


@needs_git
def test_git_paths_are_relative_to_a_workdir_below_the_repository_root(repo: Path) -> None:
    listing = list_candidates(repo / "src")
    assert listing.source == "git"
    assert sorted(listing.paths) == ["app.py", "new_module.py", "util/", "util/strings.py"]


@needs_git
def test_an_ignored_workdir_inside_a_repository_is_walked(repo: Path) -> None:
    listing = list_candidates(repo / "build")
    assert listing.source == "walk"
    assert listing.paths == ("out.txt",)


def test_the_walk_skips_version_control_dependencies_caches_and_virtualenvs(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root, "main.py")
    write(root, ".github/workflows/ci.yml")  # hidden, but people mention it
    write(root, ".git/config")
    write(root, "node_modules/left-pad/index.js")
    write(root, ".venv/lib/site.py")
    write(root, "pkg/__pycache__/mod.cpython-311.pyc")
    write(root, "pkg/mod.py")
    write(root, "env/pyvenv.cfg")  # a virtualenv under another name
    write(root, "env/lib/python3.11/site-packages/x.py")
    listing = list_candidates(root)
    assert listing.source == "walk"
    assert sorted(listing.paths) == [
        ".github/",
        ".github/workflows/",
        ".github/workflows/ci.yml",
        "env/",
        "main.py",
        "pkg/",
        "pkg/mod.py",
    ]


def test_the_walk_lists_symlinks_without_following_them(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.txt")
    root = tmp_path / "plain"
    write(root, "a.txt")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "loop").symlink_to(root, target_is_directory=True)
    assert sorted(list_candidates(root).paths) == ["a.txt", "linked", "loop"]


def test_the_walk_is_bounded_in_entries_keeping_the_shallowest(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    for name in ("a.txt", "b.txt", "deep/one/two/three.txt"):
        write(root, name)
    listing = list_candidates(root, max_entries=4)
    assert listing.truncated
    assert listing.paths == ("deep/", "a.txt", "b.txt", "deep/one/")


def test_the_walk_is_bounded_in_depth(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root, "top.txt")
    write(root, "a/b/c/deep.txt")
    listing = list_candidates(root, max_depth=1)
    assert listing.truncated
    assert sorted(listing.paths) == ["a/", "a/b/", "top.txt"]
    assert "a/b/c/deep.txt" in list_candidates(root, max_depth=MAX_DEPTH).paths


async def test_the_completer_lists_once_and_again_on_refresh(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root, "first.py")
    completer = MentionCompleter(root)
    assert completer.complete("first") == []  # nothing listed yet
    assert completer.listing is None and completer.age is None

    listing = await completer.load()
    assert listing.paths == ("first.py",)
    assert [c.path for c in completer.complete("first")] == ["first.py"]

    write(root, "second.py")
    assert await completer.load() is listing  # cached
    assert completer.complete("second") == []
    await completer.load(refresh=True)
    assert [c.path for c in completer.complete("second")] == ["second.py"]
    assert completer.age is not None and completer.age >= 0


def test_importing_the_module_loads_neither_textual_nor_pydantic() -> None:
    """The TUI imports it for completion before its first frame."""
    code = (
        "import sys, tui_assist.session.mentions; print(sorted({'textual', 'pydantic'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------------------------------------
# Matching


def ranked(paths: list[str], query: str, **options: int) -> list[str]:
    return [completion.path for completion in FuzzyMatcher(paths, **options).search(query)]


def test_a_match_in_the_file_name_ranks_above_one_in_a_folder() -> None:
    assert ranked(["app/main.py", "src/app.py", "docs/other.md"], "app") == ["src/app.py", "app/main.py"]


def test_word_starts_and_runs_rank_above_letters_inside_words() -> None:
    paths = ["lib/myapp.py", "apple/x.py", "a/p/p.txt", "x/my_app.txt"]
    assert ranked(paths, "app") == ["x/my_app.txt", "apple/x.py", "a/p/p.txt", "lib/myapp.py"]


def test_consecutive_letters_rank_above_word_starts_above_scattered_letters() -> None:
    paths = ["x/axbxc.txt", "x/a_b_c.txt", "x/abc.txt"]
    assert ranked(paths, "abc") == ["x/abc.txt", "x/a_b_c.txt", "x/axbxc.txt"]


def test_the_shorter_path_wins_a_tie() -> None:
    assert ranked(["deeper/still/a.py", "b/a.py", "a.py"], "a.py") == ["a.py", "b/a.py", "deeper/still/a.py"]


def test_matching_ignores_case_and_reports_the_matched_positions() -> None:
    [completion] = FuzzyMatcher(["src/UserService.ts", "README.md"]).search("usrsvc")
    assert completion.path == "src/UserService.ts"
    assert "".join(completion.path[i] for i in completion.positions).lower() == "usrsvc"
    assert list(completion.positions) == sorted(completion.positions)


def test_the_positions_prefer_the_file_name() -> None:
    [completion] = FuzzyMatcher(["app/src/app.py"]).search("app")
    assert completion.positions == (8, 9, 10)


def test_an_empty_query_lists_the_shortest_paths_and_dot_slash_is_ignored() -> None:
    matcher = FuzzyMatcher(["src/deep/file.py", "b.py", "src/", "a.md"])
    assert [c.path for c in matcher.search("", limit=3)] == ["a.md", "b.py", "src/"]
    assert [c.path for c in matcher.search("./file")] == ["src/deep/file.py"]


def test_non_matches_are_left_out() -> None:
    assert ranked(["abc.txt", "cba.txt"], "ac") == ["abc.txt"]
    assert ranked(["abc.txt"], "zz") == []


def test_directories_are_completions_too() -> None:
    completion, file = FuzzyMatcher(["src/", "src/a.py"]).search("src/")
    assert completion.path == "src/" and completion.is_dir and not file.is_dir
    assert completion.mention == "@src/"


def test_typing_a_query_one_key_at_a_time_gives_what_a_fresh_search_gives() -> None:
    paths = [f"pkg{i % 7}/mod{i % 13}/file_{i}.py" for i in range(3000)] + ["pkg3/mod4/target.py"]
    typed = FuzzyMatcher(paths, score_all=50, verify_all=500)
    query = "pkg3/mod4/targ"
    for end in range(1, len(query) + 1):
        results = typed.search(query[:end])
    fresh = FuzzyMatcher(paths, score_all=50, verify_all=500).search(query)
    assert results == fresh
    assert results[0].path == "pkg3/mod4/target.py"
    # and back: a shorter query after a longer one is answered from scratch, not narrowed
    assert typed.search("pkg3/mod4/t") == FuzzyMatcher(paths).search("pkg3/mod4/t")


def test_a_broad_query_still_finds_the_best_names_among_many_matches() -> None:
    """With thresholds this low every query goes through the pre-selection of likely winners."""
    noise = [f"area{i % 50}/sub{i % 17}/module_{i}.txt" for i in range(5000)]
    paths = [*noise, "very/long/folder/names/that/go/deep/readme.md"]
    matcher = FuzzyMatcher(paths, score_all=0, verify_all=0, preselect=10, examine=200)
    assert matcher.search("readme")[0].path == "very/long/folder/names/that/go/deep/readme.md"
    assert matcher.search("r")[0].path == "very/long/folder/names/that/go/deep/readme.md"
    for completion in matcher.search("ae"):  # whatever is picked really matches
        picked = "".join(completion.path[i] for i in completion.positions)
        assert picked.lower() == "ae"


def test_a_broad_query_finds_an_acronym_of_word_starts() -> None:
    noise = [f"area{i % 50}/sub{i % 17}/config_{i}.txt" for i in range(5000)]
    paths = [*noise, "services/billing/cmd/cart_form.go"]  # longer than any: last in every group
    matcher = FuzzyMatcher(paths, score_all=0, verify_all=0, preselect=10, examine=len(paths))
    assert matcher.search("cfg")[0].path == "services/billing/cmd/cart_form.go"


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"score_all": 0, "verify_all": 0, "preselect": 5, "examine": 50},
        {"score_all": 3, "verify_all": 40},
    ],
)
def test_every_completion_really_matches_even_with_odd_characters(options: dict[str, int]) -> None:
    alphabet = "abAB_-./ ]^[\\$*+?()|İß0é"
    rng = random.Random(16)
    paths = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16))) for _ in range(400)]
    matcher = FuzzyMatcher(paths, **options)
    for _ in range(150):
        query = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4)))
        needle = query.removeprefix("./").lower()
        for completion in matcher.search(query):
            picked = "".join(completion.path[i] for i in completion.positions)
            assert picked.lower() == needle, (query, completion)


# ---------------------------------------------------------------------------------------------
# Finding mentions


def paths_of(prompt: str) -> list[str]:
    return [mention.path for mention in find_mentions(prompt)]


def test_mentions_start_a_word() -> None:
    assert paths_of("@src/app.py explain, then compare with @lib/b.py") == ["src/app.py", "lib/b.py"]
    assert paths_of("write to me@example.com or a@b.c") == []
    assert paths_of("(see @notes.md) and [@todo.txt] and `@x.py`") == ["notes.md", "todo.txt", "x.py"]
    assert paths_of("a lone @ sign") == []


def test_trailing_punctuation_is_not_part_of_the_path() -> None:
    assert paths_of("look at @a.py, @b.py; then @c.py. And @dir/!") == ["a.py", "b.py", "c.py", "dir/"]
    assert paths_of("up @.. and here @. and @src/.") == ["..", ".", "src/."]


def test_a_quoted_path_may_hold_spaces_and_escaped_quotes() -> None:
    assert paths_of('read @"my notes.txt" and @"say \\"hi\\".md"') == ["my notes.txt", 'say "hi".md']
    assert paths_of('an open @"quote never closed') == []
    assert paths_of('empty @"" quotes') == []


def test_mention_spans_cover_the_mention_itself() -> None:
    prompt = 'x @a.py, @"b c.md" y'
    assert [(m.start, m.end) for m in find_mentions(prompt)] == [(2, 7), (9, 18)]
    assert prompt[2:7] == "@a.py" and prompt[9:18] == '@"b c.md"'


def test_mentions_in_fenced_code_are_ignored() -> None:
    prompt = "fix @app.py:\n```python\n@dataclass\nclass A: ...\n```\nand @b.py\n~~~\n@never\n"
    assert paths_of(prompt) == ["app.py", "b.py"]


@pytest.mark.parametrize(
    "path", ["src/app.py", "my notes.txt", 'say "hi".md', "odd,", "end.", "back\\slash x"]
)
def test_format_mention_reads_back_as_the_same_path(path: str) -> None:
    assert paths_of(f"see {format_mention(path)} please") == [path]


def test_mention_at_the_cursor() -> None:
    text = "compare @src/ap with me@x.org"
    cursor = text.index("ap") + 2
    query = mention_at(text, cursor)
    assert query is not None and (query.query, query.start, query.end) == ("src/ap", 8, 15)
    assert mention_at(text, len(text)) is None  # in an e-mail address
    assert mention_at(text, cursor + 1) is None  # after the space
    assert mention_at("@", 1) == CompletionSpan(0, 1, "")
    # the cursor in the middle of a mention: the whole mention is replaced
    middle = mention_at("x @src/app.py y", 6)
    assert middle is not None and (middle.query, middle.start, middle.end) == ("src", 2, 13)


def test_mention_at_inside_quotes() -> None:
    text = 'open @"my no'
    query = mention_at(text, len(text))
    assert query is not None and (query.query, query.start, query.end) == ("my no", 5, len(text))
    closed = 'open @"my notes.txt" now'
    query = mention_at(closed, closed.index("notes"))
    assert query is not None and (query.query, query.end) == ("my ", closed.index(" now"))
    assert mention_at(closed, len(closed)) is None


def test_a_completion_replaces_the_span_mention_at_gives() -> None:
    text = "explain @my"
    query = mention_at(text, len(text))
    assert query is not None
    completion = Completion("my notes.txt", (0, 1), 1)
    edited = text[: query.start] + completion.mention + text[query.end :]
    assert edited == 'explain @"my notes.txt"'
    assert paths_of(edited) == ["my notes.txt"]


# ---------------------------------------------------------------------------------------------
# Attaching


def test_a_text_file_is_attached_in_a_labelled_block_before_the_prompt(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py", "def main():\n    return 1\n")
    result = expand_mentions("explain @src/app.py please", tmp_path)
    assert result.prompt == "explain @src/app.py please"
    assert result.text == (
        "<attached-files>\n"
        '<file path="src/app.py">\n'
        "def main():\n    return 1\n"
        "</file>\n"
        "</attached-files>\n\n"
        "explain @src/app.py please"
    )
    [attached] = result.attached
    assert (attached.path, attached.kind, attached.chars, attached.omitted) == ("src/app.py", "file", 25, 0)
    assert result.refused == ()
    assert result.notices() == ["attached src/app.py (25 characters)"]


def test_a_prompt_without_mentions_is_sent_as_it_is(tmp_path: Path) -> None:
    result = expand_mentions("hello, mail me@example.com", tmp_path)
    assert result.text == "hello, mail me@example.com"
    assert result.attached == () and result.refused == ()


def test_a_missing_path_stays_plain_text_with_a_notice(tmp_path: Path) -> None:
    write(tmp_path, "file.txt")
    prompt = 'what do @nothing/here.py, @file.txt/below and @"no such.md" do, asks @nothing/here.py'
    result = expand_mentions(prompt, tmp_path)
    assert result.text == prompt
    assert [(r.path, r.reason) for r in result.refused] == [
        ("nothing/here.py", "missing"),
        ("file.txt/below", "missing"),
        ("no such.md", "missing"),
    ]
    assert result.notices() == [
        "not attached: @nothing/here.py: no such file or directory",
        "not attached: @file.txt/below: no such file or directory",
        'not attached: @"no such.md": no such file or directory',
    ]


def test_a_binary_file_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "data.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")  # images attach as images
    write(tmp_path, "latin1.txt", "caf\xe9".encode("latin-1"))
    result = expand_mentions("@data.bin @latin1.txt", tmp_path)
    assert result.attached == ()
    assert [(r.path, r.reason) for r in result.refused] == [
        ("data.bin", "binary"),
        ("latin1.txt", "not_text"),
    ]
    assert result.text == "@data.bin @latin1.txt"


def test_a_directory_attaches_its_listing(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py")
    write(tmp_path, "src/util/x.py")
    write(tmp_path, "src/__pycache__/app.cpython-311.pyc")
    result = expand_mentions("what is in @src", tmp_path)
    assert '<directory path="src/" entries="3">\napp.py\nutil/\nutil/x.py\n</directory>' in result.text
    [attached] = result.attached
    assert (attached.kind, attached.entries) == ("directory", 3)
    assert result.notices() == ["attached src/ (listing, 3 entries)"]


@needs_git
def test_a_directory_listing_in_a_repository_leaves_ignored_files_out(repo: Path) -> None:
    result = expand_mentions("@src/", repo)
    assert (
        '<directory path="src/" entries="4">\napp.py\nnew_module.py\nutil/\nutil/strings.py\n</directory>'
        in (result.text)
    )


def test_a_long_directory_listing_is_bounded_to_its_shallowest_entries(tmp_path: Path) -> None:
    for name in ("z0.txt", "z1.txt", "z2.txt", "a/deep/x.txt"):
        write(tmp_path, f"d/{name}")
    result = expand_mentions("@d/", tmp_path, max_dir_entries=4)
    assert (
        '<directory path="d/" entries="4">\na/\nz0.txt\nz1.txt\nz2.txt\n[... more entries not listed ...]\n'
        in (result.text)
    )


def test_paths_outside_the_workdir_are_never_attached(tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    write(workdir, "inside.txt", "inside")
    secret = write(tmp_path, "secret.txt", "secret")
    (workdir / "escape.txt").symlink_to(secret)
    (workdir / "escape_dir").symlink_to(tmp_path, target_is_directory=True)
    result = expand_mentions(
        f"@../secret.txt @{secret} @escape.txt @escape_dir/secret.txt @/etc/passwd", workdir
    )
    assert result.attached == ()
    assert [r.reason for r in result.refused] == ["outside"] * 5
    assert "secret" not in result.text.replace("secret.txt", "")


def test_an_absolute_path_or_a_symlink_inside_the_workdir_is_attached(tmp_path: Path) -> None:
    absolute = write(tmp_path, "absolute.txt", "absolute\n")
    target = write(tmp_path, "docs/real.txt", "real\n")
    (tmp_path / "link.txt").symlink_to(target)
    result = expand_mentions(f"@{absolute} and @link.txt and @docs/real.txt", tmp_path)
    assert [a.path for a in result.attached] == ["absolute.txt", "link.txt"]  # real.txt is link.txt
    assert '<file path="absolute.txt">\nabsolute\n</file>' in result.text
    assert '<file path="link.txt">\nreal\n</file>' in result.text


def test_a_fifo_is_refused_without_being_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    result = expand_mentions("@pipe", tmp_path)  # opening it to read would block forever
    [refused] = result.refused
    assert (refused.reason, refused.detail) == ("special", "not a regular file (a FIFO)")


def test_a_file_past_the_limit_is_cut_on_a_line_with_a_marker(tmp_path: Path) -> None:
    lines = "".join(f"line {i:03d}\n" for i in range(100))  # 9 characters a line
    write(tmp_path, "big.txt", lines)
    result = expand_mentions("@big.txt", tmp_path, max_file_chars=95)
    [attached] = result.attached
    assert (attached.chars, attached.omitted) == (90, 810)
    assert (
        '<file path="big.txt">\n' + lines[:90] + "[... 810 characters truncated ...]\n</file>" in result.text
    )
    assert result.notices() == ["attached big.txt (90 characters, 810 more cut)"]


def test_a_huge_file_is_read_only_as_far_as_needed(tmp_path: Path) -> None:
    write(tmp_path, "huge.log", "x" * 2_000_000)
    result = expand_mentions("@huge.log", tmp_path, max_file_chars=1000)
    [attached] = result.attached
    assert (attached.chars, attached.omitted) == (1000, 1_999_000)


def test_attachments_share_a_budget(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "a" * 60 + "\n")
    write(tmp_path, "b.txt", "b" * 60 + "\n")
    write(tmp_path, "c.txt", "c\n")
    result = expand_mentions("@a.txt @b.txt @c.txt", tmp_path, max_total_chars=100)
    assert [(a.path, a.chars) for a in result.attached] == [("a.txt", 61), ("b.txt", 39)]
    [refused] = result.refused
    assert (refused.path, refused.reason) == ("c.txt", "limit")


def test_a_file_mentioned_twice_or_spelled_twice_is_attached_once(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "x = 1\n")
    result = expand_mentions("@a.py and @./a.py and again @a.py", tmp_path)
    assert [a.path for a in result.attached] == ["a.py"]
    assert result.text.count("<file ") == 1


def test_an_empty_file_and_a_quoted_name_with_spaces(tmp_path: Path) -> None:
    write(tmp_path, "empty.txt")
    write(tmp_path, "my notes.txt", "remember\n")
    result = expand_mentions('@empty.txt @"my notes.txt"', tmp_path)
    assert [(a.path, a.chars) for a in result.attached] == [("empty.txt", 0), ("my notes.txt", 9)]
    assert '<file path="empty.txt">\n</file>' in result.text
    assert '<file path="my notes.txt">\nremember\n</file>' in result.text
