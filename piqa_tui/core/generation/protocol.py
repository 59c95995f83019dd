"""What a generation backend is to its callers: chat turns in, text (and JSON that fits a schema) out.

Every backend (the local GGUF model in a child process, an OpenAI-compatible server) speaks ``GenerationBackend``,
so a job (draft, translate, suggest) never knows which one runs it. A request is plain data (``GenerationRequest``:
chat turns, an optional JSON schema the output is constrained to, the sampling parameters); a result is plain data
too (``GenerationResult``): its text, the JSON parsed from it when a schema was asked for, how many tokens came, why
it stopped, and — when the output does not fit — one line saying so (``error``), in which case the caller records
nothing. A backend that cannot run at all (no model, no server) raises ``ModelError`` (one line).

``Provenance`` is what a job records beside every suggestion it makes: which model (file and SHA-256, or server
and its model name), which template (name and hash), the parameters, the seed, when and who ran it.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from piqa_tui.core import strict_json

ROLES = ("system", "user", "assistant")

# Why a generation stopped.
STOP_END = "stop"  # the model ended its turn (or hit a stop string)
STOP_LENGTH = "length"  # max_tokens reached
STOP_CANCELLED = "cancelled"  # the caller's cancel event was set
STOP_ERROR = "error"  # the output does not fit (``GenerationResult.error`` says how); nothing is recorded

TokenSink = Callable[[str], None]  # receives each piece of text as it is generated


@dataclass(frozen=True, slots=True)
class ChatTurn:
    """One turn of a chat: ``role`` is system, user or assistant."""

    role: str
    content: str


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """One generation: the chat so far, and what the answer must be.

    ``schema``: a JSON schema the answer is constrained to (a llama.cpp grammar locally, ``response_format`` on a
    server) and validated against on arrival. ``temperature`` 0 is greedy (deterministic); ``seed`` fixes the
    sampler otherwise. ``key`` is the caller's name for the request (an item id), carried to its result.
    """

    messages: tuple[ChatTurn, ...]
    schema: Mapping[str, object] | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0
    stop: tuple[str, ...] = ()
    key: str = ""


@dataclass(frozen=True, slots=True)
class GenerationResult:
    """What came back for one request. ``data`` is the parsed JSON when the request had a schema and the text
    fits it (None otherwise); ``error`` is one line when it does not fit (then ``stop`` is ``STOP_ERROR``)."""

    text: str
    data: object | None = None
    tokens: int = 0
    stop: str = STOP_END
    error: str | None = None
    key: str = ""

    @property
    def ok(self) -> bool:
        """Whether this result may be recorded: complete, and fitting its schema when it had one."""
        return self.error is None and self.stop in (STOP_END, STOP_LENGTH)


ResultSink = Callable[[int, GenerationResult], None]  # (index of the request, its result) as each one finishes


@runtime_checkable
class GenerationBackend(Protocol):
    """A model that writes. ``load`` may be slow and raises ``ModelError`` (one line) for a model or server that
    cannot be used; ``generate`` and ``generate_many`` are called from a worker thread, one call at a time.

    ``generate`` streams each piece of text to ``on_token`` as it comes and stops early (``STOP_CANCELLED``)
    when ``cancel`` is set. ``generate_many`` runs the requests as parallel sequences where the backend can
    (one llama.cpp context, several sequences; concurrent requests to a server), calls ``on_result`` as each
    finishes (in any order) and returns the results in the requests' order; a cancelled run returns the
    unfinished ones with ``STOP_CANCELLED``. ``source`` names the model for ``Provenance``.
    """

    def load(self) -> None: ...

    def generate(
        self,
        request: GenerationRequest,
        on_token: TokenSink | None = None,
        cancel: threading.Event | None = None,
    ) -> GenerationResult: ...

    def generate_many(
        self,
        requests: Sequence[GenerationRequest],
        on_result: ResultSink | None = None,
        cancel: threading.Event | None = None,
    ) -> list[GenerationResult]: ...

    def source(self) -> ModelSource: ...

    def describe(self) -> dict[str, object]: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ModelSource:
    """Which model wrote: a local file (its name and SHA-256) or a server (its URL and the model name it serves)."""

    model: str  # the file's name, or the served model's name
    sha256: str = ""  # of the whole model file ("" for a server)
    server: str = ""  # the server's base URL ("" for a local file)
    backend: str = ""  # the backend kind's name: "local", "served"


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a suggestion came from; recorded as strict JSON with every suggestion (``to_json``/``from_json``)."""

    source: ModelSource
    template: str = ""  # the job's template name ("" where none: classify)
    template_sha256: str = ""
    params: Mapping[str, object] = field(default_factory=dict)  # temperature, max_tokens, values offered, …
    seed: int | None = None
    time: str = ""  # UTC, ISO 8601
    by: str = ""  # who ran the job
    job: str = ""  # draft, translate, suggest, classify

    @classmethod
    def now(cls, source: ModelSource, by: str, job: str, **rest: object) -> Provenance:
        """Provenance stamped with this instant."""
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return cls(source=source, by=by, job=job, time=stamp, **rest)  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["params"] = dict(self.params)
        return data

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> Provenance:
        """The provenance ``to_json`` wrote; ``ValueError`` (one line) for anything else."""
        data = strict_json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("source"), dict):
            raise ValueError("the provenance is not a JSON object with a source")
        source = data["source"]
        try:
            model_source = ModelSource(**{k: str(v) for k, v in source.items()})
            rest = {k: v for k, v in data.items() if k != "source"}
            return cls(source=model_source, **rest)
        except TypeError:
            raise ValueError("the provenance has fields this program does not know") from None


def text_sha256(text: str) -> str:
    """The SHA-256 of a text (a template's source), as provenance records it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
