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

The layout also keeps every item's numbers bit-for-bit what a lone evaluation
of it would give (see ``LlamaBackend._layout``), so a score does not depend on
which items happened to share its batch. Flash attention stays off: on CPU it
moves log-likelihoods by tenths of a nat.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import logging
import os
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.backend import ContinuationScore, ScoreRequest

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
# Room for the context, KV cache and compute buffers beside the weights.
_RUNTIME_HEADROOM = 512 * 1024 * 1024
_IDENTITY_SPAN = 1024 * 1024
_MAX_SOLUTIONS = 16  # sequence ids one token may carry
_ROWS_PER_THREAD = 4  # fewer log-softmax rows than this per thread are not worth a hand-off


def simd_lanes(system_info: str) -> int:
    """KV cells llama.cpp's CPU kernels sum together in one SIMD block, from its system-info string.

    The attention's float dot products (llamafile's tinyBLAS, ggml's vec_dot)
    and its softmax sum along the KV cells in vectors of this many floats: 16
    with AVX-512, 8 with AVX/AVX2 (and 4 with NEON, which 8 covers). SVE's
    width is the hardware's (up to 64 floats), so it gets the largest; not
    measured on such a CPU. The string is ``llama_print_system_info()``'s, which
    names the features the loaded CPU backend was built with.
    """
    features = {
        name.strip(): value.strip() == "1"
        for part in system_info.split("|")
        if "=" in part
        for name, value in [part.rsplit("=", 1)]
    }
    if features.get("SVE"):
        return 64
    if features.get("AVX512"):
        return 16
    return 8


# --------------------------------------------------------------------------- weight repacking

