"""A served model: an OpenAI-compatible completion server that returns prompt log-probabilities.

Works with vLLM (``vllm serve MODEL --no-enable-prefix-caching``), SGLang and
llama-cpp-python's own server (``python -m llama_cpp.server --model M.gguf
--logits_all true``). llama.cpp's ``llama-server`` does not return prompt
log-probabilities (``echo`` is not supported), and says so by answering with
the generated token's only: that is reported as such.

Scores keep lm-evaluation-harness's definition: the context and
context + continuation are tokenised by the server's own tokenizer (its
``/tokenize`` endpoint, vLLM and SGLang, or ``/extras/tokenize``,
llama-cpp-python), the continuation tokens are ``tok(ctx+cont)[len(tok(ctx)):]``,
and the completion request sends those token ids with ``echo`` and
``logprobs`` and ``max_tokens=1`` (``max_tokens=0`` means "until the context
is full" to some servers). The answer's per-token log-probabilities are
aligned to the prompt by count: vLLM gives one entry per prompt token,
llama-cpp-python drops the leading BOS; any other count is refused as garbage.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.backend import ContinuationScore, ScoreRequest

_LLAMA_CPP_PYTHON_TOKENIZE = "/extras/tokenize"
_TRANSIENT_HTTP = {429, 500, 502, 503, 504}
_RETRIES = 3
_BACKOFF = 0.5  # seconds, doubled after each failed try


class ServedBackend:
    """Score through ``url`` (e.g. ``http://gpu-box:8000``), ``concurrency`` requests at a time."""

    batch_items = 16

    def __init__(self, url: str, model: str | None = None, *, concurrency: int = 4, timeout: float = 120.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise ModelError(f"server URL {url!r} must start with http:// or https://; e.g. http://127.0.0.1:8000")
        try:  # "http://[::1" would fail only when the first request is built
            urllib.parse.urlsplit(url).port  # noqa: B018 -- reading the port checks it
        except ValueError as exc:
            raise ModelError(f"server URL {url!r} is not a valid URL ({exc}); e.g. http://127.0.0.1:8000") from None
        if concurrency < 1:
            raise ModelError(f"--concurrency must be at least 1, not {concurrency}")
        self.url = url.rstrip("/").removesuffix("/v1")
        self.model = model
        self.concurrency = concurrency
        self.timeout = timeout
        self._pool: ThreadPoolExecutor | None = None
        self._tokenize_path: str | None = None
        self._lock = threading.Lock()

    # -- protocol -----------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self.model is not None and self._pool is not None

    def describe(self) -> dict[str, object]:
        self._ask_model()
        return {
            "backend": "served",
            "identity": f"served:{self.model}",
            "model": self.model,
            "url": self.url,
            "concurrency": self.concurrency,
        }

    def load(self) -> None:
        with self._lock:
            self._ask_model()
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="piqa-served")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[ContinuationScore, ...]]:
        self.load()
        assert self._pool is not None
        jobs = [(context, cont) for r in requests for context, cont in _pairs(r)]
        answers = list(self._pool.map(lambda job: self._score_one(*job), jobs))
        out: list[tuple[ContinuationScore, ...]] = []
        for r in requests:
            out.append(tuple(answers[: len(r.continuations)]))
            answers = answers[len(r.continuations) :]
        return out

    # -- one continuation -----------------------------------------------------------

    def _score_one(self, context: str, continuation: str) -> ContinuationScore:
        context_tokens = self._tokenize(context) if context else None
        whole = self._tokenize(context + continuation)
        if context_tokens is None:  # nothing to condition on: the BOS the tokenizer adds is the context
            context_tokens = whole[:1]
        n_context = len(context_tokens)
        prompt = context_tokens + whole[n_context:]
        # llama-cpp-python's server takes text only: send ctx + cont, whose tokens are `whole`.
        text = context + continuation if self._tokenize_path == _LLAMA_CPP_PYTHON_TOKENIZE else None
        logprobs = self._prompt_logprobs(whole if text is not None else prompt, text)
        scored = logprobs[n_context:]
        if any(lp is None for lp in scored):
            raise ModelError(f"{self.url} returned no log-probability for a prompt token; it answers garbage")
        return ContinuationScore(float(sum(scored)), len(scored))  # type: ignore[arg-type]

    def _prompt_logprobs(self, prompt: list[int], text: str | None = None) -> list[float | None]:
        """One log-probability per prompt token (None for the first), from the server's echo.

        The prompt goes as token ids, or as ``text`` (whose tokens are ``prompt``) to a server that takes text only.
        """
        body = {
            "model": self.model,
            "prompt": prompt if text is None else text,
            "max_tokens": 1,
            "echo": True,
            "logprobs": 1,
            "temperature": 0.0,
        }
        answer = self._post("/v1/completions", body)
        try:
            choice = answer["choices"][0]
            entries = choice["logprobs"]["token_logprobs"]
            generated = int(answer.get("usage", {}).get("completion_tokens", 1))
        except (KeyError, IndexError, TypeError, ValueError):
            raise ModelError(
                f"{self.url} answered a completion without prompt log-probabilities; "
                "it needs echo and logprobs (llama.cpp's llama-server has neither; use vLLM, "
                "SGLang or python -m llama_cpp.server --logits_all true)"
            ) from None
        return _align(entries, generated, prompt, self.url)

    # -- the server -----------------------------------------------------------------

    def _ask_model(self) -> None:
        """The served model's name (the first the server lists) unless given."""
        if self.model is not None:
            return
        answer = self._get("/v1/models")
        try:
            self.model = str(answer["data"][0]["id"])
        except (KeyError, IndexError, TypeError):
            raise ModelError(f"{self.url}/v1/models lists no model; pass --server-model NAME") from None

    def _tokenize(self, text: str) -> list[int]:
        """Token ids with the special tokens the model adds (BOS), by the server's own tokenizer."""
        paths = [self._tokenize_path] if self._tokenize_path else ["/tokenize", _LLAMA_CPP_PYTHON_TOKENIZE]
        for path in paths:
            body = {"model": self.model, "prompt": text, "add_special_tokens": True, "input": text}
            try:
                answer = self._post(path, body, missing_ok=True)
            except _Missing:
                continue
            tokens = answer.get("tokens") if isinstance(answer, dict) else None
            if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
                raise ModelError(f"{self.url}{path} answered garbage instead of token ids")
            self._tokenize_path = path
            return tokens
        raise ModelError(
            f"{self.url} has no tokenize endpoint (/tokenize or /extras/tokenize); "
            "piqa-tui needs the server's tokenizer to score exactly"
        )

    def _get(self, path: str) -> Any:
        return self._request(urllib.request.Request(self.url + path), path)

    def _post(self, path: str, body: Mapping[str, object], missing_ok: bool = False) -> Any:
        data = json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, headers={"Content-Type": "application/json"})
        return self._request(request, path, missing_ok)

    def _request(self, request: urllib.request.Request, path: str, missing_ok: bool = False) -> Any:
        """The JSON answer; transient failures (timeouts, 5xx, 429, refused connections) are retried."""
        delay = _BACKOFF
        for attempt in range(_RETRIES):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                if exc.code in (404, 405) and missing_ok:
                    raise _Missing() from None
                if exc.code not in _TRANSIENT_HTTP or attempt == _RETRIES - 1:
                    raise ModelError(f"{self.url}{path} answered HTTP {exc.code}: {_reason(exc)}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt == _RETRIES - 1:
                    reason = getattr(exc, "reason", exc)
                    raise ModelError(
                        f"cannot reach the model server {self.url} ({reason}); "
                        "check the URL and that the server is running"
                    ) from None
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise ModelError(
                    f"{self.url}{path} answered something that is not JSON; is it an OpenAI-compatible server?"
                ) from None
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")


class _Missing(Exception):
    """An endpoint the server does not have (404/405)."""


def _reason(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read().decode("utf-8", "replace")
        detail = json.loads(text)
        if isinstance(detail, dict):
            text = str(detail.get("detail") or detail.get("error", {}).get("message") or detail.get("message") or text)
    except (OSError, json.JSONDecodeError, AttributeError):
        text = str(exc.reason)
    return " ".join(text.split())[:200]


def _pairs(request: ScoreRequest) -> list[tuple[str, str]]:
    """(context, continuation) per solution, the context's trailing whitespace moved as the harness does."""
    context = request.context.rstrip()
    tail = request.context[len(context) :]
    return [(context, tail + c) for c in request.continuations]


def _align(entries: list[float | None], generated: int, prompt: list[int], url: str) -> list[float | None]:
    """Per prompt token, its log-probability (index i for prompt[i]; None where the server gives none).

    vLLM and SGLang give one entry per prompt token; llama-cpp-python leaves
    the leading BOS out. Any other count means the server answers for a
    different prompt than it was sent: garbage, refused.
    """
    n_prompt = len(entries) - generated
    if n_prompt == len(prompt):
        return list(entries[:n_prompt])
    if n_prompt == len(prompt) - 1:
        return [None] + list(entries[:n_prompt])
    if len(entries) <= generated + 1:
        raise ModelError(
            f"{url} returned log-probabilities for the generated token only, none for the prompt: "
            "it does not support echo (llama.cpp's llama-server does not); use vLLM, SGLang or "
            "python -m llama_cpp.server --logits_all true"
        )
    raise ModelError(
        f"{url} returned {len(entries)} log-probabilities for a prompt of {len(prompt)} tokens; "
        "its tokenizer or echo does not match what it declared"
    )
