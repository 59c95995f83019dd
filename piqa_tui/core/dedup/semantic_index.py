"""Sentence vectors of a set of texts that new texts are checked against, and added to, a few at a time.

The semantic signal of ``find_duplicates`` embeds a closed set; a draft run checks batch after batch of new
drafts against the dataset and the drafts kept before them (``core/authoring/repetition.py``). Here the
dataset side is embedded once per run (through the model's embedding cache in the workspace, so a second
run embeds only what changed) and each batch costs its own embeddings and one matrix product.

The rule is the ``semantic`` signal's, within one script (a text and its translation are the
``translation`` signal's business, and a translation must not count against the text it translates):

* a model without a per-script view (the packaged all-MiniLM-L6-v2, a sentence-transformers folder):
  cosine >= the threshold (:func:`~piqa_tui.core.dedup.clusters.model_threshold`, 0.9, unless given);
* a model whose cosines crowd together by language (multilingual-e5: ``semantic_view``): vectors
  standardised within their script, as ``dedup`` does, with the mean and spread of the script's texts in
  the index **when it was built** (a script with fewer than :data:`~piqa_tui.core.dedup.translation.MIN_GROUP`
  of them is compared raw at :data:`~piqa_tui.core.dedup.e5_embeddings.SMALL_GROUP_THRESHOLD`, near copies
  only). Freezing the statistics keeps an answer from depending on how many drafts came before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from piqa_tui.core.dedup.clusters import model_threshold
from piqa_tui.core.dedup.e5_embeddings import SMALL_GROUP_THRESHOLD
from piqa_tui.core.dedup.translation import MIN_GROUP
from piqa_tui.core.text.characters import dominant_script

if TYPE_CHECKING:
    import numpy as np

    from piqa_tui.core.dedup.semantic import Embedder, Progress


@dataclass(frozen=True)
class Embedded:
    """Texts as the index compares them: their vectors (viewed), each one's threshold, and its script."""

    vectors: np.ndarray
    limits: np.ndarray
    scripts: np.ndarray  # of str; "" for a text without letters: compared with every script


class SemanticIndex:
    """Viewed unit vectors of the texts so far; :meth:`embed` then :meth:`near` checks new texts,
    :meth:`add` keeps them."""

    def __init__(
        self, embedder: Embedder, texts: Sequence[str], threshold: float | None = None, progress: Progress | None = None
    ) -> None:
        """``progress(done, total)`` follows the embedding of ``texts`` (the model's cache answers for some)."""
        self.embedder = embedder
        self.threshold = model_threshold(embedder) if threshold is None else threshold
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"semantic threshold must be in (0, 1], got {self.threshold}")
        self.stats: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
        raw = self._raw(texts, progress)
        if hasattr(embedder, "semantic_view"):
            self.stats = {}
            for script in set(raw.scripts.tolist()) - {""}:
                rows = raw.vectors[raw.scripts == script]
                if len(rows) >= MIN_GROUP:
                    self.stats[script] = (rows.mean(axis=0), rows.std(axis=0) + 1e-6)
        self.known = self._viewed(raw)

    def __len__(self) -> int:
        return len(self.known.scripts)

    def _raw(self, texts: Sequence[str], progress: Progress | None = None) -> Embedded:
        import numpy as np

        vectors = self.embedder.embed(list(texts), progress) if texts else np.zeros((0, 0), dtype=np.float32)
        return Embedded(vectors, np.zeros(len(texts)), np.array([dominant_script(t) or "" for t in texts], dtype=str))

    def _viewed(self, raw: Embedded) -> Embedded:
        """Standardised where the script has statistics (a model with a per-script view), with each row's
        threshold."""
        import numpy as np

        x = np.array(raw.vectors, dtype=np.float32)
        limits = np.full(len(x), self.threshold)
        if self.stats is None or not len(x):
            return Embedded(x, limits, raw.scripts)
        limits[:] = max(SMALL_GROUP_THRESHOLD, self.threshold)
        for script, (mean, spread) in self.stats.items():
            rows = raw.scripts == script
            z = (x[rows] - mean) / spread
            x[rows] = z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
            limits[rows] = self.threshold
        return Embedded(x, limits, raw.scripts)

    def embed(self, texts: Sequence[str]) -> Embedded:
        """New texts' vectors as the index compares them (through the model's cache)."""
        return self._viewed(self._raw(texts))

    def near(self, new: Embedded, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The index's rows (and their cosines) alike the ``k``-th new text: same script (or no letters on
        either side), cosine >= that text's threshold."""
        import numpy as np

        if not len(self):
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        cosine = self.known.vectors @ new.vectors[k]
        script = new.scripts[k]
        same = (self.known.scripts == script) | (self.known.scripts == "") | (not script)
        rows = np.flatnonzero(same & (cosine >= new.limits[k] - 1e-6))
        return rows, cosine[rows]

    def alike(self, new: Embedded, k: int, j: int) -> bool:
        """Whether the ``k``-th and ``j``-th new texts are alike by the same rule."""
        a, b = new.scripts[k], new.scripts[j]
        if a and b and a != b:
            return False
        return float(new.vectors[k] @ new.vectors[j]) >= new.limits[k] - 1e-6

    def add(self, new: Embedded, keep: Sequence[int]) -> None:
        """Keep the new texts numbered ``keep`` (rows numbered on from ``len(self)``)."""
        import numpy as np

        picked = list(keep)
        if not picked:
            return
        if not len(self):  # no vectors yet, nor their width
            self.known = Embedded(new.vectors[picked], new.limits[picked], new.scripts[picked])
            return
        self.known = Embedded(
            np.concatenate([self.known.vectors, new.vectors[picked]]),
            np.concatenate([self.known.limits, new.limits[picked]]),
            np.concatenate([self.known.scripts, new.scripts[picked]]),
        )
