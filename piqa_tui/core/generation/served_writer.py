"""A served model writing: any OpenAI-compatible ``/v1/chat/completions`` (vLLM, SGLang, llama.cpp's server,
Ollama, llama-cpp-python's server), through the standard library's HTTP client, streamed as server-sent events.

Structured output is asked for by constraint: OpenAI's ``response_format`` with a ``json_schema`` first; a server
that refuses that form (HTTP 400, 422, or 500 as llama-cpp-python's server answers it) is asked again with the next one it may know — llama-cpp-python's
``json_object`` with a ``schema``, vLLM's ``guided_json``, llama.cpp's ``json_schema`` — and the form that worked
is kept. Whatever the server did with it, the answer is validated on arrival (``schema``); a malformed event, a
stream cut before its end (no ``finish_reason`` and no ``[DONE]``) or output that does not fit is one line on
that item's result, which records nothing. Cancel closes the connection between two events.
"""

from __future__ import annotations

import http.client
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from piqa_tui.core.errors import ModelError
from piqa_tui.core.generation.protocol import (
    STOP_CANCELLED,
    STOP_END,
    STOP_ERROR,
    STOP_LENGTH,
    GenerationRequest,
    GenerationResult,
    ModelSource,
    ResultSink,
    TokenSink,
)
from piqa_tui.core.generation.schema import check_schema, fitted
from piqa_tui.core.scoring.served import ServedBackend

CHAT_PATH = "/v1/chat/completions"
# A server that does not know a structured-output form says so with one of these (llama-cpp-python's server
# fails with 500 on OpenAI's json_schema form: it reads only its own json_object one).
_REFUSED_FORM = (400, 422, 500)


