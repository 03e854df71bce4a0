# pyright: strict
"""The documentation domain of `bench docs`: pages, glossary, cases, tasks and the two tools.

Everything here follows the "exact semantics" of issue #7, because other fixtures are run through
it: `words()`, task validation, `search()` scoring and ordering, and `read()`'s version boundary.
The tools check their own boundaries whatever a policy proposed, so a policy can never read a
page of another version or ask for more than three hits.

Fixture loading separates *shape* from *content*. A file that is not JSON, an item that is not an
object, a missing key, a non-string value or a duplicate id makes the fixtures invalid
(`FixtureError`). What a case *says* (a blank question, version `v3`, environment `production`)
is the task validation's business: such a case loads, and every policy refuses it before running.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, cast

STOP_WORDS = frozenset("a an and are can do for how i in is it me my of on the to what with".split())
"""Words `words()` drops: they carry no topic."""
VERSIONS = ("v1", "v2")
"""The documented versions of `docuctl`."""
ENVIRONMENT = "staging"
"""The only environment this assistant covers."""
TOPICS = ("deploy", "rollback", "tokens", "config", "migrate", "releases", "logs", "health")
"""The eight topic words; a page id is `<topic>-<version>`."""
MAX_FIELD_CHARS = 100
"""Longest id, family, version or environment of a task."""
MAX_QUESTION_CHARS = 500
"""Longest question of a task."""
TOP_K_CHOICES = (1, 2, 3)
"""The hit counts `search()` accepts."""
FIXTURE_FILES = ("documents.json", "glossary.json", "cases.json")
"""The files a fixture directory holds."""

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> frozenset[str]:
    """The set of `[a-z0-9]+` runs in the casefolded text, minus `STOP_WORDS`.

    Args:
        text: Any text.

    Returns:
        The distinct words, stop words removed.
    """
    return frozenset(_WORD.findall(text.casefold())) - STOP_WORDS


class DocsToolError(Exception):
    """A tool refused its input (unknown page, wrong version, bad `top_k`); a policy sees the message."""


class FixtureError(Exception):
    """The fixture files are missing or not of the documented shapes; the message names the place."""


@dataclass(frozen=True, slots=True)
class Page:
    """One documentation page of `docuctl`."""

    id: str
    """`<topic>-<version>`, e.g. `rollback-v2`."""
    version: str
    title: str
    text: str
    command: str
    """The exact staging command the page documents."""

    def to_dict(self) -> dict[str, str]:
        """The page as JSON-ready data (what `read` shows)."""
        return {
            "id": self.id,
            "version": self.version,
            "title": self.title,
            "text": self.text,
            "command": self.command,
        }


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: a page id and its title."""

    id: str
    title: str

    def to_dict(self) -> dict[str, str]:
        """The hit as `{id, title}`."""
        return {"id": self.id, "title": self.title}


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """What a policy is asked: a question about one version, in one environment."""

    id: str
    family: str
    question: str
    version: str
    environment: str = ENVIRONMENT


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """A task with the outcome an independent checker expects."""

    id: str
    family: str
    question: str
    version: str
    expected_doc: str
    """The page id the final citation must equal (empty for a refusal case)."""
    expected_command: str
    """The command the final answer must equal, exactly (empty for a refusal case)."""
    environment: str = ENVIRONMENT

    @property
    def task(self) -> Task:
        """The case without its expectations: all a policy may see."""
        return Task(
            id=self.id,
            family=self.family,
            question=self.question,
            version=self.version,
            environment=self.environment,
        )


