"""The session's model, used from worker threads one at a time: score one item, or a whole run.

llama.cpp's context is not thread-safe, so every use of the backend holds
``ScoringEngine``'s lock. A whole-set run takes the lock one chunk of items at
a time and steps aside between chunks when the user asks for the current item
(``m``), so that answer comes within a chunk, not after the run. Scores go
through ``core.score_cache`` on a SQLite connection opened by the thread
that uses it: a cancelled run keeps every finished chunk, and the next run
resumes from the cache. Holds no Textual objects.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import WorkspaceError
from piqa_tui.core.scoring.backend import ModelChoice
from piqa_tui.core.scoring.backends.kind import scoring_backend
from piqa_tui.core.scoring.cache import ScoreCache, score_items
from piqa_tui.core.scoring.factory import backend_for
from piqa_tui.core.scoring.process import ModelCrashed
from piqa_tui.core.scoring.results import ItemScore, item_content_hash
from piqa_tui.core.scoring.stored import StoredRun, model_results
from piqa_tui.core.scoring.templates import LETTERS, Template
from piqa_tui.core.workspace.log import open_existing
from piqa_tui.core.workspace.project import Project

# A whole-set run holds the model one chunk of items at a time: about CHUNK_SECONDS of work, so `m`
# waits at most that long and progress moves as often, while chunks stay big enough to batch well.
CHUNK_SECONDS = 2.0
MIN_CHUNK, MAX_CHUNK = 2, 16


@dataclass(frozen=True)
class RunProgress:
    """Where a whole-set run stands: ``done`` of ``total`` (cached ones included), ``computed`` by the model."""

    done: int
    total: int
    computed: int = 0
    seconds: float = 0.0  # time spent computing (model loading excluded)
    stage: str = ""  # "loading model" before the first chunk
    scores: tuple[ItemScore, ...] = ()  # finished since the last report (the cached ones come first)

    @property
    def rate(self) -> float | None:
        """Items per second the model scores; None until it has scored some."""
        return self.computed / self.seconds if self.computed and self.seconds > 0 else None

    @property
    def eta(self) -> float | None:
        rate = self.rate
        return (self.total - self.done) / rate if rate else None


@dataclass
class RunResult:
    scores: list[ItemScore]
    items: list[Item]  # the items scored, matching ``scores`` by id
    cancelled: bool = False
    computed: int = 0
    seconds: float = 0.0
    skipped: list[str] = field(default_factory=list)  # ids of items that cannot be scored (too few solutions)

    @property
    def rate(self) -> float | None:
        return self.computed / self.seconds if self.computed and self.seconds > 0 else None


def scorable(item: Item) -> bool:
    return 2 <= len(item.solutions) <= len(LETTERS)


class ScoringEngine:
    """One session's model: created lazily, loaded on first use, kept until the session ends."""

    def __init__(self, project: Project, choice: ModelChoice) -> None:
        scoring_backend(choice.kind).usable(choice)  # ModelError: what is wrong with the choice, before anything loads
        self.project = project
        self.choice = choice
        # A local model runs in a child process: a crash in llama.cpp ends a score, not the session.
        self.backend = backend_for(choice)
        self._lock = threading.Lock()  # held by whichever thread runs the model
        self._waiting = 0  # single-item requests waiting for the lock: a run steps aside for them
        self._waiting_lock = threading.Lock()

    # ----------------------------------------------------------------- facts

    def identity(self) -> str:
        """The cache key of the model (name, size, a hash of its ends); ModelError when the file is unusable."""
        return str(self.backend.describe()["identity"])

    @property
    def loaded(self) -> bool:
        return bool(getattr(self.backend, "loaded", False))

    def describe(self) -> str:
        return scoring_backend(self.choice.kind).describe(self.choice, self.backend.describe())

    # -------------------------------------------------------------- workspace

    @contextmanager
    def _cache(self) -> Iterator[ScoreCache | None]:
        """The score cache on a connection of the calling thread (none without a workspace)."""
        workspace = self.project.workspace
        if workspace is None:
            yield None
            return
        conn = open_existing(workspace.path)
        try:
            yield ScoreCache(conn)
        finally:
            conn.close()

    def cached(self, items: Sequence[Item], template: Template, solution_only: bool = False) -> list[ItemScore]:
        """The scores the workspace already holds for ``items`` (no model work at all)."""
        return [s for s in self._lookup(items, template, solution_only) if s is not None]

    def _lookup(self, items: Sequence[Item], template: Template, solution_only: bool) -> list[ItemScore | None]:
        """Each item's cached score, or None (aligned with ``items``)."""
        if solution_only:
            template = template.solution_only()
        hashes = [item_content_hash(item) if scorable(item) else "" for item in items]
        identity = self.identity()
        with self._cache() as cache:
            if cache is None:
                return [None] * len(items)
            found = cache.lookup(identity, template.key, (h for h in hashes if h))
        out: list[ItemScore | None] = []
        for item, item_hash in zip(items, hashes):
            scores = found.get(item_hash) if item_hash else None
            ok = scores is not None and len(scores) == len(item.solutions)
            out.append(ItemScore.build(item, template, scores, cached=True) if ok else None)  # type: ignore[arg-type]
        return out

    # ---------------------------------------------------------------- scoring

    @contextmanager
    def _first_in_line(self) -> Iterator[None]:
        with self._waiting_lock:
            self._waiting += 1
        try:
            with self._lock:
                yield
        finally:
            with self._waiting_lock:
                self._waiting -= 1

    def score_one(self, item: Item, template: Template, solution_only: bool = False) -> ItemScore:
        """Score one item now (from the cache when it is there); a running run waits meanwhile."""
        with self._first_in_line(), self._cache() as cache, _naming([item]):
            return score_items(self.backend, [item], template, cache, solution_only=solution_only)[0]

    def run(
        self,
        items: Sequence[Item],
        template: Template,
        *,
        solution_only: bool = False,
        progress: Callable[[RunProgress], None] = lambda p: None,
        cancel: threading.Event | None = None,
    ) -> RunResult:
        """Score every item, the cached ones first; stops between chunks once ``cancel`` is set."""
        cancel = cancel or threading.Event()
        wanted = [item for item in items if scorable(item)]
        skipped = [item.id for item in items if not scorable(item)]
        found = self._lookup(wanted, template, solution_only)
        known = [score for score in found if score is not None]
        todo = [item for item, score in zip(wanted, found) if score is None]
        total = len(wanted)
        result = RunResult(list(known), wanted, skipped=skipped)
        stage = "loading model" if todo and not self.loaded else ""
        progress(RunProgress(len(known), total, stage=stage, scores=tuple(known)))
        if todo and not self.loaded:
            with self._lock:
                self.backend.load()
            progress(RunProgress(len(known), total))
        size = MIN_CHUNK * 2  # until the speed is known
        with self._cache() as cache:
            start = 0
            while start < len(todo):
                self._step_aside(cancel)
                if cancel.is_set():
                    break
                chunk = todo[start : start + size]
                start += len(chunk)
                began = time.perf_counter()
                with self._lock, _naming(chunk):
                    scores = score_items(
                        self.backend, chunk, template, cache, solution_only=solution_only, batch_items=len(chunk)
                    )
                result.seconds += time.perf_counter() - began
                result.scores.extend(scores)
                result.computed += sum(not s.cached for s in scores)
                progress(RunProgress(len(result.scores), total, result.computed, result.seconds, scores=tuple(scores)))
                if result.rate:
                    size = max(MIN_CHUNK, min(MAX_CHUNK, int(result.rate * CHUNK_SECONDS)))
        result.cancelled = cancel.is_set() and len(result.scores) < total
        return result

    def _step_aside(self, cancel: threading.Event) -> None:
        """Let single-item requests have the model before the next chunk."""
        while self._waiting and not cancel.is_set():
            time.sleep(0.01)

    def close(self) -> None:
        with self._lock:
            self.backend.close()


