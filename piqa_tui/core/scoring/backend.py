"""The model backend protocol: text in (:class:`ScoreRequest`), summed log-probabilities out.

Backends see only text, so a served model (an OpenAI-compatible endpoint) can
replace the local llama.cpp one without the callers noticing. Which backends
there are, and how configuration chooses one, is the registry's
(``scoring.backends``: one module per backend). The llama.cpp backend lives in
``scoring.llama`` and is imported only when a model is loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol, runtime_checkable

# --------------------------------------------------------------------------- backends


@dataclass(frozen=True, slots=True)
class ScoreRequest:
    """One item as a backend sees it: a context and 2+ continuations to score after it."""

    context: str
    continuations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ContinuationScore:
    """Summed log-probability of a continuation's tokens given the context."""

    loglik: float
    n_tokens: int


@runtime_checkable
class ModelBackend(Protocol):
    """A model that scores continuations. Implementations: ``LlamaBackend`` (behind ``ProcessBackend``),
    ``ServedBackend``, and any a project registers (``scoring.backends``).

    ``load`` may be slow and raises :class:`ModelError` for a model that cannot
    be used; ``score`` is called from a worker thread, never concurrently;
    ``describe`` must be cheap and its ``"identity"`` stable for the same model
    file (it keys the score cache).
    """

    def load(self) -> None:
        """Make the model ready; calling it again is a no-op."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[ContinuationScore, ...]]:
        """Score every continuation of every request, in order."""

    def describe(self) -> dict[str, object]:
        """At least ``identity`` (str) and ``backend`` (str); anything else is for display."""

    def close(self) -> None:
        """Free the model."""


class Repack(StrEnum):
    """Whether llama.cpp may repack the weights for this CPU's fastest kernels (``auto``: not on AMX CPUs)."""

    AUTO = "auto"
    ON = "on"
    OFF = "off"


@dataclass(frozen=True)
class ServerChoice:
    """An OpenAI-compatible server to score through instead of a local file (see ``scoring.served``)."""

    url: str
    model: str | None = None  # None: the first model the server lists
    concurrency: int = 4


LOCAL, SERVED = "llama", "server"  # the built-in backends' registered names (scoring/backends/)


@dataclass(frozen=True)
class ModelChoice:
    """The model to score with, the backend that runs it and where the choice came from; a choice that cannot
    be used says why in ``problem``. ``path``, ``n_gpu_layers`` and ``repack`` are the local model's, ``server``
    the served one's; a backend a project registers keeps its checked config table in ``settings``."""

    path: Path | None
    source: str = ""  # "config", "$PIQA_TUI_MODEL", "packaged"
    n_gpu_layers: int = 0
    problem: str = ""
    repack: Repack = Repack.AUTO  # llama.cpp weight repacking
    server: ServerChoice | None = None  # set: score through this server, ``path`` unused
    origin: str = ""  # how to name the source in a message, e.g. "the config file's model (~/.config/...)"
    backend: str = ""  # the registered backend's name; "" is the server's with ``server`` set, else the local one
    settings: object = None  # that backend's config table, as its kind checked it

    @property
    def kind(self) -> str:
        """The name of the registered backend that scores this choice."""
        return self.backend or (SERVED if self.server is not None else LOCAL)

    @property
    def name(self) -> str:
        if self.server is not None:
            return self.server.model or self.server.url
        if self.path is not None:
            return self.path.name
        return self.backend or "no model"
