"""The local model writing: a GGUF model driven through llama.cpp's low-level API, run in its own process.

``LlamaWriter`` is what the model's process (``core/scoring/process.py``, the scoring model's) builds; its two
streaming methods get a channel that sends the parent each token (``stream_generate``) or each finished item
(``stream_generate_many``) and sees the parent's cancel between decodes.

* The prompt is the chat rendered by the model's own chat template (``tokenizer.chat_template`` in the GGUF's
  metadata) with llama-cpp-python's Jinja formatter, as its chat completion does; a model without one is refused
  in one line when it loads.
* A JSON schema becomes a llama.cpp grammar (llama-cpp-python's schema converter), so the model can only write
  text of the schema's shape; the text is still validated on arrival (``schema``). The grammar is checked the
  way llama.cpp's own samplers do (``common_sampler_sample``): the token is drawn from the model's distribution
  first and kept when the grammar accepts it; only a refused token makes the grammar mask the whole vocabulary
  and the draw run again. That is the masked distribution exactly (a token the grammar allows is drawn with
  probability p/Z either way), at a fraction of the cost: masking 49,152 candidates took 12 ms a token, a fifth
  of a draft job's time (BENCHMARKS.md, generation).
* A prompt's beginning is decoded once: the cells of the last prompt decoded stay in the context under a
  sequence of their own (the prompt cache), and a request whose prompt begins the same way (the job's
  instructions, or a whole draft prompt repeated with another seed) starts from a copy of them
  (``llama_memory_seq_cp``: with one unified cache the copy is shared cells, not bytes); requests starting
  together with a shared beginning wait one decode for the first one's prompt to be cached.
* Parallel sequences: ``generate_many`` keeps up to ``n_parallel`` requests in one context, each its own
  sequence id, sampler and grammar; every decode carries the next token of each running sequence and the
  prompt tokens of those starting, so one weight pass serves them all. A sequence starts only while the
  context has room for its prompt and ``max_tokens`` beside those running, so a decode never runs out of cells.
"""

from __future__ import annotations

import codecs
import ctypes
import os
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from piqa_tui.core.cores import usable_cores
from piqa_tui.core.errors import ModelError
from piqa_tui.core.generation.protocol import (
    STOP_CANCELLED,
    STOP_END,
    STOP_ERROR,
    STOP_LENGTH,
    GenerationRequest,
    GenerationResult,
)
from piqa_tui.core.generation.schema import fitted, schema_text
from piqa_tui.core.scoring.gguf_file import check_model_file
from piqa_tui.core.scoring.llama import clear_llama_log, last_llama_error, llama_cpp_library
from piqa_tui.core.scoring.machine import FreeCores, cpu_flags, decide_repack, threads_for

TEMPLATE_KEY = b"tokenizer.chat_template"
_PIECE = 64  # bytes of one token's text (longer ones are asked again with the size llama.cpp gives)
STREAM_EVERY = 0.05  # seconds between the pieces a stream sends: every token would wake the reader each 10 ms
SHARED_MIN = 16  # prompt tokens in common with the cached prompt worth a copy instead of a decode
_CANDIDATE = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])  # llama_token_data


class Channel(Protocol):
    """Where progress goes while the model writes, and whether to stop (``process.ChildChannel`` in the child)."""

    def emit(self, payload: object) -> None: ...
    def cancelled(self) -> bool: ...


@dataclass
class _Sequence:
    """One request being written: its slot (sequence id), tokens still to feed, what it wrote so far."""

    index: int
    request: GenerationRequest
    slot: int
    sampler: Any
    grammar: Any  # the schema's grammar sampler (None: no schema), checked after the draw
    prompt: list[int]
    pending: list[int]  # prompt tokens not yet decoded, then the one token sampled last
    reserved: int  # context cells of its own it may use: its prompt past what it shares, and max_tokens
    position: int = 0
    generated: int = 0
    out: int = -1  # its row in the last decode's output (-1: none)
    pieces: list[str] = field(default_factory=list)
    sent: int = 0  # pieces already sent to the stream's reader
    sent_at: float = 0.0  # when (time.monotonic)
    decoder: codecs.IncrementalDecoder = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace"))


