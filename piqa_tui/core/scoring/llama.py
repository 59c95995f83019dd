"""The local model backend: a GGUF file run by llama.cpp (llama-cpp-python's low-level API).

Scores equal lm-evaluation-harness's: the context is tokenised with BOS, each
continuation's tokens are ``tok(ctx + cont)[len(tok(ctx)):]`` and its score is
the sum of their log-probabilities. What makes it fast is the way
``llama-perplexity --multiple-choice`` works:

* each item's solutions share one evaluation of every token they have in
  common (the context, and the first words when the solutions start alike):
  those tokens go into the batch once, tagged with all the item's sequence ids;
* several items share one ``llama_decode`` (sequence ids keep them apart);
* logits are requested only for the positions that predict a scored token,
  which matters because Gemma 3's output layer (262,144 tokens) dominates the
  cost, and a solution's last token is never evaluated at all;
* log-softmax is computed only over those rows.

The layout (``batch_layout``) also keeps every item's numbers bit-for-bit what
a lone evaluation of it would give, so a score does not depend on which items
happened to share its batch. This module only feeds that layout to llama.cpp
and reads the rows back; the file checks are ``gguf_file``'s and the CPU
probing ``machine``'s. Flash attention stays off: on CPU it
moves log-likelihoods by tenths of a nat.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections import Counter, deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from piqa_tui.core.cores import usable_cores
from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.backend import ContinuationScore, ScoreRequest
from piqa_tui.core.scoring.batch_layout import (
    MAX_SOLUTIONS,
    ROW_BLOCK,
    BatchEntry,
    BatchLayout,
    BatchShape,
    ItemTokens,
    KvCells,
    lay_out,
    pack,
)
from piqa_tui.core.scoring.gguf_file import check_model_file, model_identity
from piqa_tui.core.scoring.machine import FreeCores, cpu_flags, decide_repack, simd_lanes, threads_for

log = logging.getLogger(__name__)

_ROWS_PER_THREAD = 4  # fewer log-softmax rows than this per thread are not worth a hand-off
_MAX_SEQ = 256  # llama.cpp's LLAMA_MAX_SEQ
_SEQ_BANKS = 4  # batches whose left-over cells may stand in for padding (see batch_layout.KvCells)


# --------------------------------------------------------------------------- llama.cpp glue

_llama_lock = threading.Lock()
_llama_ready = False
_recent_log: deque[str] = deque(maxlen=20)
_log_callback = None  # keeps the ctypes callback alive


def _llama_cpp():
    """Import llama_cpp on first use (it is slow to import and optional)."""
    global _llama_ready, _log_callback
    try:
        import llama_cpp
    except ImportError:
        raise ModelError("llama-cpp-python is not installed; install it with pip install 'piqa-tui[model]'") from None
    with _llama_lock:
        if not _llama_ready:

            @llama_cpp.llama_log_callback
            def on_log(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
                # llama.cpp is chatty on stderr; keep its words for error messages instead.
                message = text.decode("utf-8", "replace").rstrip()
                if message:
                    # ggml.h of the vendored llama.cpp: WARN = 3, ERROR = 4 (llama-cpp-python's _logger.py comment
                    # still lists the older numbering, where 2 and 3 were WARN and ERROR).
                    if level in (3, 4):
                        _recent_log.append(message)
                    log.debug("llama.cpp: %s", message)

            _log_callback = on_log
            llama_cpp.llama_log_set(on_log, ctypes.c_void_p(0))
            llama_cpp.llama_backend_init()
            _llama_ready = True
    return llama_cpp


def llama_cpp_library() -> Any:
    """llama-cpp-python's low-level module, imported and initialised once (its log kept for messages): for the
    other modules that drive llama.cpp in this process (text generation)."""
    return _llama_cpp()


def last_llama_error() -> str:
    """What llama.cpp logged as the cause of the last failure (see ``_last_llama_error``)."""
    return _last_llama_error()


def clear_llama_log() -> None:
    """Forget what llama.cpp logged so far (before a load whose failure should be explained)."""
    _recent_log.clear()


def _last_llama_error() -> str:
    """The first error llama.cpp logged since the log was cleared: the cause (later lines only say that the
    load failed)."""
    for message in _recent_log:
        if "error" in message.lower() or "failed" in message.lower():
            return message.split(": ", 1)[-1] if ": " in message else message
    return _recent_log[-1] if _recent_log else "no reason given"


def _log_probs(
    logits: np.ndarray, rows: Sequence[int], row_targets: list[list[int]], targets: np.ndarray, out: np.ndarray
) -> None:
    """Fill ``out[i]`` with log p(targets[i] | row) for the targets these rows predict.

    One row at a time through a one-row scratch buffer (1 MiB with a
    262,144-token vocabulary, so it stays in cache): the row's logsumexp, stable,
    summed in float64, then each target's logit minus it. NumPy releases the
    GIL in these loops, so several threads can share the rows.
    """
    scratch = np.empty(logits.shape[1], dtype=np.float32)
    for r in rows:
        row = logits[r]
        peak = row.max()
        np.subtract(row, peak, out=scratch)
        np.exp(scratch, out=scratch)
        norm = np.log(scratch.sum(dtype=np.float64)) + peak
        predicted = row_targets[r]
        out[predicted] = row[targets[predicted]].astype(np.float64) - norm


class LlamaBackend:
    """A GGUF model on CPU or GPU through llama.cpp, scoring many items per decode.

    ``n_gpu_layers``: 0 keeps everything on the CPU, -1 offloads all layers.
    Items are packed into groups of at most ``n_batch`` tokens, one decode
    each (attention runs over the whole group, so bigger is not faster); an
    item longer than that is decoded alone in several chunks, and must fit in
    ``n_ctx``. Scores never depend on an item's neighbours in the batch. With
    ``exact`` (the default) they are also those of evaluating each
    solution on its own with every row in llama.cpp's 4-row kernels, to
    1e-5 nats (the final float64 sums are ordered differently; see
    ``batch_layout``); without it, every token the solutions share is evaluated
    once and nothing is padded (12% fewer tokens, about 6% faster on PIQA),
    but a solution's score moves from a lone evaluation by up to 1.4 nats
    (p90 0.2) on PIQA. With ``reuse_cells`` (the default) the cells the
    alignment leaves empty keep what earlier batches left there instead of
    freshly evaluated pad tokens (``batch_layout.KvCells``): the same numbers
    for fewer tokens.
    """

    batch_items = 16  # items per score() call from score_items: progress and cache granularity

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        n_gpu_layers: int = 0,
        n_threads: int | None = None,
        n_ctx: int = 4096,
        n_batch: int = 256,
        n_ubatch: int = 512,
        n_seq_max: int = 64,
        flash_attn: bool = False,
        align: int | None = None,
        exact: bool = True,
        repack: str = "auto",
        reuse_cells: bool = True,
        adapt_threads: bool = True,
    ) -> None:
        self.path = Path(path).expanduser()
        self.n_gpu_layers = n_gpu_layers
        if n_threads is None:
            n_threads = usable_cores()  # the affinity under any CPU quota
        self.n_threads = n_threads
        # Fewer threads while other processes hold cores (``machine.threads_for``); scores do not depend on it.
        self.adapt_threads = adapt_threads
        self.threads_now = n_threads
        self.free_cores: FreeCores | None = None  # set by load(); None: the thread count stays
        self.decodes_by_threads: Counter[int] = Counter()  # how many group decodes ran with each thread count
        # Ubatches hold whole multiples of 8 tokens and tile the batch (see batch_layout.BatchShape).
        self.n_ubatch = max(8, min(n_ubatch, n_batch) // 8 * 8)
        self.n_batch = max(self.n_ubatch, n_batch // self.n_ubatch * self.n_ubatch)
        self.n_ctx = max(n_ctx, self.n_batch)
        self.n_seq_max = max(3, min(n_seq_max, _MAX_SEQ))
        self.align = align  # None: the CPU backend's SIMD width, known once llama.cpp is loaded
        self.exact = exact
        self.reuse_cells = reuse_cells  # padding cells keep earlier batches' tokens instead of fresh pad tokens
        self.flash_attn = flash_attn
        self.repack = decide_repack(repack, cpu_flags())
        self._model = None
        self._ctx = None
        self._vocab = None
        self._n_vocab = 0
        self._add_bos = True
        self._bos = self._eos = -1
        self._description = ""
        self._identity: str | None = None
        self.tokens_evaluated = 0  # tokens decoded so far, for throughput figures
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None  # log-softmax helpers, started on first need
        # llama.cpp takes at most n_batch (and LLAMA_MAX_SEQ) sequence ids in a context.
        banks = min(_SEQ_BANKS, _MAX_SEQ // self.n_seq_max, self.n_batch // self.n_seq_max)
        self._kv = KvCells(self.n_seq_max, max(1, banks))
        self._n_swa = 0  # the model's sliding attention window (0: none)
        self._cells_unknown = False  # whether the cache holds cells the mirror does not know of

    # -- protocol -----------------------------------------------------------------

    def describe(self) -> dict[str, object]:
        if self._identity is None:
            check_model_file(self.path, on_cpu=False)
            self._identity = model_identity(self.path)
        stat = self.path.stat()
        return {
            "backend": "llama.cpp",
            "identity": self._identity,
            "file": self.path.name,
            "path": str(self.path),
            "size": stat.st_size,
            "mtime": stat.st_mtime,
            "model": self._description,
            "n_gpu_layers": self.n_gpu_layers,
            "n_threads": self.n_threads,
            "n_ctx": self.n_ctx,
            "n_batch": self.n_batch,
            "flash_attn": self.flash_attn,
            "repack": self.repack,
            "align": self.align,
        }

    def load(self) -> None:
        if self._ctx is not None:
            return
        check_model_file(self.path, on_cpu=self.n_gpu_layers == 0)
        lc = _llama_cpp()
        if self.align is None:
            self.align = simd_lanes(lc.llama_print_system_info().decode("ascii", "replace"))
        self.align = max(1, self.align)
        _recent_log.clear()
        mparams = lc.llama_model_default_params()
        mparams.n_gpu_layers = self.n_gpu_layers
        mparams.use_extra_bufts = self.repack
        model = lc.llama_model_load_from_file(str(self.path).encode(), mparams)
        if not model:
            raise ModelError(
                f"llama.cpp cannot load {self.path.name}: {_last_llama_error()}; "
                "the file may be truncated or of an unsupported architecture"
            )
        cparams = lc.llama_context_default_params()
        cparams.n_ctx = self.n_ctx
        cparams.n_batch = self.n_batch
        cparams.n_ubatch = self.n_ubatch
        cparams.n_seq_max = self.n_seq_max * self._kv.banks
        cparams.n_threads = cparams.n_threads_batch = self.n_threads
        # One KV buffer for all sequences: shared-prefix tokens can then belong to several.
        cparams.kv_unified = True
        cparams.swa_full = True
        cparams.flash_attn_type = (
            lc.LLAMA_FLASH_ATTN_TYPE_ENABLED if self.flash_attn else lc.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
        cparams.no_perf = True
        ctx = lc.llama_init_from_model(model, cparams)
        if not ctx:
            lc.llama_model_free(model)
            raise ModelError(
                f"llama.cpp cannot create a context for {self.path.name}: {_last_llama_error()}; "
                "try a smaller --n-ctx or fewer --n-gpu-layers"
            )
        self._model, self._ctx = model, ctx
        self.threads_now = self.n_threads
        self.free_cores = FreeCores() if self.adapt_threads and self.n_threads > 1 else None
        self._n_swa = lc.llama_model_n_swa(model)
        self._kv.clear()
        self._vocab = lc.llama_model_get_vocab(model)
        self._n_vocab = lc.llama_vocab_n_tokens(self._vocab)
        self._add_bos = bool(lc.llama_vocab_get_add_bos(self._vocab))
        self._bos = lc.llama_vocab_bos(self._vocab)
        self._eos = lc.llama_vocab_eos(self._vocab)
        buf = ctypes.create_string_buffer(256)
        lc.llama_model_desc(model, buf, ctypes.sizeof(buf))
        self._description = buf.value.decode("utf-8", "replace")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        if self._ctx is None:
            return
        lc = _llama_cpp()
        lc.llama_free(self._ctx)
        lc.llama_model_free(self._model)
        self._ctx = self._model = self._vocab = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: llama_cpp may be gone already
            pass

    def __enter__(self) -> LlamaBackend:
        self.load()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- tokens ---------------------------------------------------------------------

    def tokenize(self, text: str, *, add_bos: bool = True) -> list[int]:
        """Token ids of ``text``; BOS first when the model wants it and ``add_bos``."""
        self.load()
        lc = _llama_cpp()
        data = text.encode("utf-8")
        capacity = len(data) + 8
        while True:
            buf = (lc.llama_token * capacity)()
            n = lc.llama_tokenize(self._vocab, data, len(data), buf, capacity, False, False)
            if n >= 0:
                break
            capacity = -n
        tokens = list(buf[:n])
        if add_bos and self._add_bos:
            tokens.insert(0, self._bos)
        return tokens

    def _item(self, index: int, request: ScoreRequest) -> ItemTokens:
        """The request's solutions as token sequences, tokenised as lm-evaluation-harness does."""
        context, continuations = request.context, list(request.continuations)
        # lm-evaluation-harness moves the context's trailing whitespace into the continuation.
        stripped = context.rstrip()
        if len(stripped) < len(context):
            tail = context[len(stripped) :]
            context, continuations = stripped, [tail + c for c in continuations]
        context_tokens = self.tokenize(context)
        if context:
            sequences = [context_tokens + self.tokenize(context + c)[len(context_tokens) :] for c in continuations]
        else:
            # Nothing to condition on: start from BOS (or EOS, as lm-evaluation-harness does).
            context_tokens = context_tokens or [self._bos if self._bos >= 0 else self._eos]
            sequences = [context_tokens + self.tokenize(c, add_bos=False) for c in continuations]
        return ItemTokens.of(index, len(context_tokens), sequences, self._shape())

    def _shape(self) -> BatchShape:
        assert self.align is not None, "the alignment is known once the model is loaded"
        return BatchShape(self.align, self.exact, self.n_batch, self.n_ubatch, self.n_ctx, self.n_seq_max)

    # -- scoring --------------------------------------------------------------------

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[ContinuationScore, ...]]:
        self.load()
        with self._lock:
            items = [self._item(i, r) for i, r in enumerate(requests)]
            results: list[tuple[ContinuationScore, ...]] = [()] * len(items)
            for group in pack(items, self._shape()):
                for item, scores in zip(group, self._decode(group)):
                    results[item.index] = scores
        return results

    def _decode(self, group: list[ItemTokens]) -> list[tuple[ContinuationScore, ...]]:
        """Evaluate a group of items (one decode, or chunks of n_batch); return their scores."""
        lc = _llama_cpp()
        plan = self._plan(group)
        logprobs = np.zeros(len(plan.targets))
        target_tokens = np.asarray(plan.targets, dtype=np.int64)
        self._adapt_threads()
        self.decodes_by_threads[self.threads_now] += 1
        batch = lc.llama_batch_init(min(self.n_batch, len(plan.entries)), 0, MAX_SOLUTIONS)
        try:
            row0 = 0
            for start in range(0, len(plan.entries), self.n_batch):
                chunk = plan.entries[start : start + self.n_batch]
                for i, entry in enumerate(chunk):
                    self._put(batch, i, entry)
                batch.n_tokens = len(chunk)
                status = lc.llama_decode(self._ctx, batch)
                if status != 0:
                    raise ModelError(
                        f"llama.cpp could not evaluate a batch of {len(chunk)} tokens (status {status}); "
                        "lower n_batch or raise n_ctx"
                    )
                self.tokens_evaluated += len(chunk)
                n_out = sum(e.logits for e in chunk)
                if n_out:
                    # Logits rows come in batch order; read them before the next decode overwrites them.
                    logits = np.ctypeslib.as_array(lc.llama_get_logits(self._ctx), shape=(n_out, self._n_vocab))
                    self._read_rows(logits, plan.row_targets[row0 : row0 + n_out], target_tokens, logprobs)
                row0 += n_out
        except BaseException:
            self._forget_cells()
            raise
        finally:
            lc.llama_batch_free(batch)
        return [
            tuple(ContinuationScore(float(logprobs[span.start : span.stop].sum()), len(span)) for span in solutions)
            for solutions in plan.solutions
        ]

    def _adapt_threads(self) -> None:
        """Decode with the cores other processes left free since the last check (at most ``n_threads``)."""
        free = self.free_cores
        others = free.others_busy() if free is not None else None
        if free is None or others is None:
            return
        wanted = threads_for(min(self.n_threads, free.cap), free.cores, others)
        if wanted != self.threads_now:
            _llama_cpp().llama_set_n_threads(self._ctx, wanted, wanted)
            self.threads_now = wanted

    def _plan(self, group: list[ItemTokens]) -> BatchLayout:
        """The group's layout: over the cells earlier batches left (skipping padding) when it fits one decode.

        A group decoded in several chunks, or one whose positions reach the
        sliding attention window (where llama.cpp may reuse cells on its own),
        starts from a cleared cache instead.
        """
        shape = self._shape()
        pad = max(self._bos, 0)
        plan = lay_out(group, shape, pad_token=pad)
        n_cells = len(plan.entries)
        fits = n_cells <= self.n_batch and (self._n_swa <= 0 or n_cells < self._n_swa)
        if self.reuse_cells and self.exact and fits and shape.align % ROW_BLOCK == 0:
            if self._cells_unknown:
                self._forget_cells()
            reused = lay_out(group, shape, pad, self._kv, self._kv.next_offset())
            lc = _llama_cpp()
            memory = lc.llama_get_memory(self._ctx)
            if all(lc.llama_memory_seq_rm(memory, seq, p0, p1) for seq, p0, p1 in reused.removals):
                return reused
            # A cache that cannot drop single positions (a recurrent model's): pad tokens from now on.
            self.reuse_cells = False
        self._forget_cells()
        self._cells_unknown = True  # this decode fills cells the mirror does not follow
        return plan

    def _forget_cells(self) -> None:
        """Clear llama.cpp's cache and the mirror of it."""
        lc = _llama_cpp()
        lc.llama_memory_clear(lc.llama_get_memory(self._ctx), True)
        self._kv.clear()
        self._cells_unknown = False

    @staticmethod
    def _put(batch: Any, i: int, entry: BatchEntry) -> None:
        """Entry ``i`` of a ``llama_batch`` (a ctypes struct) from one cell of the layout."""
        batch.token[i] = entry.token
        batch.pos[i] = entry.position
        batch.n_seq_id[i] = len(entry.seq_ids)
        ids = batch.seq_id[i]
        for k, seq_id in enumerate(entry.seq_ids):
            ids[k] = seq_id
        batch.logits[i] = entry.logits

    def _read_rows(
        self, logits: np.ndarray, row_targets: list[list[int]], targets: np.ndarray, out: np.ndarray
    ) -> None:
        """Fill ``out[i]`` with log p(targets[i] | row) for every target these rows predict.

        Only rows that predict a target are normalised, each once, split over the
        scoring threads: llama.cpp's threads are idle between decodes, and a
        row's log-softmax over the vocabulary costs about a fifth of computing it.
        """
        rows = [r for r, predicted in enumerate(row_targets) if predicted]
        n_parts = min(self.n_threads, len(rows) // _ROWS_PER_THREAD)
        if n_parts < 2:
            _log_probs(logits, rows, row_targets, targets, out)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.n_threads - 1, thread_name_prefix="piqa-logsoftmax")
        parts = [rows[k::n_parts] for k in range(n_parts)]
        pending = [self._pool.submit(_log_probs, logits, part, row_targets, targets, out) for part in parts[1:]]
        _log_probs(logits, parts[0], row_targets, targets, out)
        for future in pending:
            future.result()
