"""Scoring runs that remember: results cached in SQLite, resumable, cancellable.

A score is keyed by (model identity, template, item content), so re-scoring
after an edit touches only the changed items and a cancelled or killed run
picks up where it stopped. Each finished batch is written in its own short
transaction, so a kill loses at most the batch that was running.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields, is_dataclass

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.scoring.backend import ContinuationScore, ModelBackend
from piqa_tui.core.scoring.results import ItemScore, item_content_hash
from piqa_tui.core.scoring.templates import DEFAULT_TEMPLATE, Template, get_template

Progress = Callable[[int, int], None]
SOLUTION_ONLY = "+solution-only"  # the suffix Template.solution_only gives a template's name

_SCHEMA = """
CREATE TABLE IF NOT EXISTS model_scores (
    model     TEXT NOT NULL,
    template  TEXT NOT NULL,
    item_hash TEXT NOT NULL,
    logliks   TEXT NOT NULL,
    n_tokens  TEXT NOT NULL,
    scored_at REAL NOT NULL,
    PRIMARY KEY (model, template, item_hash)
) WITHOUT ROWID
"""

# Which (model, template) pairs were scored, with what a listing needs to show and rebuild them: the
# model's display name and the template's own fields (its key is a hash, so the text is kept here).
_RUNS_SCHEMA = """
CREATE TABLE IF NOT EXISTS model_runs (
    model         TEXT NOT NULL,
    template      TEXT NOT NULL,
    model_name    TEXT NOT NULL,
    template_spec TEXT NOT NULL,
    updated_at    REAL NOT NULL,
    PRIMARY KEY (model, template)
) WITHOUT ROWID
"""

_LOOKUP_CHUNK = 500  # stays under SQLite's bound-parameter limit

DEFAULT_BATCH_ITEMS = 16


@dataclass(frozen=True)
class RunRecord:
    """What the listing of scored runs keeps of a (model, template) pair besides its keys."""

    model_name: str  # for display: the model's file name, or the served model's name
    template_spec: dict[str, object]  # the template's fields, enough to build it again

    @classmethod
    def of(cls, model_key: str, model_name: str, template: Template) -> RunRecord:
        return cls(model_name or model_key, {f.name: getattr(template, f.name) for f in fields(template)})


def _plain(value: object) -> object:
    """A template field JSON has no type for (a metadata rule): its fields, else its text. Only a record:
    ``stored`` rebuilds a template from a known one with the same key first."""
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else str(value)


def display_name(info: dict[str, object]) -> str:
    """A backend's ``describe()`` as a short model name: the GGUF file's name, or the served model's."""
    return str(info.get("file") or info.get("model") or info.get("identity") or "")