def validate_task(task: Task) -> str | None:
    """Check a task before any policy runs.

    Id, family, version and environment must be non-blank strings of at most 100 characters; the
    version `v1` or `v2`; the environment `staging`; the question 1..500 characters, not blank.

    Args:
        task: The task to check.

    Returns:
        None when the task may run, else why it is refused (one line).
    """
    fields: dict[str, object] = {
        "id": task.id,
        "family": task.family,
        "version": task.version,
        "environment": task.environment,
    }
    for name, value in fields.items():
        if not isinstance(value, str) or not value.strip():
            return f"{name} must be a non-blank string"
        if len(value) > MAX_FIELD_CHARS:
            return f"{name} is longer than {MAX_FIELD_CHARS} characters"
    if task.version not in VERSIONS:
        return f"unknown version {task.version!r}: docuctl is documented for v1 and v2"
    if task.environment != ENVIRONMENT:
        return f"environment {task.environment!r} is not covered: this assistant only covers staging"
    question = cast(object, task.question)  # tasks also come from untyped callers
    if not isinstance(question, str) or not question.strip():
        return "the question is blank"
    if len(question) > MAX_QUESTION_CHARS:
        return f"the question is longer than {MAX_QUESTION_CHARS} characters"
    return None


class Corpus:
    """The pages and the glossary, with the `search` and `read` tools over them.

    Args:
        pages: Every page, of every version.
        glossary: Alias word -> canonical topic word (e.g. `restore` -> `rollback`).
    """

    def __init__(self, pages: Sequence[Page], glossary: Mapping[str, str]) -> None:
        self.pages: tuple[Page, ...] = tuple(pages)
        self.glossary: dict[str, str] = dict(glossary)
        self._by_key = {(p.id, p.version): p for p in self.pages}
        self._words = {(p.id, p.version): words(p.title + " " + p.text) for p in self.pages}

    def terms(self, query: str, *, expand: bool) -> frozenset[str]:
        """The search terms of a query: its words, plus glossary targets when `expand`.

        Args:
            query: The query text.
            expand: Whether to add the glossary target of every word that has one.

        Returns:
            The terms a page is scored against.
        """
        base = words(query)
        if not expand:
            return base
        return base | {self.glossary[t] for t in base if t in self.glossary}

    def search(self, query: str, version: str, *, expand: bool, top_k: int) -> list[Hit]:
        """Rank the pages of one version against a query.

        Each page scores the number of terms occurring in `words(title + " " + text)`; pages
        scoring 0 are dropped; the rest are ordered by score descending, then id ascending.

        Args:
            query: The query text.
            version: `v1` or `v2`.
            expand: Add glossary targets to the terms.
            top_k: How many hits to return: 1, 2 or 3.

        Returns:
            Up to `top_k` hits, best first.

        Raises:
            DocsToolError: when `top_k` or `version` is not valid.
        """
        if type(top_k) is not int or top_k not in TOP_K_CHOICES:
            raise DocsToolError(f"top_k must be 1, 2 or 3, not {top_k!r}")
        if version not in VERSIONS:
            raise DocsToolError(f"unknown version {version!r}: use v1 or v2")
        terms = self.terms(query, expand=expand)
        scored: list[tuple[int, str, Page]] = []
        for page in self.pages:
            if page.version != version:
                continue
            score = len(terms & self._words[(page.id, page.version)])
            if score > 0:
                scored.append((-score, page.id, page))
        scored.sort(key=lambda item: (item[0], item[1]))
        return [Hit(page.id, page.title) for _, _, page in scored[:top_k]]

    def scores(self, query: str, version: str, *, expand: bool) -> dict[str, int]:
        """Every page's score for a query (for reports and fixture authors; not a tool).

        Args:
            query: The query text.
            version: The version whose pages are scored.
            expand: Add glossary targets to the terms.

        Returns:
            Page id -> number of matching terms, zeros included.
        """
        terms = self.terms(query, expand=expand)
        return {p.id: len(terms & self._words[(p.id, p.version)]) for p in self.pages if p.version == version}

    def read(self, page_id: str, version: str) -> Page:
        """One page, only if it exists in that version.

        Args:
            page_id: The page id, e.g. `rollback-v2`.
            version: The task's version.

        Returns:
            The page.

        Raises:
            DocsToolError: when no page has that id in that version.
        """
        page = self._by_key.get((page_id, version))
        if page is None:
            raise DocsToolError(f"no page {page_id!r} in the {version} docs")
        return page


@dataclass(frozen=True, slots=True)
class Fixtures:
    """Everything a benchmark run needs: the corpus and the cases, in file order."""

    corpus: Corpus
    cases: tuple[Case, ...]
    source: str
    """Where they were read from (`packaged` or a directory)."""

    def case(self, case_id: str) -> Case | None:
        """The case with that id, if any."""
        return next((c for c in self.cases if c.id == case_id), None)