class LlamaWriter:
    """A GGUF model that writes (see the module docstring). ``n_gpu_layers``: 0 keeps it on the CPU, -1 offloads
    every layer. ``n_ctx`` cells are shared by the ``n_parallel`` sequences of ``generate_many``."""

    streams = ("stream_generate", "stream_generate_many")

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        n_gpu_layers: int = 0,
        n_threads: int | None = None,
        n_ctx: int = 4096,
        n_batch: int = 512,
        n_parallel: int = 8,
    ) -> None:
        self.path = Path(path).expanduser()
        self.n_gpu_layers = n_gpu_layers
        self.n_threads = n_threads or usable_cores()
        self.n_ctx = n_ctx
        self.n_batch = n_batch
        self.n_parallel = max(1, n_parallel)
        self._model: Any = None
        self._ctx: Any = None
        self._vocab: Any = None
        self._formatter: Any = None
        self._description = ""
        self.tokens_generated = 0
        self.tokens_shared = 0  # prompt tokens copied from the prompt cache instead of decoded
        self.threads_now = self.n_threads
        self.free_cores: FreeCores | None = None  # set by load() when there is more than one thread to give up
        self._cache_slot = self.n_parallel  # the prompt cache's sequence id, past the requests' slots
        self._cached: list[int] = []  # the tokens whose cells the prompt cache holds
        self._candidates = np.empty(0, _CANDIDATE)  # the vocabulary as candidates, filled from a row of logits

    # -- the backend's life -----------------------------------------------------------

    def load(self) -> None:
        if self._ctx is not None:
            return
        check_model_file(self.path, on_cpu=self.n_gpu_layers == 0)
        lc = llama_cpp_library()
        clear_llama_log()
        mparams = lc.llama_model_default_params()
        mparams.n_gpu_layers = self.n_gpu_layers
        # llama.cpp's repacked weights batch far better (parallel sequences), except where they crash (AMX)
        mparams.use_extra_bufts = decide_repack("auto", cpu_flags())
        model = lc.llama_model_load_from_file(str(self.path).encode(), mparams)
        if not model:
            raise ModelError(f"llama.cpp cannot load {self.path.name}: {last_llama_error()}")
        template = _meta(lc, model, TEMPLATE_KEY)
        if not template:
            lc.llama_model_free(model)
            raise ModelError(
                f"{self.path.name} has no chat template (no tokenizer.chat_template in its GGUF metadata); "
                "use an instruction-tuned model that ships one"
            )
        cparams = lc.llama_context_default_params()
        cparams.n_ctx = self.n_ctx
        cparams.n_batch = cparams.n_ubatch = self.n_batch
        cparams.n_seq_max = self.n_parallel + 1  # and the prompt cache
        cparams.n_threads = cparams.n_threads_batch = self.n_threads
        cparams.kv_unified = True  # the sequences share the context's cells: one long answer may take more
        cparams.no_perf = True
        ctx = lc.llama_init_from_model(model, cparams)
        if not ctx:
            lc.llama_model_free(model)
            raise ModelError(f"llama.cpp cannot create a context for {self.path.name}: {last_llama_error()}")
        self._model, self._ctx = model, ctx
        self._vocab = lc.llama_model_get_vocab(model)
        self._formatter = _formatter(lc, self._vocab, template)
        self._candidates = np.zeros(lc.llama_vocab_n_tokens(self._vocab), _CANDIDATE)
        self._cached = []
        self.threads_now = self.n_threads
        self.free_cores = FreeCores() if self.n_threads > 1 else None
        buf = ctypes.create_string_buffer(256)
        lc.llama_model_desc(model, buf, ctypes.sizeof(buf))
        self._description = buf.value.decode("utf-8", "replace")

    def describe(self) -> dict[str, object]:
        return {
            "backend": "llama.cpp",
            "file": self.path.name,
            "model": self._description,
            "n_gpu_layers": self.n_gpu_layers,
            "n_threads": self.n_threads,
            "n_ctx": self.n_ctx,
            "n_parallel": self.n_parallel,
        }

    def close(self) -> None:
        if self._ctx is None:
            return
        lc = llama_cpp_library()
        lc.llama_free(self._ctx)
        lc.llama_model_free(self._model)
        self._ctx = self._model = self._vocab = None

    # -- the streaming calls ----------------------------------------------------------

    def stream_generate(self, request: GenerationRequest, channel: Channel) -> GenerationResult:
        """One request; each piece of text goes to ``channel`` as it comes."""
        return self.run([request], channel, tokens=True)[0]

    def stream_generate_many(self, requests: Sequence[GenerationRequest], channel: Channel) -> list[GenerationResult]:
        """Many requests as parallel sequences; each (index, result) goes to ``channel`` as it finishes."""
        return self.run(requests, channel, tokens=False)

    def prompt_tokens(self, request: GenerationRequest) -> list[int]:
        """The request's chat rendered by the model's template, as tokens."""
        messages = [{"role": turn.role, "content": turn.content} for turn in request.messages]
        try:
            rendered = self._formatter(messages=messages)
        except Exception as exc:  # the template's own raise_exception, or a Jinja error, in one line
            raise ModelError(f"the model's chat template refused the messages: {exc}") from None
        return self._tokenize(rendered.prompt, add_special=not rendered.added_special)

    def run(self, requests: Sequence[GenerationRequest], channel: Channel, tokens: bool) -> list[GenerationResult]:
        """Write every request, up to ``n_parallel`` at once (see the module docstring)."""
        self.load()
        lc = llama_cpp_library()
        results: list[GenerationResult | None] = [None] * len(requests)
        waiting = deque(enumerate(requests))
        running: list[_Sequence] = []
        free = list(range(self.n_parallel))
        batch = lc.llama_batch_init(self.n_batch, 0, 1)
        try:
            while waiting or running:
                if channel.cancelled():
                    break
                self._admit(waiting, running, free, results, None if tokens else channel)
                if not running:
                    continue
                self._decode(lc, batch, running)
                for seq in [s for s in running if s.out >= 0]:
                    if seq.generated == 0:
                        self._remember(lc, seq)
                    done = self._sample(lc, seq, channel if tokens else None)
                    if done is not None:
                        if tokens:
                            self._send(seq, channel)
                        running.remove(seq)
                        free.append(seq.slot)
                        self._finish(lc, seq, done, results, channel if not tokens else None)
        except BaseException:
            self.forget_prompts()  # a decode that failed half way leaves no cells to trust
            raise
        finally:
            lc.llama_batch_free(batch)
            for seq in running:
                self._finish(lc, seq, STOP_CANCELLED, results, None)
        return [r or GenerationResult("", stop=STOP_CANCELLED, key=q.key) for r, q in zip(results, requests)]

    # -- the steps of a run -----------------------------------------------------------

    def _admit(
        self,
        waiting: deque[tuple[int, GenerationRequest]],
        running: list[_Sequence],
        free: list[int],
        results: list[GenerationResult | None],
        report: Channel | None,
    ) -> None:
        """Start waiting requests while a slot is free and the context has room for them; a request that cannot
        start at all is its result at once (to ``report``, when finished items are reported)."""
        lc = llama_cpp_library()
        while waiting and free:
            index, request = waiting[0]
            try:
                prompt = self.prompt_tokens(request)
                if len(prompt) + request.max_tokens > self.n_ctx:
                    raise ModelError(
                        f"the prompt ({len(prompt)} tokens) and max_tokens ({request.max_tokens}) need more than "
                        f"the context's {self.n_ctx} tokens; pass a larger --n-ctx"
                    )
                shared = self._shared(prompt)
                if any(_common(prompt, s.prompt) > max(shared, SHARED_MIN - 1) for s in running if s.generated == 0):
                    return  # one running is decoding the same beginning: start from the cache once it is there
                need = len(prompt) - shared + request.max_tokens
                if sum(s.reserved for s in running) + len(self._cached) + need > self.n_ctx:
                    if running:
                        return  # it starts when a running one finishes
                    self.forget_prompts()  # the cache alone stands in the way
                    shared, need = 0, len(prompt) + request.max_tokens
                sampler, grammar = self._sampler(lc, request)
            except ModelError as exc:
                waiting.popleft()
                results[index] = GenerationResult("", stop=STOP_ERROR, error=str(exc), key=request.key)
                if report is not None:
                    report.emit((index, results[index]))
                continue
            waiting.popleft()
            slot = free.pop(0)
            if shared:
                lc.llama_memory_seq_cp(lc.llama_get_memory(self._ctx), self._cache_slot, slot, 0, shared)
                self.tokens_shared += shared
            running.append(_Sequence(index, request, slot, sampler, grammar, prompt, prompt[shared:], need, shared))

    def _shared(self, prompt: list[int]) -> int:
        """How many of the prompt's first tokens to copy from the cache (0: too few to be worth it); at least its
        last token is left to decode, for the row of logits the first token is drawn from."""
        shared = min(_common(prompt, self._cached), len(prompt) - 1)
        return shared if shared >= SHARED_MIN else 0

    def _remember(self, lc: Any, seq: _Sequence) -> None:
        """Its prompt is decoded: keep its cells as the prompt cache (unless the cache holds that prompt)."""
        if seq.prompt == self._cached:
            return
        memory = lc.llama_get_memory(self._ctx)
        lc.llama_memory_seq_rm(memory, self._cache_slot, -1, -1)
        lc.llama_memory_seq_cp(memory, seq.slot, self._cache_slot, 0, len(seq.prompt))
        self._cached = list(seq.prompt)

    def forget_prompts(self) -> None:
        """Empty the prompt cache (the next prompt is decoded whole)."""
        if self._ctx is not None and self._cached:
            lc = llama_cpp_library()
            lc.llama_memory_seq_rm(lc.llama_get_memory(self._ctx), self._cache_slot, -1, -1)
        self._cached = []

    def _decode(self, lc: Any, batch: Any, running: list[_Sequence]) -> None:
        """One decode: the next token of every running sequence, then the prompts of those starting (as many as
        the batch holds); a row of output only where a token is to be sampled."""
        n = 0
        for seq in running:
            seq.out = -1
            take = min(len(seq.pending), self.n_batch - n)
            for k in range(take):
                batch.token[n] = seq.pending[k]
                batch.pos[n] = seq.position + k
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = seq.slot
                last = k == len(seq.pending) - 1
                batch.logits[n] = last
                if last:
                    seq.out = n
                n += 1
            del seq.pending[:take]
            seq.position += take
            if n == self.n_batch:
                break
        batch.n_tokens = n
        self._share_cores(lc)
        status = lc.llama_decode(self._ctx, batch)
        if status != 0:
            raise ModelError(f"llama.cpp could not decode (status {status}): {last_llama_error()}")

    def _share_cores(self, lc: Any) -> None:
        """Decode with the cores other processes left free (``machine.threads_for``, as the scoring model does):
        a one-token decode whose threads wait on a core another process holds runs many times slower than one
        thread alone (BENCHMARKS.md, generation)."""
        others = self.free_cores.others_busy() if self.free_cores is not None else None
        if self.free_cores is None or others is None:
            return
        wanted = threads_for(min(self.n_threads, self.free_cores.cap), self.free_cores.cores, others)
        if wanted != self.threads_now:
            lc.llama_set_n_threads(self._ctx, wanted, wanted)
            self.threads_now = wanted

    def _sample(self, lc: Any, seq: _Sequence, channel: Channel | None) -> str | None:
        """The sequence's next token; why it stopped, or None while it goes on."""
        token = self._draw(lc, seq)
        if lc.llama_vocab_is_eog(self._vocab, token):
            return STOP_END
        seq.generated += 1
        self.tokens_generated += 1
        piece = seq.decoder.decode(self._piece(lc, token))
        if piece:
            seq.pieces.append(piece)
            if channel is not None and time.monotonic() - seq.sent_at >= STREAM_EVERY:
                self._send(seq, channel)
        if seq.request.stop and any(s in "".join(seq.pieces[-8:]) for s in seq.request.stop):
            return STOP_END
        if seq.generated >= seq.request.max_tokens:
            return STOP_LENGTH
        seq.pending = [token]
        return None

    def _send(self, seq: _Sequence, channel: Channel) -> None:
        """The pieces written since the last send, as one (a reader woken each token slows the decode: with two
        threads on two cores, every wake takes a core from llama.cpp's threads, which wait for each other)."""
        if seq.sent < len(seq.pieces):
            channel.emit("".join(seq.pieces[seq.sent :]))
            seq.sent, seq.sent_at = len(seq.pieces), time.monotonic()

    def _draw(self, lc: Any, seq: _Sequence) -> int:
        """The next token from the sequence's row of logits: drawn, then checked against its grammar (module
        docstring); drawn again from the grammar's candidates only when the grammar refuses it."""
        if seq.grammar is None:
            return int(lc.llama_sampler_sample(seq.sampler, self._ctx, seq.out))
        logits = np.ctypeslib.as_array(lc.llama_get_logits_ith(self._ctx, seq.out), shape=self._candidates.shape)
        token = self._choose(lc, seq.sampler, logits, None)
        if not self._allows(lc, seq.grammar, token):
            token = self._choose(lc, seq.sampler, logits, seq.grammar)
        lc.llama_sampler_accept(seq.grammar, token)
        lc.llama_sampler_accept(seq.sampler, token)
        return token

    def _choose(self, lc: Any, sampler: Any, logits: np.ndarray, grammar: Any) -> int:
        """The token ``sampler`` selects from the whole vocabulary (masked by ``grammar`` first, when given)."""
        candidates = self._candidates
        candidates["id"] = np.arange(len(candidates), dtype=np.int32)
        candidates["logit"] = logits
        candidates["p"] = 0.0
        array = _candidate_array(lc, candidates)
        if grammar is not None:
            lc.llama_sampler_apply(grammar, ctypes.byref(array))
        lc.llama_sampler_apply(sampler, ctypes.byref(array))
        if not 0 <= array.selected < array.size:
            raise ModelError("llama.cpp's sampler selected no token")
        return int(candidates["id"][array.selected])

    def _allows(self, lc: Any, grammar: Any, token: int) -> bool:
        """Whether ``grammar`` accepts ``token`` next (the grammar masks a refused token's logit to -inf)."""
        one = np.zeros(1, _CANDIDATE)
        one["id"] = token
        array = _candidate_array(lc, one)
        lc.llama_sampler_apply(grammar, ctypes.byref(array))
        return bool(np.isfinite(one["logit"][0]))

    def _finish(
        self, lc: Any, seq: _Sequence, stop: str, results: list[GenerationResult | None], channel: Channel | None
    ) -> None:
        """Free the sequence's cells and sampler; its result, checked against its schema."""
        lc.llama_memory_seq_rm(lc.llama_get_memory(self._ctx), seq.slot, -1, -1)
        lc.llama_sampler_free(seq.sampler)
        if seq.grammar is not None:
            lc.llama_sampler_free(seq.grammar)
        text = "".join(seq.pieces) + seq.decoder.decode(b"", final=True)
        for s in seq.request.stop:
            text = text.split(s, 1)[0]
        result = _result(seq.request, text, seq.generated, stop)
        results[seq.index] = result
        if channel is not None:
            channel.emit((seq.index, result))

    # -- llama.cpp's pieces ------------------------------------------------------------

    def _sampler(self, lc: Any, request: GenerationRequest) -> tuple[Any, Any]:
        """The request's sampler chain (greedy at temperature 0, else seeded sampling) and its schema's grammar
        sampler (None without a schema), kept apart: the grammar is checked after the draw (``_draw``)."""
        grammar = None
        if request.schema is not None:
            grammar = lc.llama_sampler_init_grammar(self._vocab, _grammar(request).encode(), b"root")
            if not grammar:
                raise ModelError("llama.cpp cannot use the grammar made from the JSON schema")
        chain = lc.llama_sampler_chain_init(lc.llama_sampler_chain_default_params())
        if request.temperature <= 0:
            lc.llama_sampler_chain_add(chain, lc.llama_sampler_init_greedy())
        else:
            lc.llama_sampler_chain_add(chain, lc.llama_sampler_init_temp(request.temperature))
            lc.llama_sampler_chain_add(chain, lc.llama_sampler_init_dist(request.seed & 0xFFFFFFFF))
        return chain, grammar

    def _tokenize(self, text: str, add_special: bool) -> list[int]:
        lc = llama_cpp_library()
        data = text.encode("utf-8")
        capacity = len(data) + 8
        buf = (lc.llama_token * capacity)()
        n = lc.llama_tokenize(self._vocab, data, len(data), buf, capacity, add_special, True)
        if n < 0:
            capacity = -n
            buf = (lc.llama_token * capacity)()
            n = lc.llama_tokenize(self._vocab, data, len(data), buf, capacity, add_special, True)
        return list(buf[:n])

    def _piece(self, lc: Any, token: int) -> bytes:
        buf = ctypes.create_string_buffer(_PIECE)
        n = lc.llama_token_to_piece(self._vocab, token, buf, _PIECE, 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = lc.llama_token_to_piece(self._vocab, token, buf, -n, 0, False)
        return buf.raw[:n]


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    """How many first tokens ``a`` and ``b`` have in common."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(differ[0]) if len(differ) else n


def _candidate_array(lc: Any, candidates: np.ndarray) -> Any:
    """A ``llama_token_data_array`` over ``candidates``' memory (no copy)."""
    return lc.llama_token_data_array(
        data=candidates.ctypes.data_as(ctypes.POINTER(lc.llama_token_data)),
        size=len(candidates),
        selected=-1,
        sorted=False,
    )


def _result(request: GenerationRequest, text: str, tokens: int, stop: str) -> GenerationResult:
    """The finished text as a result: parsed and validated when the request had a schema."""
    if stop == STOP_CANCELLED or request.schema is None:
        return GenerationResult(text, tokens=tokens, stop=stop, key=request.key)
    data, error = fitted(text, request.schema)
    if error is not None:
        if stop == STOP_LENGTH:
            error += f" (it stopped at max_tokens, {request.max_tokens})"
        return GenerationResult(text, tokens=tokens, stop=STOP_ERROR, error=error, key=request.key)
    return GenerationResult(text, data=data, tokens=tokens, stop=stop, key=request.key)


def _grammar(request: GenerationRequest) -> str:
    """The GBNF grammar of the request's schema (llama-cpp-python's converter, as its server uses)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    assert request.schema is not None
    try:
        return str(json_schema_to_gbnf(schema_text(request.schema)))
    except Exception as exc:  # the converter raises plain exceptions for the schemas it cannot express
        raise ModelError(f"the JSON schema cannot be turned into a grammar: {exc}") from None


def _meta(lc: Any, model: Any, key: bytes) -> str:
    """A text value of the GGUF's metadata ("" when the key is missing)."""
    size = 1024
    while True:
        buf = ctypes.create_string_buffer(size)
        n = lc.llama_model_meta_val_str(model, key, buf, size)
        if n < 0:
            return ""
        if n < size:
            return buf.value.decode("utf-8", "replace")
        size = n + 1


def _formatter(lc: Any, vocab: Any, template: str) -> Any:
    """llama-cpp-python's Jinja chat formatter for the model's template, with its BOS and EOS texts."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    def text_of(token: int) -> str:
        if token < 0:
            return ""
        raw = lc.llama_vocab_get_text(vocab, token)
        return raw.decode("utf-8", "replace") if raw else ""

    try:
        return Jinja2ChatFormatter(
            template, eos_token=text_of(lc.llama_vocab_eos(vocab)), bos_token=text_of(lc.llama_vocab_bos(vocab))
        )
    except Exception as exc:  # a template Jinja cannot read
        raise ModelError(f"the model's chat template cannot be read: {exc}") from None