REPACK_SETTINGS = ("auto", "on", "off")
_AMX_FLAGS = frozenset({"amx_tile", "amx_int8", "amx_bf16"})


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """The CPU's feature flags from /proc/cpuinfo's first ``flags`` line (empty where there is none)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            return frozenset()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):  # x86 / ARM
            return frozenset(value.split())
    return frozenset()


def decide_repack(setting: str, flags: frozenset[str]) -> bool:
    """Whether llama.cpp may repack weights into its extra CPU buffer types (``use_extra_bufts``).

    ``auto`` repacks unless the CPU advertises AMX: llama.cpp's AMX buffers
    crash ``llama_decode`` on some Sapphire Rapids VMs (upstream issue #20824;
    ``llama-perplexity`` dies the same way without ``--no-repack``). Elsewhere
    repacking is llama.cpp's default and faster (BENCHMARKS.md).
    """
    if setting not in REPACK_SETTINGS:
        raise ModelError(
            f"repack must be one of {', '.join(REPACK_SETTINGS)}, not {setting!r}; fix the config or --repack"
        )
    if setting != "auto":
        return setting == "on"
    return not (flags & _AMX_FLAGS)


# --------------------------------------------------------------------------- file checks


def available_memory_bytes() -> int | None:
    """Memory the model can use now (MemAvailable), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def check_model_file(path: str | os.PathLike[str], *, on_cpu: bool = True) -> Path:
    """The model path, if it names a readable GGUF file that fits in memory; else ModelError."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ModelError(f"model file not found: {path}; pass the path of a .gguf file with --model")
    if not path.is_file():
        raise ModelError(f"model path is not a file: {path}; pass the path of a .gguf file")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ModelError(f"cannot read model file {path}: {exc.strerror}; check its permissions") from None
    if magic != GGUF_MAGIC:
        raise ModelError(
            f"{path} is not a GGUF model (it does not start with b'GGUF'); "
            "convert it with llama.cpp's convert_hf_to_gguf.py or download a .gguf file"
        )
    size = path.stat().st_size
    available = available_memory_bytes() if on_cpu else None
    if available is not None and size + _RUNTIME_HEADROOM > available:
        raise ModelError(
            f"model {path.name} needs about {_gib(size + _RUNTIME_HEADROOM)} but only "
            f"{_gib(available)} of memory is available; use a smaller quantisation "
            "or offload layers to a GPU with --n-gpu-layers"
        )
    return path


def model_identity(path: Path) -> str:
    """Name, size and a hash of the file's first and last MiB: stable across copies and touches.

    The head holds the GGUF metadata and tensor layout, the tail the last
    tensors' weights, so two different models (even fine-tunes of one base)
    do not collide, without hashing gigabytes.
    """
    size = path.stat().st_size
    digest = hashlib.sha256()
    with path.open("rb") as f:
        digest.update(f.read(_IDENTITY_SPAN))
        if size > 2 * _IDENTITY_SPAN:
            f.seek(size - _IDENTITY_SPAN)
            digest.update(f.read(_IDENTITY_SPAN))
    return f"{path.name}:{size}:{digest.hexdigest()[:16]}"


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


def _last_llama_error() -> str:
    """The first error llama.cpp logged since the log was cleared: the cause (later lines only say that the
    load failed)."""
    for message in _recent_log:
        if "error" in message.lower() or "failed" in message.lower():
            return message.split(": ", 1)[-1] if ": " in message else message
    return _recent_log[-1] if _recent_log else "no reason given"


@dataclass(slots=True)
class _Task:
    """One request laid out for the batch: token sequences, shared prefix, rows to read."""

    index: int
    n_context: int  # tokens before the first scored token
    sequences: list[list[int]]  # context + continuation tokens, one per solution
    prefix: int  # leading tokens evaluated once for all sequences (see LlamaBackend._task)
    common: int  # leading tokens all sequences share (prefix, plus what alignment copies per sequence)

    @property
    def n_seq(self) -> int:
        return len(self.sequences)

    def unique_tokens(self, s: int) -> range:
        # A sequence's last token predicts nothing we score: never evaluate it.
        return range(self.prefix, len(self.sequences[s]) - 1)

    def row_owner(self, s: int, pos: int) -> int:
        """Which copy of the token at ``pos`` gives sequence ``s`` its logits row: -1 for the shared prefix.

        Past the prefix, a token every sequence shares is evaluated once per
        sequence (see ``LlamaBackend._task``), and each copy computes the same
        row bit for bit; only the first sequence that evaluates it asks for logits.
        """
        if pos < self.prefix:
            return -1
        if pos < self.common:
            return next(o for o in range(self.n_seq) if pos < len(self.sequences[o]) - 1)
        return s

    def padded_tokens(self, align: int, exact: bool) -> int:
        """Tokens this task takes in a batch once aligned (see ``LlamaBackend._layout``)."""
        n = self.prefix
        for s in range(self.n_seq):
            n += ((self.prefix - n) % align if exact else 0) + len(self.unique_tokens(s))
        return n + (-n) % align


# A batch entry: [token, position, sequence ids, row key or None when no logits are wanted].
_Entry = list


def _common_prefix(sequences: Sequence[Sequence[int]]) -> int:
    first = sequences[0]
    n = min(len(s) for s in sequences)
    for i in range(n):
        if any(s[i] != first[i] for s in sequences[1:]):
            return i
    return n


def _log_probs(
    logits: np.ndarray, rows: Sequence[int], row_pairs: list[list[int]], targets: np.ndarray, out: np.ndarray
) -> None:
    """Fill ``out[pair]`` with log p(target | row) for the pairs these rows serve.

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
        pairs = row_pairs[r]
        out[pairs] = row[targets[pairs]].astype(np.float64) - norm


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
    ``_layout``); without it, every token the solutions share is evaluated
    once and nothing is padded (12% fewer tokens, about 6% faster on PIQA),
    but a solution's score moves from a lone evaluation by up to 1.4 nats
    (p90 0.2) on PIQA.
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
    ) -> None:
        self.path = Path(path).expanduser()
        self.n_gpu_layers = n_gpu_layers
        if n_threads is None:
            n_threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        self.n_threads = n_threads
        # Ubatches hold whole multiples of 8 tokens and tile the batch (see _layout).
        self.n_ubatch = max(8, min(n_ubatch, n_batch) // 8 * 8)
        self.n_batch = max(self.n_ubatch, n_batch // self.n_ubatch * self.n_ubatch)
        self.n_ctx = max(n_ctx, self.n_batch)
        self.n_seq_max = max(3, min(n_seq_max, 256))
        self.align = align  # None: the CPU backend's SIMD width, known once llama.cpp is loaded
        self.exact = exact
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
        cparams.n_seq_max = self.n_seq_max
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

    def _task(self, index: int, request: ScoreRequest) -> _Task:
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
        # Share whole blocks of `align` tokens only: a block that mixes shared and
        # own tokens would be summed differently than in a lone evaluation (see _layout).
        common = _common_prefix(sequences)
        shared = common // self.align * self.align if self.exact else common
        return _Task(index, len(context_tokens), sequences, shared, common)

    # -- scoring --------------------------------------------------------------------

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[ContinuationScore, ...]]:
        self.load()
        with self._lock:
            tasks = [self._task(i, r) for i, r in enumerate(requests)]
            results: list[tuple[ContinuationScore, ...] | None] = [None] * len(tasks)
            for group in self._pack(tasks):
                for task, scores in zip(group, self._decode(group)):
                    results[task.index] = scores
        return results  # type: ignore[return-value]

    def _pack(self, tasks: list[_Task]) -> list[list[_Task]]:
        """Group tasks into decodes of at most n_batch tokens and n_seq_max sequences.

        Every token of a group shares one unified KV cache, and attention runs
        over all of it, so groups are kept to one batch; a task longer than a
        batch gets a group of its own, decoded in several chunks.
        """
        groups: list[list[_Task]] = []
        current: list[_Task] = []
        n_tok = n_seq = 0
        for task in tasks:
            if task.n_seq > _MAX_SOLUTIONS:
                raise ModelError(f"an item has {task.n_seq} solutions; scoring supports at most {_MAX_SOLUTIONS}")
            size = task.padded_tokens(self.align, self.exact)
            if size > self.n_ctx:
                raise ModelError(
                    f"an item needs {size} tokens, more than the context of {self.n_ctx}; shorten it or raise n_ctx"
                )
            # One sequence id stays free for the alignment padding.
            if current and (n_tok + size > self.n_batch or n_seq + task.n_seq > self.n_seq_max - 1):
                groups.append(current)
                current, n_tok, n_seq = [], 0, 0
            current.append(task)
            n_tok += size
            n_seq += task.n_seq
        if current:
            groups.append(current)
        return groups

    def _layout(
        self, group: list[_Task]
    ) -> tuple[list[_Entry], list[list[int]], list[list[tuple[int, int]]], list[int]]:
        """Lay a group out as batch entries, output rows and the (row, token) pairs to read.

        Returns the entries (token, position, sequence ids, wants logits), for
        each output row the indices of the pairs it serves, per task and
        solution the span of its pairs, and the pairs' target tokens.

        The layout makes every number independent of the batch around it:
        llama.cpp's CPU kernels sum in SIMD lanes along the KV cells and treat
        the last ``rows % 4`` rows of a matrix product with another kernel, and
        8-bit activation quantisation turns those last-bit differences into
        tenths of a nat. So each sequence's cells start at an index congruent to
        its position (mod ``align``, the kernels' SIMD width, see ``simd_lanes``;
        filled with padding tokens on a spare sequence id), and every ubatch has
        a multiple of 4 tokens and of 4 output rows. An item then scores the
        same alone or among others.
        """
        entries: list[_Entry] = []
        pad_seq, pad_token = (self.n_seq_max - 1,), max(self._bos, 0)
        pad_positions = itertools.count()  # llama.cpp wants each sequence's positions consecutive

        def align_to(position: int) -> None:
            # A cleared cache fills cells in batch order, so the cell index is len(entries).
            while (len(entries) - position) % self.align:
                entries.append([pad_token, next(pad_positions), pad_seq, None])

        keys: list[list[list[tuple[int, int, int]]]] = []  # per task, solution, scored token: row key
        seq0 = 0
        for t, task in enumerate(group):
            longest = max(len(s) for s in task.sequences)
            shared = range(seq0, seq0 + task.n_seq)
            for pos in range(task.prefix):
                # A shared token's logits are needed if it predicts a scored token of any solution.
                wanted = task.n_context - 1 <= pos <= longest - 2
                entries.append([task.sequences[0][pos], pos, shared, (t, -1, pos) if wanted else None])
            for s, seq in enumerate(task.sequences):
                if self.exact:
                    align_to(task.prefix)
                for pos in task.unique_tokens(s):
                    # Logits where this copy's row predicts a scored token (alignment may copy context tokens too).
                    wanted = pos >= task.n_context - 1 and task.row_owner(s, pos) == s
                    entries.append([seq[pos], pos, (seq0 + s,), (t, s, pos) if wanted else None])
            align_to(0)
            keys.append(
                [
                    [(t, task.row_owner(s, pos - 1), pos - 1) for pos in range(task.n_context, len(seq))]
                    for s, seq in enumerate(task.sequences)
                ]
            )
            seq0 += task.n_seq

        # Whole 4-row blocks of outputs in every ubatch: ask for a few logits nobody reads.
        for start in range(0, len(entries), self.n_ubatch):
            window = entries[start : start + self.n_ubatch]
            missing = -sum(e[3] is not None for e in window) % 4
            for i in reversed(range(start, start + len(window))):
                if not missing:
                    break
                if entries[i][3] is None:
                    entries[i][3] = ("spare", i, 0)
                    missing -= 1

        row_of = {e[3]: r for r, e in enumerate(e for e in entries if e[3] is not None)}
        row_pairs: list[list[int]] = [[] for _ in row_of]
        spans: list[list[tuple[int, int]]] = []
        targets: list[int] = []
        for task, task_keys in zip(group, keys):
            task_spans = []
            for seq, seq_keys in zip(task.sequences, task_keys):
                start = len(targets)
                for pos, key in zip(range(task.n_context, len(seq)), seq_keys):
                    row_pairs[row_of[key]].append(len(targets))
                    targets.append(seq[pos])
                task_spans.append((start, len(targets)))
            spans.append(task_spans)
        return entries, row_pairs, spans, targets

    def _decode(self, group: list[_Task]) -> list[tuple[ContinuationScore, ...]]:
        """Evaluate a group of tasks (one decode, or chunks of n_batch); return their scores."""
        lc = _llama_cpp()
        entries, row_pairs, spans, targets = self._layout(group)
        logprobs = np.zeros(len(targets))
        target_tokens = np.asarray(targets, dtype=np.int64)
        lc.llama_memory_clear(lc.llama_get_memory(self._ctx), True)
        batch = lc.llama_batch_init(min(self.n_batch, len(entries)), 0, _MAX_SOLUTIONS)
        try:
            row0 = 0
            for start in range(0, len(entries), self.n_batch):
                chunk = entries[start : start + self.n_batch]
                for i, (token, pos, seq_ids, key) in enumerate(chunk):
                    self._put(batch, i, token, pos, seq_ids, key is not None)
                batch.n_tokens = len(chunk)
                status = lc.llama_decode(self._ctx, batch)
                if status != 0:
                    raise ModelError(
                        f"llama.cpp could not evaluate a batch of {len(chunk)} tokens (status {status}); "
                        "lower n_batch or raise n_ctx"
                    )
                self.tokens_evaluated += len(chunk)
                n_out = sum(e[3] is not None for e in chunk)
                if n_out:
                    # Logits rows come in batch order; read them before the next decode overwrites them.
                    logits = np.ctypeslib.as_array(lc.llama_get_logits(self._ctx), shape=(n_out, self._n_vocab))
                    self._read_rows(logits, row_pairs[row0 : row0 + n_out], target_tokens, logprobs)
                row0 += n_out
        finally:
            lc.llama_batch_free(batch)
        return [
            tuple(ContinuationScore(float(logprobs[a:b].sum()), b - a) for a, b in task_spans) for task_spans in spans
        ]

    @staticmethod
    def _put(batch, i: int, token: int, pos: int, seq_ids: Sequence[int], output: bool) -> None:
        batch.token[i] = token
        batch.pos[i] = pos
        batch.n_seq_id[i] = len(seq_ids)
        ids = batch.seq_id[i]
        for k, seq_id in enumerate(seq_ids):
            ids[k] = seq_id
        batch.logits[i] = output

    def _read_rows(self, logits: np.ndarray, row_pairs: list[list[int]], targets: np.ndarray, out: np.ndarray) -> None:
        """Fill ``out[pair]`` with log p(target | row) for every pair these rows serve.

        Only rows that serve a pair are normalised, each once, split over the
        scoring threads: llama.cpp's threads are idle between decodes, and a
        row's log-softmax over the vocabulary costs about a fifth of computing it.
        """
        rows = [r for r, pairs in enumerate(row_pairs) if pairs]
        n_parts = min(self.n_threads, len(rows) // _ROWS_PER_THREAD)
        if n_parts < 2:
            _log_probs(logits, rows, row_pairs, targets, out)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.n_threads - 1, thread_name_prefix="piqa-logsoftmax")
        parts = [rows[k::n_parts] for k in range(n_parts)]
        pending = [self._pool.submit(_log_probs, logits, part, row_pairs, targets, out) for part in parts[1:]]
        _log_probs(logits, parts[0], row_pairs, targets, out)
        for future in pending:
            future.result()