class ScoreCache:
    """Scores stored in the ``model_scores`` table of a SQLite connection (the workspace's).

    The connection must be used from one thread at a time; a background
    scoring worker should open its own.
    """

    def __init__(self, conn: sqlite3.Connection, *, create: bool = True) -> None:
        """``create=False`` reads a workspace opened read-only: no table is made (see ``stored.stored_runs``)."""
        self.conn = conn
        if create:
            conn.execute(_SCHEMA)
            conn.execute(_RUNS_SCHEMA)

    def lookup(self, model: str, template: str, hashes: Iterable[str]) -> dict[str, tuple[ContinuationScore, ...]]:
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, tuple[ContinuationScore, ...]] = {}
        for start in range(0, len(wanted), _LOOKUP_CHUNK):
            chunk = wanted[start : start + _LOOKUP_CHUNK]
            rows = self.conn.execute(
                "SELECT item_hash, logliks, n_tokens FROM model_scores "
                f"WHERE model = ? AND template = ? AND item_hash IN ({','.join('?' * len(chunk))})",
                (model, template, *chunk),
            )
            for item_hash, logliks, n_tokens in rows:
                found[item_hash] = tuple(
                    ContinuationScore(ll, n) for ll, n in zip(json.loads(logliks), json.loads(n_tokens))
                )
        return found

    def store(
        self,
        model: str,
        template: str,
        rows: Iterable[tuple[str, Sequence[ContinuationScore]]],
        run: RunRecord | None = None,
    ) -> None:
        """Write one batch atomically, in its own short transaction (with ``run``'s listing entry, when given)."""
        now = time.time()
        records = [
            (
                model,
                template,
                item_hash,
                json.dumps([s.loglik for s in scores]),
                json.dumps([s.n_tokens for s in scores]),
                now,
            )
            for item_hash, scores in rows
        ]
        # Inside a caller's open transaction a savepoint keeps their work theirs to commit.
        nested = self.conn.in_transaction
        self.conn.execute("SAVEPOINT score_cache" if nested else "BEGIN IMMEDIATE")
        try:
            self.conn.executemany(
                "INSERT OR REPLACE INTO model_scores "
                "(model, template, item_hash, logliks, n_tokens, scored_at) VALUES (?, ?, ?, ?, ?, ?)",
                records,
            )
            if run is not None:
                self.conn.execute(
                    "INSERT OR REPLACE INTO model_runs (model, template, model_name, template_spec, updated_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (
                        model,
                        template,
                        run.model_name,
                        json.dumps(run.template_spec, ensure_ascii=False, default=_plain),
                        now,
                    ),
                )
        except BaseException:
            if nested:
                self.conn.execute("ROLLBACK TO score_cache")
                self.conn.execute("RELEASE score_cache")
            else:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("RELEASE score_cache" if nested else "COMMIT")

    def count(self, model: str | None = None) -> int:
        if model is None:
            return self.conn.execute("SELECT count(*) FROM model_scores").fetchone()[0]
        return self.conn.execute("SELECT count(*) FROM model_scores WHERE model = ?", (model,)).fetchone()[0]


def score_items(
    backend: ModelBackend,
    items: Iterable[Item],
    template: Template | str = DEFAULT_TEMPLATE,
    cache: ScoreCache | sqlite3.Connection | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    *,
    solution_only: bool = False,
    batch_items: int | None = None,
) -> list[ItemScore]:
    """Score ``items`` with ``backend``, reusing and filling ``cache``.

    Returns the scores in item order. When ``cancel`` is set the run stops
    after the batch in flight and returns only the items scored so far (cached
    ones included); everything finished is already in the cache, so calling
    again resumes. ``progress(done, total)`` is called once with what the cache
    already had and after every batch. The backend is loaded only if some item
    needs the model. ``solution_only`` scores the solutions without the prompt.
    """
    if isinstance(template, str):
        template = get_template(template)
    if solution_only:
        template = template.solution_only()
    if isinstance(cache, sqlite3.Connection):
        cache = ScoreCache(cache)

    items = list(items)
    requests = [template.request(item) for item in items]  # bad items fail before any model work
    hashes = [item_content_hash(item) for item in items]
    info = backend.describe()
    model_key = str(info["identity"])
    run = RunRecord.of(model_key, display_name(info), template)
    results: list[ItemScore | None] = [None] * len(items)

    if cache is not None:
        found = cache.lookup(model_key, template.key, hashes)
        for i, h in enumerate(hashes):
            if h in found and len(found[h]) == len(items[i].solutions):
                results[i] = ItemScore.build(items[i], template, found[h], cached=True)

    todo = [i for i, r in enumerate(results) if r is None]
    total, done = len(items), len(items) - len(todo)
    if progress is not None:
        progress(done, total)

    if todo:
        backend.load()
    chunk: int = batch_items or getattr(backend, "batch_items", None) or DEFAULT_BATCH_ITEMS
    for start in range(0, len(todo), chunk):
        if cancel is not None and cancel.is_set():
            break
        batch = todo[start : start + chunk]
        scored = backend.score([requests[i] for i in batch])
        for i, scores in zip(batch, scored):
            results[i] = ItemScore.build(items[i], template, scores)
        if cache is not None:
            cache.store(model_key, template.key, [(hashes[i], s) for i, s in zip(batch, scored)], run)
        done += len(batch)
        if progress is not None:
            progress(done, total)

    return [r for r in results if r is not None]