@contextmanager
def _naming(items: Sequence[Item]) -> Iterator[None]:
    """Name the items being scored in the message of a model process that died meanwhile."""
    try:
        yield
    except ModelCrashed as exc:
        which = f"item {items[0].id}" if len(items) == 1 else f"items {items[0].id} to {items[-1].id}"
        raise ModelCrashed(
            f"{exc} ({which}); the scores computed before it are kept, and scoring again restarts the model"
        ) from None


def workspace_has_scores(project: Project) -> bool:
    """Whether the workspace holds any model scores (cheap: no model file is read)."""
    workspace = project.workspace
    if workspace is None:
        return False
    try:
        conn = open_existing(workspace.path, timeout=5.0)
        try:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'model_scores'"
            ).fetchone()
            return bool(found) and conn.execute("SELECT 1 FROM model_scores LIMIT 1").fetchone() is not None
        finally:
            conn.close()
    except (sqlite3.Error, WorkspaceError):
        return False


def stored_model_results(
    project: Project, items: Sequence[Item], known: Mapping[str, Template]
) -> list[tuple[StoredRun, list[ItemScore]]]:
    """Every model and template scored for the project (``stored.model_results``), on a connection of the
    calling thread; nothing without a workspace or scores."""
    if not workspace_has_scores(project):
        return []
    conn = open_existing(project.workspace.path)  # type: ignore[union-attr]
    try:
        return model_results(conn, items, known)
    finally:
        conn.close()