def _openai(schema: Mapping[str, object]) -> dict[str, object]:
    return {"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}}


def _json_object(schema: Mapping[str, object]) -> dict[str, object]:
    return {"response_format": {"type": "json_object", "schema": schema}}


def _guided(schema: Mapping[str, object]) -> dict[str, object]:
    return {"guided_json": schema}


def _llama_server(schema: Mapping[str, object]) -> dict[str, object]:
    return {"json_schema": schema}


SCHEMA_FORMS = (_openai, _json_object, _guided, _llama_server)


class _Refused(Exception):
    """The server refused the request's structured-output form (HTTP 400/422)."""


class ServedWriter:
    """Write through the server at ``url`` (``model``: the served model's name; None: the first it lists),
    ``concurrency`` requests at a time in ``generate_many``."""

    def __init__(self, url: str, model: str | None = None, *, concurrency: int = 4, timeout: float = 300.0) -> None:
        self.server = ServedBackend(url, model, concurrency=concurrency, timeout=timeout)  # checks the URL
        self.url = self.server.url
        self.concurrency = concurrency
        self.timeout = timeout
        self._form = 0  # the structured-output form this server took last (an index in SCHEMA_FORMS)
        self._model: str | None = model

    # -- protocol ---------------------------------------------------------------------

    def load(self) -> None:
        if self._model is None:
            self._model = str(self.server.describe()["model"])

    def source(self) -> ModelSource:
        self.load()
        return ModelSource(str(self._model), server=self.url, backend="served")

    def describe(self) -> dict[str, object]:
        self.load()
        return {"backend": "served", "model": self._model, "url": self.url, "concurrency": self.concurrency}

    def close(self) -> None:
        """Nothing is held between calls."""

    def generate(
        self,
        request: GenerationRequest,
        on_token: TokenSink | None = None,
        cancel: threading.Event | None = None,
    ) -> GenerationResult:
        self.load()
        if request.schema is not None:
            check_schema(request.schema)
        if cancel is not None and cancel.is_set():  # a batch cancelled before this request's turn
            return GenerationResult("", stop=STOP_CANCELLED, key=request.key)
        pieces: list[str] = []
        try:
            stop, tokens = self._stream(request, pieces, on_token, cancel)
        except _Cut as exc:
            return GenerationResult("".join(pieces), stop=STOP_ERROR, error=str(exc), key=request.key)
        text = "".join(pieces)
        if stop == STOP_CANCELLED or request.schema is None:
            return GenerationResult(text, tokens=tokens, stop=stop, key=request.key)
        data, error = fitted(text, request.schema)
        if error is not None:
            return GenerationResult(text, tokens=tokens, stop=STOP_ERROR, error=error, key=request.key)
        return GenerationResult(text, data=data, tokens=tokens, stop=stop, key=request.key)

    def generate_many(
        self,
        requests: Sequence[GenerationRequest],
        on_result: ResultSink | None = None,
        cancel: threading.Event | None = None,
    ) -> list[GenerationResult]:
        """The requests, ``concurrency`` at a time (the server batches them as its parallel sequences)."""
        self.load()
        results: list[GenerationResult | None] = [None] * len(requests)
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="piqa-write") as pool:
            futures = {pool.submit(self.generate, r, None, cancel): i for i, r in enumerate(requests)}
            for future in as_completed(futures):
                index = futures[future]
                results[index] = future.result()
                if on_result is not None:
                    on_result(index, results[index])  # type: ignore[arg-type]
        return [r or GenerationResult("", stop=STOP_CANCELLED, key=q.key) for r, q in zip(results, requests)]

    # -- one request ------------------------------------------------------------------

    def _stream(
        self,
        request: GenerationRequest,
        pieces: list[str],
        on_token: TokenSink | None,
        cancel: threading.Event | None,
    ) -> tuple[str, int]:
        """Stream one answer into ``pieces``; (why it stopped, tokens counted)."""
        forms = range(self._form, len(SCHEMA_FORMS)) if request.schema is not None else range(1)
        for form in forms:
            try:
                response = self._open(self._body(request, form))
            except _Refused:
                continue
            self._form = form if request.schema is not None else self._form
            with response:
                return _read_events(response, pieces, on_token, cancel, self.url)
        raise ModelError(f"{self.url} refused every form of structured output this program knows")

    def _body(self, request: GenerationRequest, form: int) -> dict[str, object]:
        body: dict[str, object] = {
            "model": self._model,
            "messages": [{"role": t.role, "content": t.content} for t in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "seed": request.seed,
            "stream": True,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if request.schema is not None:
            body |= SCHEMA_FORMS[form](request.schema)
        return body

    def _open(self, body: Mapping[str, object]) -> Any:
        data = json.dumps(body, allow_nan=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        http = urllib.request.Request(self.url + CHAT_PATH, data=data, headers=headers)
        try:
            return urllib.request.urlopen(http, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            if exc.code in _REFUSED_FORM and (
                "response_format" in body or "guided_json" in body or "json_schema" in body
            ):
                raise _Refused() from None
            raise ModelError(f"{self.url}{CHAT_PATH} answered HTTP {exc.code}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ModelError(
                f"cannot reach the model server {self.url} ({reason}); check the URL and that it runs"
            ) from None


class _Cut(Exception):
    """The stream broke: a malformed event or an end before the answer's (the message is one line)."""


def _read_events(
    response: Any, pieces: list[str], on_token: TokenSink | None, cancel: threading.Event | None, url: str
) -> tuple[str, int]:
    """Read the server-sent events of one answer; (why it stopped, tokens counted)."""
    tokens = 0
    for event in _events(response, url):
        if cancel is not None and cancel.is_set():
            return STOP_CANCELLED, tokens
        if event is None:  # [DONE]
            raise _Cut(f"{url} ended the stream before the answer said why it stopped")
        try:
            choice = event["choices"][0]
            delta = choice.get("delta") or {}
            piece = delta.get("content") or ""
            finish = choice.get("finish_reason")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise _Cut(f"{url} sent a stream event that is not a chat completion chunk") from None
        if not isinstance(piece, str):
            raise _Cut(f"{url} sent a stream event whose content is not text")
        if piece:
            tokens += 1
            pieces.append(piece)
            if on_token is not None:
                on_token(piece)
        if finish:
            return (STOP_LENGTH if finish == "length" else STOP_END), tokens
    raise _Cut(f"{url} stopped mid-stream, before the answer's end; nothing was recorded")


def _events(response: Any, url: str) -> Iterator[dict[str, Any] | None]:
    """The JSON of each ``data:`` event (None for ``[DONE]``), in order."""
    try:
        for raw in response:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:"):
                continue  # blank separators, comments, event names
            payload = line[5:].strip()
            if payload == "[DONE]":
                yield None
                return
            try:
                yield json.loads(payload)
            except ValueError:
                raise _Cut(f"{url} sent a stream event that is not JSON: {payload[:60]!r}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise _Cut(f"{url} stopped mid-stream ({exc}); nothing was recorded") from None