def packaged_fixture_dir() -> Traversable:
    """The fixtures shipped in the package (works from a wheel as from a checkout)."""
    return files("tui_assist.flows.docs").joinpath("data")


def load_fixtures(directory: Path | None = None) -> Fixtures:
    """Read `documents.json`, `glossary.json` and `cases.json`.

    Args:
        directory: Where the three files are; None reads the packaged `docuctl` fixtures.

    Returns:
        The corpus and the cases.

    Raises:
        FixtureError: when a file is missing, is not JSON, or is not of the documented shape.
    """
    root: Traversable = packaged_fixture_dir() if directory is None else directory
    if directory is not None and not directory.is_dir():
        raise FixtureError(f"{directory} is not a directory")
    data = {name: _read_json(root, name) for name in FIXTURE_FILES}
    pages = _parse_pages(data["documents.json"])
    glossary = _parse_glossary(data["glossary.json"])
    cases = _parse_cases(data["cases.json"])
    return Fixtures(Corpus(pages, glossary), cases, "packaged" if directory is None else str(directory))


def _read_json(root: Traversable, name: str) -> Any:
    item = root.joinpath(name)
    try:
        text = item.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FixtureError(f"{name}: not found in {root}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FixtureError(f"{name}: cannot read: {exc}") from exc
    try:
        return json.loads(text)
    except ValueError as exc:
        raise FixtureError(f"{name}: not valid JSON: {exc}") from exc


def _objects(data: Any, name: str) -> list[dict[str, Any]]:
    if not isinstance(data, list):
        raise FixtureError(f"{name}: expected a JSON list of objects")
    items = cast(list[Any], data)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise FixtureError(f"{name}: item {i} is not an object")
    return cast(list[dict[str, Any]], items)


def _strings(item: dict[str, Any], keys: Sequence[str], where: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in keys:
        if key not in item:
            raise FixtureError(f"{where}: missing {key!r}")
        value = item[key]
        if not isinstance(value, str):
            raise FixtureError(f"{where}: {key!r} must be a string")
        out[key] = value
    return out


def _parse_pages(data: Any) -> list[Page]:
    pages: list[Page] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(_objects(data, "documents.json")):
        where = f"documents.json: item {i}"
        v = _strings(item, ("id", "version", "title", "text", "command"), where)
        if not v["id"].strip():
            raise FixtureError(f"{where}: 'id' is blank")
        if (v["id"], v["version"]) in seen:
            raise FixtureError(f"{where}: duplicate page {v['id']!r} in {v['version']!r}")
        seen.add((v["id"], v["version"]))
        pages.append(Page(v["id"], v["version"], v["title"], v["text"], v["command"]))
    return pages


def _parse_glossary(data: Any) -> dict[str, str]:
    if not isinstance(data, dict):
        raise FixtureError("glossary.json: expected a JSON object of alias word -> topic word")
    glossary: dict[str, str] = {}
    for key, value in cast(dict[str, Any], data).items():
        if not isinstance(value, str):
            raise FixtureError(f"glossary.json: the target of {key!r} must be a string")
        glossary[key] = value
    return glossary


def _parse_cases(data: Any) -> tuple[Case, ...]:
    cases: list[Case] = []
    seen: set[str] = set()
    keys = ("id", "family", "question", "version", "expected_doc", "expected_command")
    for i, item in enumerate(_objects(data, "cases.json")):
        where = f"cases.json: item {i}"
        v = _strings(item, keys, where)
        environment = ENVIRONMENT
        if "environment" in item:
            environment = _strings(item, ("environment",), where)["environment"]
        if v["id"] in seen:
            raise FixtureError(f"{where}: duplicate case id {v['id']!r}")
        seen.add(v["id"])
        cases.append(
            Case(
                id=v["id"],
                family=v["family"],
                question=v["question"],
                version=v["version"],
                expected_doc=v["expected_doc"],
                expected_command=v["expected_command"],
                environment=environment,
            )
        )
    return tuple(cases)
